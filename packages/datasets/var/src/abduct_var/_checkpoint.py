"""Reading a ``var-gen`` checkpoint: its structure and metadata are checked before any tensor is
trusted, so a damaged or hand-edited file is one line naming the file and field, not a
traceback from deep inside torch (a vocabulary missing, a size written as text or NaN, a list
where a mapping belongs, weights of another shape)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from abduct import DataError
from abduct_modelkit import load_weights_only
from abduct_var._net import HEADS, SPECIALS

FORMAT = "abduct-var-gen/1"
_SIZES = ("width", "clip_dim", "frames")  # positive integers
_MAPPINGS = ("model_state_dict", "visual_state")


@dataclass(frozen=True)
class GeneratorCheckpoint:
    file: Path
    vocab: list[str]
    width: int
    clip_dim: int
    frames: int
    seed: int
    encoder: str
    model_state: dict[str, torch.Tensor]
    visual_state: dict[str, torch.Tensor]
    standard: tuple[torch.Tensor, torch.Tensor]


def _integer(file: Path, meta: dict[str, Any], key: str, *, positive: bool) -> int:
    value = meta.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or (positive and value < 1):
        wanted = "a positive integer" if positive else "an integer"
        raise DataError(f"is {value!r}, expected {wanted}", file=file, field=f"meta.{key}")
    return value


def _vocab(file: Path, meta: dict[str, Any]) -> list[str]:
    vocab = meta.get("vocab")
    if vocab is None:
        raise DataError("is missing: the checkpoint has no vocabulary to write words with", file=file,
                        field="meta.vocab")
    if not isinstance(vocab, list) or not all(isinstance(w, str) for w in vocab):
        raise DataError(f"is a {type(vocab).__name__}, expected a list of words", file=file, field="meta.vocab")
    if tuple(vocab[: len(SPECIALS)]) != SPECIALS or len(vocab) == len(SPECIALS):
        raise DataError(f"must start with {', '.join(SPECIALS)} and hold words after them", file=file,
                        field="meta.vocab")
    return vocab


def _tensors(file: Path, state: dict[str, Any], key: str) -> dict[str, torch.Tensor]:
    value = state.get(key)
    if not isinstance(value, dict) or not all(isinstance(v, torch.Tensor) for v in value.values()):
        raise DataError(f"is a {type(value).__name__}, expected a mapping of names to tensors", file=file, field=key)
    for name, tensor in value.items():  # NaN weights would write words, all of them meaningless
        if tensor.is_floating_point() and not bool(torch.isfinite(tensor).all()):
            raise DataError("holds NaN or infinite values", file=file, field=f"{key}.{name}")
    return value


def _feature_vector(file: Path, state: dict[str, Any], key: str, dim: int) -> torch.Tensor:
    value = state.get(key)
    if not isinstance(value, torch.Tensor) or value.shape[-1:] != (dim,) or not bool(torch.isfinite(value).all()):
        shown = list(value.shape) if isinstance(value, torch.Tensor) else type(value).__name__
        raise DataError(f"is {shown}, expected {dim} finite numbers (meta.clip_dim)", file=file, field=key)
    return value


def read_checkpoint(file: Path) -> GeneratorCheckpoint:
    """The checkpoint at ``file``, every field checked (DataError naming the file and field)."""
    return check_checkpoint(file, load_weights_only(file, loader="var-gen checkpoint"))


def check_checkpoint(file: Path, state: Any) -> GeneratorCheckpoint:
    """``state`` (loaded from ``file``) as a generator checkpoint, every field checked."""
    if not isinstance(state, dict):
        raise DataError(f"holds a {type(state).__name__}, not a checkpoint of `abduct train var`", file=file)
    meta = state.get("meta")
    if not isinstance(meta, dict):
        raise DataError(f"is a {type(meta).__name__}, expected a mapping", file=file, field="meta")
    if meta.get("format") != FORMAT:
        raise DataError(f"is {meta.get('format')!r}: not a checkpoint of `abduct train var` ({FORMAT})", file=file,
                        field="meta.format")
    width, clip_dim, frames = (_integer(file, meta, key, positive=True) for key in _SIZES)
    encoder = meta.get("encoder")
    if not isinstance(encoder, str):
        raise DataError(f"is {encoder!r}, expected a clip model spec", file=file, field="meta.encoder")
    model_state, visual_state = (_tensors(file, state, key) for key in _MAPPINGS)
    standard = (_feature_vector(file, state, "feature_mean", clip_dim), _feature_vector(file, state, "feature_std", clip_dim))
    vocab = _vocab(file, meta)
    if width % HEADS:
        raise DataError(f"is {width}, not a multiple of the generator's {HEADS} attention heads", file=file,
                        field="meta.width")
    # the sizes are checked against the weights before a model of those sizes is built (a
    # hand-edited width of 10**9 would otherwise allocate first and fail later)
    for key, shape in (("project.weight", (width, clip_dim)), ("embed.weight", (len(vocab), width))):
        found = model_state.get(key)
        if found is None or tuple(found.shape) != shape:
            shown = "missing" if found is None else list(found.shape)
            raise DataError(f"is {shown}, but meta (vocab, width, clip_dim) says {list(shape)}", file=file,
                            field=f"model_state_dict.{key}")
    return GeneratorCheckpoint(file, vocab, width, clip_dim, frames, _integer(file, meta, "seed", positive=False),
                               encoder, model_state, visual_state, standard)


def load_into(module: torch.nn.Module, weights: dict[str, torch.Tensor], file: Path, field: str) -> None:
    """``module.load_state_dict(weights)``, a mismatch one line naming the field (torch's message
    lists every tensor over many lines)."""
    try:
        module.load_state_dict(weights)
    except RuntimeError as exc:
        first = next((line.strip() for line in str(exc).splitlines()[1:] if line.strip()), str(exc))
        raise DataError(f"does not fit the model its metadata describes ({first[:160]})", file=file,
                        field=field) from None


def resume_step(file: Path, state: dict[str, Any], optimizer: torch.optim.Optimizer) -> int:
    """The step a training checkpoint stopped at, its optimizer state loaded into ``optimizer``."""
    step = state.get("step")
    if isinstance(step, bool) or not isinstance(step, int) or step < 0:
        raise DataError(f"is {step!r}, expected a step count", file=file, field="step")
    try:
        optimizer.load_state_dict(state.get("optimizer"))  # type: ignore[arg-type]
    except (ValueError, TypeError, KeyError, RuntimeError) as exc:
        raise DataError(f"does not fit this model's optimizer ({str(exc).splitlines()[0][:120]})", file=file,
                        field="optimizer") from None
    return step
