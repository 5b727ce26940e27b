"""CLIP models for abduct: a region-aware dual-encoder scorer on open_clip, contrastive
fine-tuning (one or many GPUs) and the built-in demo.

Importing this package does not import torch; the heavy modules load on first use.
"""

from abduct_clip.settings import ClipSettings, parse_clip_spec

__all__ = ["ClipSettings", "parse_clip_spec"]
__version__ = "0.1.0"
