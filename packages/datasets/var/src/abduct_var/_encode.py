"""Event embeddings: a few frames of each event through a CLIP image tower, averaged.

Frames come from ``abduct_video.FrameSampler`` (uniform frames per span, decord or PyAV, clipped
spans warned once per video, decoded in a worker process that a video stalling it for
``timeout`` seconds costs a VideoError, never a hung run); each frame is centre-cropped to a square and preprocessed as the
CLIP model expects; an event is the L2-normalised mean of its frames' normalised embeddings.
Spans past a video's end are clipped to its last frame with one
SpanClippedWarning per video (abduct-video's behaviour). The tower is frozen (eval mode, no gradients); embeddings are kept per (video, span) in memory.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from abduct import VisualInput

Event = tuple[str, tuple[float, float]]


class EventEncoder:
    """``encode(events)`` -> ``[n, dim]`` float32 unit vectors, one per (video path, span)."""

    def __init__(self, spec: str = "clip:tiny", *, frames: int = 4, seed: int = 0, device: str = "cpu",
                 backend: str = "pyav", workers: int = 1, timeout: float = 120.0) -> None:
        from abduct_video import FrameSampler, SamplingSettings

        self.spec, self.frames, self.device = spec, frames, torch.device(device)
        from abduct_clip.towers import frozen_tower

        self.loaded = frozen_tower(spec, seed, str(self.device))
        self.sampler = FrameSampler(SamplingSettings(mode="uniform", frames_per_span=frames), backend=backend,
                                    workers=workers, timeout=timeout)
        self.dim = int(self.loaded.model.visual.output_dim)
        self._memo: dict[Event, np.ndarray] = {}

    def visual_state(self) -> dict[str, torch.Tensor]:
        return {k: v.detach().cpu() for k, v in self.loaded.model.visual.state_dict().items()}

    def close(self) -> None:
        self.sampler.close()

    def _frame_tensor(self, frame: np.ndarray) -> torch.Tensor:
        from PIL import Image

        from abduct_clip.towers import square_views

        view = square_views(Image.fromarray(frame), "center")[0]
        tensor: torch.Tensor = self.loaded.preprocess.to_tensor(view)
        return tensor

    @torch.inference_mode()
    def encode(self, events: Sequence[Event]) -> np.ndarray:
        todo = list(dict.fromkeys(e for e in events if e not in self._memo))
        if todo:
            # a span past a video's end is clipped by the sampler, with one warning per video
            arrays = self.sampler.sample_many([(path, [span]) for path, span in todo])
            for start in range(0, len(todo), 64):
                chunk = todo[start:start + 64]
                stacks = [arrays[start + i][0] for i in range(len(chunk))]
                views = torch.stack([self._frame_tensor(f) for frames in stacks for f in frames]).to(self.device)
                features = torch.nn.functional.normalize(self.loaded.model.encode_image(views).float(), dim=-1)
                owner = torch.cat([torch.full((len(frames),), i) for i, frames in enumerate(stacks)]).to(self.device)
                sums = torch.zeros((len(chunk), features.shape[1]), device=self.device).index_add_(0, owner, features)
                means = torch.nn.functional.normalize(sums, dim=-1).cpu().numpy().astype(np.float32)
                self._memo.update(zip(chunk, means))
        if not events:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([self._memo[e] for e in events])


def slot_event(slot: VisualInput) -> Event | None:
    """The (video, span) an event slot shows; None for the masked slot."""
    if slot.media is None:
        return None
    span = slot.spans[0] if slot.spans else (0.0, float("inf"))
    return (slot.media, span)
