"""From a rendered image to model-ready tensors: square views, resizing, normalisation,
training augmentation, and the data-loader datasets that run all of it in worker processes."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
import torchvision.transforms.functional as TF  # type: ignore[import-untyped]
from PIL import Image
from torch.utils.data import DataLoader, Dataset

from abduct import AbductError, VisualInput
from abduct.kit import load_rgb
from abduct_modelkit import render

# open_clip's OpenAI constants; the padding colour is the mean so it normalises to zero.
CLIP_MEAN = (0.48145466, 0.4578275, 0.40821073)
CLIP_STD = (0.26862954, 0.26130258, 0.27577711)
MIN_ITEMS_FOR_WORKERS = 32


def square_views(image: Image.Image, processing: str) -> list[Image.Image]:
    """The square crops a model sees of one image.

    ``widescreen``: two squares covering a non-square image (left/right for landscape,
    top/bottom for portrait; one for a square image); ``center``: the centre square;
    ``pad``: the whole image padded to a square with the normalisation mean.
    """
    w, h = image.size
    if processing == "widescreen":
        if w == h:
            return [image]
        s = min(w, h)
        if w > h:
            return [image.crop((0, 0, s, s)), image.crop((w - s, 0, w, s))]
        return [image.crop((0, 0, s, s)), image.crop((0, h - s, s, h))]
    if processing == "center":
        s = min(w, h)
        left, top = (w - s) // 2, (h - s) // 2
        return [image.crop((left, top, left + s, top + s))]
    if processing == "pad":
        s = max(w, h)
        canvas = Image.new("RGB", (s, s), tuple(round(255 * m) for m in CLIP_MEAN))
        canvas.paste(image, ((s - w) // 2, (s - h) // 2))
        return [canvas]
    raise ValueError(f"unknown image processing {processing!r}")


@dataclass(frozen=True)
class Preprocess:
    """Resolution and normalisation of a model, with its input mode and processing."""

    size: int
    mode: str = "highlight"
    processing: str = "widescreen"
    mean: tuple[float, ...] = CLIP_MEAN
    std: tuple[float, ...] = CLIP_STD

    def to_tensor(self, view: Image.Image) -> torch.Tensor:
        view = view.resize((self.size, self.size), Image.Resampling.BICUBIC)
        normalized: torch.Tensor = TF.normalize(TF.to_tensor(view), self.mean, self.std)
        return normalized

    def views(self, visual: VisualInput) -> list[Image.Image]:
        if visual.media is None or visual.kind != "image":
            raise AbductError("clip needs an image for every input (it got a text-only or video input)")
        return square_views(render(load_rgb(visual.media), visual.region, self.mode), self.processing)

    def evaluation_views(self, visual: VisualInput) -> torch.Tensor:
        return torch.stack([self.to_tensor(v) for v in self.views(visual)])

    def augmented_views(self, visual: VisualInput, generator: torch.Generator) -> torch.Tensor:
        """The paper's augmentation, drawn independently for each view: random crop,
        horizontal flip, colour jitter and (rarely) greyscale."""
        return torch.stack([self._augment(v, generator) for v in self.views(visual)])

    def _augment(self, view: Image.Image, g: torch.Generator) -> torch.Tensor:
        def uniform(low: float, high: float) -> float:
            return low + (high - low) * float(torch.rand((), generator=g))

        big = round(self.size * 8 / 7)  # 224 -> 256: room for the random crop
        view = view.resize((big, big), Image.Resampling.BICUBIC)
        left = int(torch.randint(0, big - self.size + 1, (), generator=g))
        top = int(torch.randint(0, big - self.size + 1, (), generator=g))
        tensor = TF.to_tensor(view.crop((left, top, left + self.size, top + self.size)))
        if uniform(0, 1) < 0.5:
            tensor = TF.hflip(tensor)
        tensor = TF.adjust_brightness(tensor, uniform(0.8, 1.2))
        tensor = TF.adjust_contrast(tensor, uniform(0.8, 1.2))
        tensor = TF.adjust_saturation(tensor, uniform(0.8, 1.2))
        if uniform(0, 1) < 0.1:
            tensor = TF.rgb_to_grayscale(tensor, num_output_channels=3)
        normalized: torch.Tensor = TF.normalize(tensor.clamp(0, 1), self.mean, self.std)
        return normalized


class EvaluationImages(Dataset):  # type: ignore[type-arg]
    """Decoded, drawn and cropped views of each visual input (run in loader workers)."""

    def __init__(self, visuals: Sequence[VisualInput], preprocess: Preprocess) -> None:
        self.visuals = list(visuals)
        self.preprocess = preprocess

    def __len__(self) -> int:
        return len(self.visuals)

    def __getitem__(self, index: int) -> torch.Tensor | AbductError:
        try:
            return self.preprocess.evaluation_views(self.visuals[index])
        except AbductError as exc:
            return exc  # raised again in the main process, where the CLI reports it in one line


def collate_views(items: list[torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
    """Stack every view of every item; ``owner[k]`` is the item that view k belongs to."""
    owner = torch.cat([torch.full((len(t),), i, dtype=torch.long) for i, t in enumerate(items)])
    return torch.cat(items), owner


def average_views(features: torch.Tensor, owner: torch.Tensor, count: int) -> torch.Tensor:
    """Mean embedding of each item's views (the widescreen double pass), not yet normalised."""
    sums = torch.zeros((count, features.shape[1]), dtype=features.dtype, device=features.device)
    sums.index_add_(0, owner.to(features.device), features)
    counts = torch.bincount(owner, minlength=count).to(features.device, features.dtype).clamp_min(1)
    return sums / counts[:, None]


def _collate_or_error(items: list[torch.Tensor | AbductError]) -> tuple[torch.Tensor, torch.Tensor] | AbductError:
    errors = [item for item in items if isinstance(item, AbductError)]
    return errors[0] if errors else collate_views(items)  # type: ignore[arg-type]


def raise_if_error(batch: object) -> None:
    """Re-raise, in the main process, a user error that a loader worker returned."""
    if isinstance(batch, AbductError):
        raise batch


def image_loader(
    visuals: Sequence[VisualInput], preprocess: Preprocess, batch_size: int, workers: int
) -> DataLoader:  # type: ignore[type-arg]
    """Batches of ``(views, owner)``, decoded and drawn in ``workers`` processes.

    Starting workers costs tens of milliseconds, more than decoding a handful of images
    (a localization unit), so small calls decode in this process."""
    workers = 0 if len(visuals) < MIN_ITEMS_FOR_WORKERS else workers
    return DataLoader(
        EvaluationImages(visuals, preprocess),
        batch_size=batch_size,
        shuffle=False,
        num_workers=workers,
        collate_fn=_collate_or_error,
        persistent_workers=False,
    )
