"""abduct-t5: T5 as a text-only clue -> inference model (scores and generates)."""

from __future__ import annotations

__all__ = ["__version__"]
__version__ = "0.2.0"
