"""CLIP models for abduct: a region-aware dual-encoder scorer on open_clip, contrastive
fine-tuning (one or many GPUs) on any dataset that offers training pairs, and the built-in demo.

Importing this package does not import torch; the heavy modules load on first use.
"""

from abduct_clip.settings import ClipSettings, clip_settings

__all__ = ["ClipSettings", "clip_settings"]
__version__ = "0.2.0"
