"""``var-retrieval,data=DIR``: the nearest training sentence by CLIP frame embedding.

Its own nearest neighbour rather than the generic ``retrieve:clip:...``: CLIP scores (image,
text) pairs through its text tower, which sees no video chain, while this baseline compares
videos with videos. An explanation request (a chain with a masked slot) is answered with the
hypothesis sentence of the training example whose premise events' mean embedding is closest;
a one-event request with the sentence of the closest training event. Ties go to the first
in training-file order.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Annotated

import numpy as np

from abduct import AbductError, Decoding, GenerationRequest, Range, Settings, Spec, TextPool
from abduct_var._encode import EventEncoder
from abduct_var._samples import samples_for_requests, training_samples
from abduct_var.loader import load_split


def _unit(rows: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(rows, axis=-1, keepdims=True)
    return rows / np.where(norms > 0, norms, 1.0)


def _chain_vectors(rows: Sequence[Sequence[int]], table: np.ndarray) -> np.ndarray:
    return _unit(np.stack([table[[r for r in chain if r >= 0]].mean(axis=0) for chain in rows]))


class VarRetrieval:
    accepts = frozenset({"video", "related", "context"})
    needs = frozenset({"video"})

    def __init__(self, data: Path, *, encoder: str = "clip:tiny", frames: int = 4, videos: Path | None = None,
                 seed: int = 0, device: str = "cpu", backend: str = "pyav", decode_timeout: float = 120.0) -> None:
        examples, file = load_split(data, "train")
        samples, events = training_samples(examples, videos or data / "videos")
        self.encoder = EventEncoder(encoder, frames=frames, seed=seed, device=device, backend=backend,
                                    timeout=decode_timeout)
        table = self.encoder.encode(events)
        chains = [s for s in samples if -1 in s.rows]
        singles = [s for s in samples if -1 not in s.rows]
        self.chain_keys, self.chain_texts = _chain_vectors([s.rows for s in chains], table), [s.sentence.strip()
                                                                                             for s in chains]
        self.event_keys = table[[s.rows[0] for s in singles]] if singles else np.zeros((0, table.shape[1]))
        self.event_texts = [s.sentence.strip() for s in singles]
        self.fingerprint = f"var-retrieval|{encoder}|frames={frames}|seed={seed}|{file.name}|{len(samples)}"

    def generate(self, requests: Sequence[GenerationRequest], decoding: Decoding, pool: TextPool | None) -> list[str]:
        samples, events = samples_for_requests(requests)
        table = self.encoder.encode(events)
        out = []
        for s in samples:
            if -1 in s.rows:
                keys, texts, query = self.chain_keys, self.chain_texts, _chain_vectors([s.rows], table)[0]
            else:
                keys, texts, query = self.event_keys, self.event_texts, table[s.rows[0]]
            if not texts:
                raise AbductError("var-retrieval: the training split offers nothing to retrieve for this request")
            out.append(texts[int(np.argmax(keys @ query))])
        return out


def make_retrieval(spec: Spec, settings: Settings, *, data: Path | None = None, encoder: str = "clip:tiny",
                   frames: Annotated[int, Range(ge=1)] = 4, videos: Path | None = None, backend: str = "pyav",
                   decode_timeout: Annotated[float, Range(gt=0)] = 120.0) -> VarRetrieval:
    """``var-retrieval,data=DIR[,encoder=clip:tiny][,frames=4][,videos=DIR][,backend=pyav|decord]
    [,decode_timeout=120]`` (seconds one video may take to decode)."""
    if data is None:
        raise AbductError("var-retrieval needs the dataset directory holding the training split: "
                          "var-retrieval,data=DIR")
    return VarRetrieval(data, encoder=encoder, frames=frames, videos=videos, seed=settings.seed,
                        device=settings.torch_device(), backend=backend, decode_timeout=decode_timeout)
