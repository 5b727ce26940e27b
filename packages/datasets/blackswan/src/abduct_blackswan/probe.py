"""``blackswan-colour``: a probe that reads colours, to show that the clips reach a model.

It scores a text by the colour it names: the share of pixels of that colour (``colours.PALETTE``)
in the frames it is shown, at most over its clips. A ``yes`` or ``no`` answer is scored on the
colour the input's context names (the hypothesis): ``yes`` by that colour's share, ``no`` by how
much more of any other colour is seen. A text naming no colour scores 0, and so does every text
of an input without video (``setup=text``): all ties, the first candidate.

On the synthetic corpus (``synth.py``) this beats random and the text-only row, and a Detective
question of a hard video is at chance for it: the colour shows only in the event the Detective
does not see. On real BlackSwan videos it means nothing; it is a check of the pipeline.

Frames come from abduct-video's sampler (``frames`` uniform frames a clip, in a worker), every
clip of a call decoded once however many questions share it, and remembered for the next call.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator, Sequence
from typing import Annotated, Any

import numpy as np

from abduct import Range, Settings, Spec, VisualInput
from abduct.kit import load_rgb
from abduct_blackswan.colours import PALETTE, named

NEAR = 70.0  # RGB distance within which a pixel is of a palette colour (and nearer it than any other)
PROTOTYPES = np.array(list(PALETTE.values()), dtype=np.float32)


def colour_shares(frames: np.ndarray) -> dict[str, float]:
    """Per palette colour, the share of pixels of ``frames`` (``[T, H, W, 3]``) that are that colour."""
    pixels = frames.reshape(-1, 3).astype(np.float32)
    distance = np.linalg.norm(pixels[:, None, :] - PROTOTYPES[None, :, :], axis=2)
    nearest = distance.argmin(axis=1)
    close = distance[np.arange(len(pixels)), nearest] < NEAR
    counts = np.bincount(nearest[close], minlength=len(PALETTE))
    return {name: float(counts[i]) / max(1, len(pixels)) for i, name in enumerate(PALETTE)}


def media_parts(visual: VisualInput) -> Iterator[VisualInput]:
    if visual.media is not None:
        yield visual
    for other in visual.related:
        yield from media_parts(other)


class ColourProbe:
    accepts = frozenset({"image", "video", "context", "related"})

    def __init__(self, frames: int = 4) -> None:
        self.frames = frames
        self.fingerprint = f"blackswan-colour-v1,frames={frames}"
        self._sampler: Any = None
        self._seen: dict[tuple[str, str], dict[str, float]] = {}

    def _sampler_for(self) -> Any:
        if self._sampler is None:
            from abduct_video import FrameSampler, SamplingSettings

            backend = "decord" if importlib.util.find_spec("decord") is not None else "pyav"
            self._sampler = FrameSampler(SamplingSettings(frames_per_span=self.frames), backend=backend, workers=1)
        return self._sampler

    def _read(self, visuals: Sequence[VisualInput]) -> None:
        """Decode every clip of ``visuals`` not seen yet, in one call: each once."""
        wanted = {(p.kind, str(p.media)) for v in visuals for p in media_parts(v)} - set(self._seen)
        videos = sorted(path for kind, path in wanted if kind == "video")
        if videos:
            decoded = self._sampler_for().frames_many([VisualInput.video(path) for path in videos])
            for path, (frames,) in zip(videos, decoded):
                self._seen["video", path] = colour_shares(frames)
        for kind, path in wanted:
            if kind == "image":
                self._seen[kind, path] = colour_shares(np.asarray(load_rgb(path))[None])

    def _shares(self, visual: VisualInput) -> dict[str, float]:
        """Each colour's largest share over the input's clips (0 without media)."""
        out = dict.fromkeys(PALETTE, 0.0)
        for part in media_parts(visual):
            for name, share in self._seen[part.kind, str(part.media)].items():
                out[name] = max(out[name], share)
        return out

    def score(self, visuals: Sequence[VisualInput], texts: Sequence[str]) -> np.ndarray:
        if len(visuals) != len(texts):
            raise ValueError("score() needs as many visuals as texts")
        self._read(visuals)
        scores = []
        for visual, text in zip(visuals, texts):
            shares = self._shares(visual)
            answer = text.strip().lower()
            if answer in ("yes", "no"):
                claimed = max((shares[c] for c in named(visual.context or "")), default=0.0)
                scores.append(claimed if answer == "yes" else max(shares.values()) - claimed)
            else:
                scores.append(max((shares[c] for c in named(text)), default=0.0))
        return np.array(scores, dtype=np.float64)


def make_colour_probe(spec: Spec, settings: Settings, *, frames: Annotated[int, Range(ge=1, le=64)] = 4) -> ColourProbe:
    """``blackswan-colour[,frames=N]``: N uniform frames a clip (default 4)."""
    return ColourProbe(frames)
