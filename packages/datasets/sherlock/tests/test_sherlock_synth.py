"""The synthetic corpus: release schema, layout, determinism and learnable regularities."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
from PIL import Image

from abduct_sherlock import load_instances, metrics
from abduct_sherlock.records import SherlockInstance
from abduct_sherlock.synth import synthesize
from abduct_sherlock.world import COLORS, SCENES, side_of


def test_schema_layout_and_variety(corpus: Path) -> None:
    train, val = load_instances(corpus, "train"), load_instances(corpus, "val")
    assert train and val and all(i.split_idx is None for i in train)
    assert len({i.split_idx for i in val}) >= 2
    everything = train + val
    sizes = Counter((i.width, i.height) for i in everything)
    assert (448, 252) in sizes and (320, 240) in sizes  # widescreen VCR-like and VG-like
    assert any("VG_" not in i.image_url for i in everything) and any("VG_" in i.image_url for i in everything)
    assert any(len(i.region.boxes) > 1 for i in everything)
    assert any(b.width == 1 and b.height == 1 for i in everything for b in i.region.boxes)
    per_image = Counter(i.image_url for i in everything)
    assert min(per_image.values()) >= 3
    for inst in everything[:40]:
        with Image.open(inst.image_path) as img:
            assert img.size == (inst.width, inst.height)
    raw = json.loads((corpus / "sherlock_val_with_split_idxs_v1_1.json").read_text())
    assert list(raw[0]) == ["instance_id", "split_idx", "inputs", "targets"]
    assert set(raw[0]["inputs"]) == {"image", "bboxes", "clue", "confidence", "obs_idx"}
    assert len(raw[0]["instance_id"]) == 32 and int(raw[0]["instance_id"], 16) >= 0


def test_inferences_are_unique_within_a_chunk(corpus: Path) -> None:
    val = load_instances(corpus, "val")
    for k in {i.split_idx for i in val}:
        texts = [i.inference for i in val if i.split_idx == k]
        assert len(set(texts)) == len(texts)


def test_deterministic_per_seed(tmp_path: Path) -> None:
    a = synthesize(tmp_path / "a", images=12, seed=4)
    b = synthesize(tmp_path / "b", images=12, seed=4)
    c = synthesize(tmp_path / "c", images=12, seed=5)
    name = "sherlock_train_v1_1.json"
    assert (a / name).read_text() == (b / name).read_text() != (c / name).read_text()


# -- learnability: pixels + context beat box geometry ----------------------------------------
class _PixelReader:
    """A hand-written 'model' that reads the scene from the dominant colour of the image and
    the object's colour from the region: what a learned model can pick up."""

    def __init__(self) -> None:
        self.cache: dict[str, tuple[str, str]] = {}

    def features(self, inst: SherlockInstance) -> tuple[str, str]:
        key = inst.visual.key()
        if key not in self.cache:
            pixels = np.asarray(Image.open(inst.image_path).convert("RGB"), dtype=float)
            quant = (pixels // 16).astype(np.int64).reshape(-1, 3)
            code = int(np.bincount(quant[:, 0] * 256 + quant[:, 1] * 16 + quant[:, 2]).argmax())
            dominant = np.array([code // 256, code // 16 % 16, code % 16], dtype=float) * 16 + 8
            scene = min(SCENES, key=lambda s: min(float(np.sum((np.asarray(c, float) - dominant) ** 2)) for c in s.colors))
            box = inst.region.boxes[0]
            patch = pixels[int(box.top): int(box.bottom), int(box.left): int(box.right)].reshape(-1, 3)
            scene_dist = np.min([np.sum((patch - np.asarray(c, float)) ** 2, axis=1) for c in scene.colors], axis=0)
            far = patch[scene_dist > 1600] if np.any(scene_dist > 1600) else patch
            palette = np.asarray(list(COLORS.values()), dtype=float)
            nearest = np.argmin(((far[:, None, :] - palette[None]) ** 2).sum(axis=2), axis=1)
            self.cache[key] = (scene.actor, list(COLORS)[int(np.bincount(nearest).argmax())])
        return self.cache[key]

    def score(self, inst: SherlockInstance, text: str) -> float:
        actor, color = self.features(inst)
        return float(text.startswith(actor)) + float(f" {color} " in f" {text} ") + _geometry(inst, text)


def _geometry(inst: SherlockInstance, text: str) -> float:
    """All a box-geometry-only model can know: which side of the image the region is on."""
    box = inst.region.boxes[0]
    return 0.5 * float(text.endswith(side_of(box.left + box.width / 2, inst.width)))


def test_pixels_and_context_beat_box_geometry(corpus: Path) -> None:
    val = load_instances(corpus, "val")
    reader = _PixelReader()
    pixel_ranks, geometry_ranks = [], []
    for k in sorted({i.split_idx for i in val}):
        chunk = [i for i in val if i.split_idx == k]
        pixel = np.array([[reader.score(a, b.inference) for b in chunk] for a in chunk])
        geometry = np.array([[_geometry(a, b.inference) for b in chunk] for a in chunk])
        pixel_ranks.append(metrics.retrieval_scores(pixel))
        geometry_ranks.append(metrics.retrieval_scores(geometry))
    pixel_rank = np.mean([r["im2txt"] for r in pixel_ranks])
    geometry_rank = np.mean([r["im2txt"] for r in geometry_ranks])
    print(f"pixel reader: {pixel_ranks}; geometry: {geometry_ranks}")
    assert pixel_rank < 0.5 * geometry_rank
    assert np.mean([r["p_at_1"] for r in pixel_ranks]) > np.mean([r["p_at_1"] for r in geometry_ranks]) + 10
