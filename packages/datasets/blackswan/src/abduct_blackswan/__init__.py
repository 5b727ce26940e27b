"""BlackSwan (abductive and defeasible video reasoning, CVPR 2025; the BlackSwanSuite repos on the
Hugging Face hub) for abduct: its three repos' questions, the MCQ and Y/N tasks, the challenge's
submission file."""

from abduct_blackswan.clips import Clips
from abduct_blackswan.records import GenQuestion, McqQuestion, YnLayout, YnQuestion

__all__ = ["Clips", "GenQuestion", "McqQuestion", "YnLayout", "YnQuestion"]
