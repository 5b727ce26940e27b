"""RoI features for any boxes: a torchvision ResNet's last stage, RoIAlign, mean pooling.

The image is resized so its short side is ``size`` pixels (long side at most 5/3 of it, as
bottom-up attention's 600/1000), normalised with ImageNet statistics and run through the
backbone once; every box of that image is then pooled from the same feature map with
``torchvision.ops.roi_align`` (``pool`` x ``pool`` bins, averaged). ResNet-50/101/152 give
2048-d features, ResNet-18/34 512-d; ``resnetNN-c4`` stops after the third stage (stride 16
instead of 32, 1024-d or 256-d), which keeps small images' boxes apart.

Weights come from a local file (a torchvision ``state_dict`` as ``.pth``/``.pt`` or
``.safetensors``; the classifier ``fc.*`` is ignored) or, without one, from a fixed seed:
nothing is downloaded. Note that the released LXMERT and UNITER checkpoints were trained on
Faster R-CNN (Visual Genome) features; with them, read those features from a file
(``feature_files``) and use this extractor only for the boxes the file lacks (the clue).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import numpy as np
import torch
from PIL import Image

from abduct import AbductError
from abduct_modelkit import is_small_on_cpu, one_thread_if

# name -> feature size; "-c4" stops after the third stage (stride 16: finer maps for small images)
BACKBONES = {"resnet18": 512, "resnet34": 512, "resnet50": 2048, "resnet101": 2048, "resnet152": 2048,
             "resnet18-c4": 256, "resnet34-c4": 256, "resnet50-c4": 1024, "resnet101-c4": 1024}
IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)


def _file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()[:16]


def _read_state(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise AbductError(f"backbone weights {path} do not exist")
    try:
        if path.suffix == ".safetensors":
            from safetensors.torch import load_file

            return dict(load_file(str(path)))
        state = torch.load(str(path), map_location="cpu", weights_only=True)
    except Exception as exc:
        raise AbductError(f"{path}: not a readable backbone state dict ({type(exc).__name__}: {exc})") from None
    if isinstance(state, dict) and "state_dict" in state and isinstance(state["state_dict"], dict):
        state = state["state_dict"]
    if not isinstance(state, dict):
        raise AbductError(f"{path}: expected a state dict, got {type(state).__name__}")
    return state


class RoIExtractor:
    """``features(image, boxes)`` -> one ``dim``-d row per box (see the module docstring)."""

    def __init__(self, backbone: str = "resnet50", *, weights: Path | None = None, size: int = 600, pool: int = 7,
                 seed: int = 0, device: str = "cpu") -> None:
        if backbone not in BACKBONES:
            raise AbductError(f"unknown backbone '{backbone}' (choose from {', '.join(BACKBONES)})")
        import torchvision  # type: ignore[import-untyped]

        self.dim = BACKBONES[backbone]
        self.size, self.pool, self.device = int(size), int(pool), torch.device(device)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            net = getattr(torchvision.models, backbone.removesuffix("-c4"))(weights=None)
        if weights is not None:
            state = {k.removeprefix("module."): v for k, v in _read_state(Path(weights)).items()}
            state = {k: v for k, v in state.items() if not k.startswith("fc.")}
            missing, unexpected = net.load_state_dict(state, strict=False)
            missing = [k for k in missing if not k.startswith("fc.")]  # the classifier is not used
            if missing or unexpected:
                raise AbductError(f"{weights}: not a {backbone} state dict (missing {missing[:3]}, "
                                  f"unexpected {list(unexpected)[:3]})")
        stages = [net.conv1, net.bn1, net.relu, net.maxpool, net.layer1, net.layer2, net.layer3]
        self.stride = 16 if backbone.endswith("-c4") else 32
        if self.stride == 32:
            stages.append(net.layer4)
        self.body = torch.nn.Sequential(*stages).to(self.device).eval()
        source = f"file:{_file_digest(Path(weights))}" if weights is not None else f"seed:{seed}"
        self.fingerprint = f"roi|{backbone}|{source}|size={self.size}|pool={self.pool}"

    def _resize(self, image: Image.Image) -> tuple[torch.Tensor, float]:
        width, height = image.size
        scale = self.size / max(1, min(width, height))
        scale = min(scale, self.size * 5 / 3 / max(1, max(width, height)))
        new = (max(1, round(width * scale)), max(1, round(height * scale)))
        pixels = np.asarray(image.convert("RGB").resize(new, Image.Resampling.BILINEAR), dtype=np.float32) / 255.0
        tensor = torch.from_numpy(pixels).permute(2, 0, 1)
        mean = torch.tensor(IMAGENET_MEAN).view(3, 1, 1)
        std = torch.tensor(IMAGENET_STD).view(3, 1, 1)
        return (tensor - mean) / std, scale

    @torch.inference_mode()
    def features(self, image: Image.Image, boxes_xyxy: np.ndarray) -> np.ndarray:
        """``[N, dim]`` float32 features of the pixel boxes ``(x1, y1, x2, y2)`` of ``image``."""
        from torchvision.ops import roi_align  # type: ignore[import-untyped]

        boxes = np.asarray(boxes_xyxy, dtype=np.float32).reshape(-1, 4)
        if not len(boxes):
            return np.zeros((0, self.dim), dtype=np.float32)
        tensor, scale = self._resize(image)
        with one_thread_if(is_small_on_cpu(self.body, self.device)):
            fmap = self.body(tensor.unsqueeze(0).to(self.device))
        rois = torch.cat([torch.zeros(len(boxes), 1), torch.from_numpy(boxes) * scale], dim=1).to(self.device)
        pooled = roi_align(fmap, rois, output_size=self.pool, spatial_scale=1.0 / self.stride, sampling_ratio=2,
                           aligned=True)
        rows: np.ndarray = pooled.mean(dim=(2, 3)).float().cpu().numpy()
        return rows
