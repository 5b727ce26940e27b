"""What a cross-encoder family provides, and building its scorer from a spec.

``lxmert:tiny`` / ``uniter:tiny`` are random tiny networks (fixed seed, tiny tokenizer,
ResNet-18 third-stage features on small images); ``NAME:DIR`` is a checkpoint directory (what ``abduct
train`` writes, or the family's own released format, see each package). The feature and text
options of a spec override what a directory records in ``abduct_regions.json``.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Protocol

import torch

from abduct import AbductError, Range, Settings, Spec
from abduct.host import bind_options
from abduct.kit.cache import cache_dir_for
from abduct_modelkit import honour_umask
from abduct_regions.featurizer import SIZE_LIMITS, FeatureSettings
from abduct_regions.positions import PositionKind
from abduct_regions.scoring import CrossEncoderScorer, InputSettings

TINY = "tiny"
TINY_SEED = 0
TINY_INPUTS = InputSettings(FeatureSettings(backbone="resnet18-c4", size=64, pool=2, grid=2, max_boxes=8), max_text=48)


class Family(Protocol):
    name: str
    position_kind: PositionKind
    default_inputs: InputSettings

    def build_tiny(self, seed: int) -> tuple[torch.nn.Module, Any]:
        """A random tiny network (``TINY_INPUTS``' feature size) and its tokenizer."""
        ...

    def load_dir(self, directory: Path, seed: int) -> tuple[torch.nn.Module, Any]:
        """The network and tokenizer of a checkpoint directory; AbductError naming it."""
        ...

    def save_dir(self, net: torch.nn.Module, tokenizer: Any, directory: Path) -> None:
        """Write what ``load_dir`` reads."""
        ...


Count = Annotated[int | None, Range(ge=1)]  # a size or a count: 0 or less means nothing to score
ImageSize = Annotated[int | None, Range(ge=1, le=SIZE_LIMITS["size"])]  # the bounds a settings file has too
Grid = Annotated[int | None, Range(ge=1, le=SIZE_LIMITS["grid"])]
Boxes = Annotated[int | None, Range(ge=1, le=SIZE_LIMITS["max_boxes"])]


@dataclass(frozen=True, kw_only=True)
class FeatureOptions:
    """The options every cross-encoder spec takes (None: the checkpoint's or the default)."""

    backbone: str | None = None
    backbone_weights: Path | None = None
    image_size: ImageSize = None
    grid: Grid = None
    features: Path | None = None
    max_boxes: Boxes = None
    max_text: Count = None
    cache: bool = True  # keep extracted region features in the on-disk cache

    def apply(self, inputs: InputSettings) -> InputSettings:
        return inputs.with_options(
            max_text=self.max_text, backbone=self.backbone,
            weights=None if self.backbone_weights is None else str(self.backbone_weights),
            size=self.image_size, grid=self.grid, features=None if self.features is None else str(self.features),
            max_boxes=self.max_boxes)


def load_network(family: Family, argument: str | None, seed: int = TINY_SEED) -> tuple[torch.nn.Module, Any, InputSettings]:
    """``(net, tokenizer, input settings)`` of ``family:ARGUMENT``."""
    if argument is None:
        raise AbductError(f"{family.name} needs an argument: {family.name}:tiny or {family.name}:DIR (a checkpoint directory)")
    if argument == TINY:
        net, tokenizer = family.build_tiny(seed)
        return net, tokenizer, TINY_INPUTS
    path = Path(argument).expanduser()
    if not path.is_dir():
        raise AbductError(f"{family.name}:{argument}: no such directory (expected {family.name}:tiny or a checkpoint directory)")
    net, tokenizer = family.load_dir(path, seed)
    return net, tokenizer, InputSettings.load(path, family.default_inputs, text_positions(net))


def text_positions(net: torch.nn.Module) -> int | None:
    """How many text positions ``net``'s (BERT-style) position table holds: the longest text."""
    for name, module in net.named_modules():
        if name.endswith("embeddings.position_embeddings") and isinstance(module, torch.nn.Embedding):
            return int(module.num_embeddings)
    return None


def options_from_spec(spec: Spec) -> FeatureOptions:
    """A spec's options, typed and checked as the model factories type them."""
    return FeatureOptions(**bind_options("model", spec.name, FeatureOptions, spec.option_dict()))


def build_scorer(family: Family, spec: Spec, settings: Settings, options: FeatureOptions) -> CrossEncoderScorer:
    """The scorer ``spec`` names; extracted region features are cached unless ``options.cache`` is off."""
    net, tokenizer, inputs = load_network(family, spec.argument)
    inputs = options.apply(inputs)
    positions = text_positions(net)
    if positions is not None and inputs.max_text > positions:
        raise AbductError(f"{family.name}:{spec.argument}: max_text={inputs.max_text} is more than the "
                          f"{positions} text positions of the weights")
    dim = getattr(net, "visual_dim", None)
    from abduct_regions.extractor import BACKBONES

    if dim is not None and BACKBONES.get(inputs.features.backbone) != dim:
        raise AbductError(f"{family.name}:{spec.argument} takes {dim}-d region features, and backbone "
                          f"'{inputs.features.backbone}' gives {BACKBONES.get(inputs.features.backbone)}-d")
    return CrossEncoderScorer(
        family.name, net, tokenizer, inputs, family.position_kind, device=settings.torch_device(),
        batch_size=settings.batch_size, seed=settings.seed,
        cache_dir=cache_dir_for("regions") if options.cache else None, source=spec.argument or "")


def save_checkpoint(family: Family, scorer: CrossEncoderScorer, directory: Path,
                    extra: dict[str, bytes] | None = None) -> None:
    """Write ``scorer`` (and ``extra`` files) as a directory ``family:DIR`` loads, replacing
    ``directory`` only once the new one is complete (a kill mid-write leaves the old one)."""
    directory = Path(directory)
    fresh = directory.with_name(directory.name + ".tmp")
    old = directory.with_name(directory.name + ".old")
    shutil.rmtree(fresh, ignore_errors=True)
    fresh.mkdir(parents=True)
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]  # no "Writing model shards" bar per checkpoint
    family.save_dir(scorer.net, scorer.tokenizer, fresh)
    scorer.inputs.save(fresh)
    for name, data in (extra or {}).items():
        (fresh / name).write_bytes(data)
    honour_umask(fresh)  # safetensors writes 0o600
    if directory.exists():
        shutil.rmtree(old, ignore_errors=True)
        os.replace(directory, old)
    os.replace(fresh, directory)
    shutil.rmtree(old, ignore_errors=True)


def existing_checkpoint(directory: Path) -> Path | None:
    """``directory``, or the copy a kill between the two renames of ``save_checkpoint`` left."""
    directory = Path(directory)
    for candidate in (directory, directory.with_name(directory.name + ".old")):
        if candidate.is_dir():
            return candidate
    return None


def scorer_factory(family: Family, name: str, doc: str) -> Callable[..., CrossEncoderScorer]:
    """The registered model factory of a family: the spec options (read off this signature by
    ``abduct.contract.options``) are declared once for every cross-encoder."""

    def make(spec: Spec, settings: Settings, *, backbone: str | None = None, backbone_weights: Path | None = None,
             image_size: ImageSize = None, grid: Grid = None, features: Path | None = None,
             max_boxes: Boxes = None, max_text: Count = None, cache: bool = True) -> CrossEncoderScorer:
        options = FeatureOptions(backbone=backbone, backbone_weights=backbone_weights, image_size=image_size,
                                 grid=grid, features=features, max_boxes=max_boxes, max_text=max_text, cache=cache)
        return build_scorer(family, spec, settings, options)

    make.__name__ = make.__qualname__ = name
    make.__doc__ = doc
    return make
