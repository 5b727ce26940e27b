"""Building an open_clip model from settings: architectures, pretrained tags, local
checkpoints (open_clip, OpenAI and Sherlock formats; safetensors), always loaded safely."""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import open_clip  # type: ignore[import-untyped]
import torch
from open_clip.model import build_model_from_openai_state_dict, resize_pos_embed  # type: ignore[import-untyped]

from abduct import AbductError, DataError
from abduct.kit import sha256_file
from abduct_clip._imaging import CLIP_MEAN, CLIP_STD, Preprocess
from abduct_clip.settings import TINY_ARCH, ClipSettings
from abduct_modelkit import (
    hub_access,
    hub_cache_dir,
    hub_file_cached,
    load_weights_only,
    offline_requested,
    reachable,
    weights_unavailable,
)

CONFIG_DIR = Path(__file__).parent / "model_configs"
CHECKPOINT_FORMAT = "abduct-clip/1"
# Wrappers of the released Sherlock checkpoints and of DataParallel/DDP training.
_PREFIXES = ("module.", "clip_model.")
_OPENAI_EXTRA_KEYS = ("input_resolution", "context_length", "vocab_size")


@cache
def register_configs() -> None:
    """Make this package's architectures (``abduct-tiny``) known to open_clip."""
    open_clip.add_model_config(CONFIG_DIR)


@dataclass
class Checkpoint:
    state_dict: dict[str, torch.Tensor]
    meta: dict[str, Any]
    sha256: str


def read_checkpoint(path: str) -> Checkpoint:
    """Weights of a checkpoint file; never unpickles arbitrary objects."""
    file = Path(path)
    if not file.is_file():
        raise DataError("checkpoint file not found", file=path)
    meta: dict[str, Any] = {}
    obj: Any = load_weights_only(file, loader="clip checkpoint")
    if isinstance(obj, dict) and isinstance(obj.get("model_state_dict"), dict):
        meta = dict(obj.get("abduct") or {})
        obj = obj["model_state_dict"]
    elif isinstance(obj, dict) and isinstance(obj.get("state_dict"), dict):
        obj = obj["state_dict"]
    if not isinstance(obj, dict) or not obj or not all(isinstance(v, torch.Tensor) for v in obj.values()):
        raise DataError("expected a state dict of tensors (or {'model_state_dict': ...})", file=path)
    state = {_strip_prefixes(k): v for k, v in obj.items() if k not in _OPENAI_EXTRA_KEYS}
    return Checkpoint(state, meta, sha256_file(file))


def _strip_prefixes(key: str) -> str:
    changed = True
    while changed:
        changed = False
        for prefix in _PREFIXES:
            if key.startswith(prefix):
                key, changed = key[len(prefix):], True
    return key


def _is_openai_format(state: dict[str, torch.Tensor]) -> bool:
    return "visual.proj" in state or "visual.attnpool.positional_embedding" in state


def load_weights(model: torch.nn.Module, state: dict[str, torch.Tensor], source: str) -> None:
    """Load ``state`` strictly into ``model`` (resizing the position grid if needed)."""
    state = dict(state)
    scale = getattr(model, "logit_scale", None)
    if scale is not None and "logit_scale" in state and state["logit_scale"].ndim != scale.ndim:
        state["logit_scale"] = state["logit_scale"].reshape(scale.shape)
    resize_pos_embed(state, model)
    result = model.load_state_dict(state, strict=False)
    if result.missing_keys or result.unexpected_keys:
        missing = ", ".join(result.missing_keys[:3])
        unexpected = ", ".join(result.unexpected_keys[:3])
        raise DataError(
            f"weights do not fit the architecture (missing: {missing or '-'}; unexpected: {unexpected or '-'}); "
            "name the architecture as clip:ARCH:FILE",
            file=source,
        )


@dataclass
class LoadedModel:
    model: torch.nn.Module
    tokenizer: Any
    preprocess: Preprocess
    settings: ClipSettings
    arch: str
    weights: str  # identity of the weights, for the fingerprint


def _merge_checkpoint_settings(settings: ClipSettings, meta: dict[str, Any]) -> ClipSettings:
    """A checkpoint trained here remembers how it saw its inputs; explicit options win."""
    changes = {k: meta[k] for k in ("mode", "images", "prefix") if k in meta and k not in settings.explicit}
    return settings.with_options(**changes) if changes else settings


def _create(arch: str, **kwargs: Any) -> torch.nn.Module:
    register_configs()
    if arch not in open_clip.list_models():
        raise AbductError(f"clip: unknown architecture '{arch}' (see open_clip.list_models(); 'tiny' for tests)")
    # open_clip warns on every random init (intended here) and logs a failed download before
    # raising it: the error below is the one line the user sees.
    logging.disable(logging.ERROR)
    try:
        model: torch.nn.Module = open_clip.create_model(arch, **kwargs)
        return model
    except (RuntimeError, OSError, ValueError) as exc:
        raise AbductError(f"clip: cannot create {arch} with {kwargs or 'random weights'}: {exc}") from None
    finally:
        logging.disable(logging.NOTSET)


OPEN_CLIP_URL_CACHE = Path("~/.cache/clip")  # where open_clip keeps weights it downloads by URL


def _hub_files(hf_hub: str) -> tuple[str, list[str]]:
    """The hub repository and the files open_clip tries in it, in its order."""
    repo, filename = os.path.split(hf_hub)  # 'org/name/' means open_clip's default file name
    filename = filename or open_clip.pretrained.HF_WEIGHTS_NAME
    safe = list(getattr(open_clip.pretrained, "_get_safe_alternatives", lambda name: [])(filename))
    return repo, [*safe, filename]


def _create_pretrained(arch: str, tag: str) -> torch.nn.Module:
    """``arch`` with open_clip's pretrained ``tag``, from the cache when offline; when the
    weights are neither cached nor downloadable, one line in seconds instead of open_clip's
    minute of retries."""
    register_configs()
    if arch not in open_clip.list_models():
        raise AbductError(f"clip: unknown architecture '{arch}' (see open_clip.list_models(); 'tiny' for tests)")
    cfg = open_clip.get_pretrained_cfg(arch, tag)
    if not cfg:
        tags = sorted(t for a, t in open_clip.list_pretrained() if a == arch)
        raise AbductError(f"clip: {arch} has no pretrained tag '{tag}' (known: {', '.join(tags) or 'none'})")
    what = f"clip:{arch}@{tag}"
    how = f"a local checkpoint, clip:{arch}:/path/to/weights.pt"
    use_hub = bool(cfg.get("hf_hub")) and open_clip.pretrained.has_hf_hub()
    if use_hub:
        repo, files = _hub_files(str(cfg["hf_hub"]))
        with hub_access() as hub:
            if not hub.online and not any(hub_file_cached(repo, name) for name in files):
                raise weights_unavailable(what, [f"hub {repo} ({', '.join(files)}) in {hub_cache_dir()}"], how=how,
                                          reason=hub.reason)
            return _create(arch, pretrained=tag)
    url = str(cfg.get("url", ""))
    cached = OPEN_CLIP_URL_CACHE.expanduser() / os.path.basename(url)
    if not cached.is_file() and (offline_requested() or not reachable(url)):
        raise weights_unavailable(what, [f"{cached} (downloaded from {url})"], how=how,
                                  reason=None if offline_requested() else f"{url.split('/')[2]} unreachable")
    return _create(arch, pretrained=tag)


def build(settings: ClipSettings, seed: int = 0, device: str = "cpu") -> LoadedModel:
    """The model ``settings`` describe, in eval mode on ``device`` (fp32 weights)."""
    arch = settings.open_clip_arch
    model: Any
    if settings.checkpoint is not None:
        source = settings.checkpoint
        ckpt = read_checkpoint(source)
        settings = _merge_checkpoint_settings(settings, ckpt.meta)
        arch = arch or ckpt.meta.get("arch")
        if arch is not None:
            model = _create(arch)
            load_weights(model, ckpt.state_dict, source)
        elif _is_openai_format(ckpt.state_dict):
            # An OpenAI-CLIP state dict describes its own architecture (QuickGELU included).
            try:
                model = build_model_from_openai_state_dict(dict(ckpt.state_dict), cast_dtype=None)
            except (KeyError, RuntimeError, AssertionError) as exc:
                raise DataError(f"not a complete OpenAI CLIP state dict ({exc})", file=source) from None
            # the builder rounds weights to fp16 as OpenAI's release is; fp32 files keep their precision
            load_weights(model.float(), ckpt.state_dict, source)
            arch = "openai-format"
        else:
            raise DataError("cannot tell the architecture; use clip:ARCH:FILE", file=source)
        weights = f"sha256:{ckpt.sha256}"
    elif settings.pretrained is not None:
        assert arch is not None
        model = _create_pretrained(arch, settings.pretrained)
        weights = f"pretrained:{settings.pretrained}"
    else:
        assert arch is not None
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            model = _create(arch)
        weights = f"random-init seed {seed}"
    model = model.float().to(device).eval()
    register_configs()
    context = int(getattr(model, "context_length", 77))
    tokenizer = open_clip.tokenizer.SimpleTokenizer(context_length=context)
    size = model.visual.image_size
    size = int(size[0] if isinstance(size, (tuple, list)) else size)
    cfg = getattr(model.visual, "preprocess_cfg", None) or {}
    preprocess = Preprocess(
        size=size,
        mode=settings.mode,
        processing=settings.images,
        mean=tuple(cfg.get("mean", CLIP_MEAN)),
        std=tuple(cfg.get("std", CLIP_STD)),
    )
    return LoadedModel(model, tokenizer, preprocess, settings, arch or TINY_ARCH, weights)


def checkpoint_meta(arch: str, settings: ClipSettings) -> dict[str, Any]:
    """What a checkpoint written by ``abduct train clip`` remembers about its model."""
    return {
        "format": CHECKPOINT_FORMAT,
        "arch": arch,
        "mode": settings.mode,
        "images": settings.images,
        "prefix": settings.prefix,
    }
