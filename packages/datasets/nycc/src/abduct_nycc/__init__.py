"""The New Yorker Caption Contest benchmark (Hessel et al., ACL 2023) for abduct."""

from abduct_nycc.records import NyccItem

__all__ = ["NyccItem"]
