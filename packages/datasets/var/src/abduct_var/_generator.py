"""``var-gen:CKPT``: the generator ``abduct train var`` wrote, as an abduct model (it generates)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Annotated

import torch

from abduct import AbductError, DataError, Decoding, GenerationRequest, Range, Settings, Spec, TextPool
from abduct.kit import sha256_file
from abduct_modelkit import one_thread_if
from abduct_var._checkpoint import load_into, read_checkpoint
from abduct_var._encode import EventEncoder
from abduct_var._net import ChainGenerator, decode_words
from abduct_var._samples import collate, embed, samples_for_requests


class VarGenerator:
    """Greedy decoding of the trained chain generator (the decoding options' length applies)."""

    accepts = frozenset({"video", "related", "context"})
    needs = frozenset({"video"})

    def __init__(self, checkpoint: Path, *, device: str = "cpu", backend: str = "pyav",
                 decode_timeout: float = 120.0) -> None:
        loaded = read_checkpoint(checkpoint)
        self.device = torch.device(device)
        self.vocab = loaded.vocab
        self.encoder = EventEncoder(loaded.encoder, frames=loaded.frames, seed=loaded.seed, device=device,
                                    backend=backend, timeout=decode_timeout)
        try:  # the checkpoint carries the tower it was trained on
            load_into(self.encoder.loaded.model.visual, loaded.visual_state, checkpoint, "visual_state")
            if self.encoder.dim != loaded.clip_dim:
                raise DataError(f"is {loaded.clip_dim}, but {loaded.encoder} gives {self.encoder.dim}",
                                file=checkpoint, field="meta.clip_dim")
        except DataError:
            self.encoder.close()
            raise
        self.standard = loaded.standard
        self.model = ChainGenerator(loaded.clip_dim, len(self.vocab), loaded.width)
        load_into(self.model, loaded.model_state, checkpoint, "model_state_dict")
        self.model.to(self.device).eval()
        self.fingerprint = f"var-gen|sha256:{sha256_file(checkpoint)}"

    def generate(self, requests: Sequence[GenerationRequest], decoding: Decoding, pool: TextPool | None) -> list[str]:
        if decoding.do_sample or decoding.num_beams != 1:
            raise AbductError("var-gen decodes greedily (no sampling, one beam)")
        samples, events = samples_for_requests(requests)
        batch = {k: v.to(self.device) for k, v in collate(samples, embed(self.encoder, events, self.standard)).items()}
        with torch.inference_mode(), one_thread_if(self.device.type == "cpu"):  # a tiny network: one thread pays best
            memory = self.model.memory(batch["events"], batch["masked"], batch["target"], batch["padding"])
            ids = self.model.greedy(memory, batch["padding"], max_words=min(decoding.max_new_tokens + 1, 24))
        return [decode_words(row, self.vocab) for row in ids]


def make_generator(spec: Spec, settings: Settings, *, backend: str = "pyav",
                   decode_timeout: Annotated[float, Range(gt=0)] = 120.0) -> VarGenerator:
    """``var-gen:CKPT[,backend=pyav|decord][,decode_timeout=120]`` (seconds one video may take to decode)."""
    if not spec.argument:
        raise AbductError("var-gen needs a checkpoint: var-gen:OUT/last.pt (from `abduct train var`)")
    return VarGenerator(Path(spec.argument), device=settings.torch_device(), backend=backend,
                        decode_timeout=decode_timeout)
