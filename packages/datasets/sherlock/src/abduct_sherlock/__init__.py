"""Sherlock (Hessel et al., ECCV 2022) for abduct: loader, validator, tasks, official-format
scoring, leaderboard submission and a synthetic corpus. Never imports torch."""

from abduct_sherlock.loader import load_instances
from abduct_sherlock.records import SherlockInstance

__all__ = ["SherlockInstance", "load_instances"]
