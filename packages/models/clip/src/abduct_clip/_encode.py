"""Encoding with an open_clip model: image batches from loader workers, widescreen views
averaged before normalisation, bf16 autocast on GPUs and fp32 on CPUs."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import torch

from abduct import Settings, VisualInput
from abduct_clip._imaging import Preprocess, average_views, image_loader, raise_if_error


def resolve_device(device: str | None) -> str:
    """``--device`` checked by the core, ``auto`` (or nothing) being cuda when available."""
    return Settings(device=device or "auto").torch_device()


def autocast(device: torch.device) -> contextlib.AbstractContextManager[None]:
    """bf16 autocast on GPUs; CPU stays in fp32 (bf16 matmuls there are slow and lossy)."""
    if device.type == "cuda":
        return torch.autocast("cuda", dtype=torch.bfloat16)
    return contextlib.nullcontext()


@contextlib.contextmanager
def cpu_threads_beside_workers(workers: int, device: torch.device) -> Iterator[None]:
    """Leave the loader workers their cores during training: on a small CPU, compute threads
    competing with busy augmentation workers spin at their barriers (3x slower measured on 2 cores)."""
    if device.type != "cpu" or workers <= 0:
        yield
        return
    before = torch.get_num_threads()
    torch.set_num_threads(max(1, min(before, (os.cpu_count() or 1) - workers)))
    try:
        yield
    finally:
        torch.set_num_threads(before)


def image_features(model: Any, views: torch.Tensor, owner: torch.Tensor, count: int) -> torch.Tensor:
    """Normalised embeddings of ``count`` items from their stacked views (keeps gradients)."""
    features = model.encode_image(views).float()
    return torch.nn.functional.normalize(average_views(features, owner, count), dim=-1)


def text_features(model: Any, tokens: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.normalize(model.encode_text(tokens).float(), dim=-1)


@torch.inference_mode()
def encode_images(
    model: torch.nn.Module,
    preprocess: Preprocess,
    visuals: Sequence[VisualInput],
    *,
    batch_size: int,
    workers: int,
    device: torch.device,
) -> torch.Tensor:
    out = []
    # Unlike training, evaluation keeps every compute thread: the workers only prefetch and
    # mostly wait while a full-size model computes.
    for batch in image_loader(visuals, preprocess, batch_size, workers):
        raise_if_error(batch)
        views, owner = batch
        with autocast(device):
            out.append(image_features(model, views.to(device, non_blocking=True), owner, int(owner.max()) + 1).cpu())
    return torch.cat(out) if out else torch.zeros((0, 0))


@torch.inference_mode()
def encode_texts(
    model: torch.nn.Module,
    tokenizer: Callable[[list[str]], torch.Tensor],
    texts: Sequence[str],
    *,
    batch_size: int,
    device: torch.device,
) -> torch.Tensor:
    out = []
    for start in range(0, len(texts), batch_size):
        tokens = tokenizer(list(texts[start : start + batch_size])).to(device)
        with autocast(device):
            out.append(text_features(model, tokens).cpu())
    return torch.cat(out) if out else torch.zeros((0, 0))
