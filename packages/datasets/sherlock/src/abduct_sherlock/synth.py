"""A small synthetic Sherlock corpus in the exact release schema, with images on disk.

``synthesize(out_dir)`` writes::

    sherlock_train_v1_1.json, sherlock_val_with_split_idxs_v1_1.json   (release schema)
    images/vg/VG_100K{,_2}/<id>.jpg, images/vcr/<movie>/<clip>@<n>.jpg    (as the loader resolves)
    sherlock_val_autoboxes.json                                         (auto-box proposals)
    val_{retrieval,localization,comparison}/...                         (leaderboard files + keys)
    test_{retrieval,localization,comparison}_public/...                 (instances only)

The world is described in ``world.py``: scenes are backgrounds, objects are coloured shapes in
the boxes, clues name the object and inferences depend on object and scene.
"""

from __future__ import annotations

import hashlib
import math
import random
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from abduct import Box
from abduct.kit import atomic_write_bytes, atomic_write_json, building_folder
from abduct_sherlock import build
from abduct_sherlock.draw import background, draw_object
from abduct_sherlock.layout import ANNOTATION_FILES, AUTOBOX_FILE, ImageRoots
from abduct_sherlock.records import SherlockInstance
from abduct_sherlock.schema import box_json
from abduct_sherlock.world import COLORS, OBJECTS, SCENES, ObjectKind, Scene, clue_text, inference_text, side_of

if TYPE_CHECKING:
    from abduct_demo import DemoContext

DEFAULT_IMAGES = 300
DEMO_IMAGES = 600  # abduct demo: 150 validation images, enough that the random baseline sits near its expectation
CHUNK_INSTANCES = 120  # validation retrieval chunks of ~120 instances (the release: ~1000)
PROPOSALS_PER_IMAGE = 12
VG_SIZES = ((320, 240), (320, 240), (320, 240), (240, 320))
VCR_SIZE = (448, 252)


@dataclass
class _Obs:
    scene: Scene
    obj: ObjectKind
    color: str
    boxes: list[Box]  # empty list never; a degenerate observation has one 1x1 box
    count: int  # 0 = degenerate speck, 1 or 2 objects

    def texts(self, width: int) -> tuple[str, str]:
        cx = sum(b.left + b.width / 2 for b in self.boxes) / len(self.boxes)
        side = side_of(cx, width)
        return clue_text(self.obj, self.color, self.count), inference_text(self.scene, self.obj, self.color, side, self.count)


def _hex(*parts: object) -> str:
    return hashlib.md5("|".join(map(str, parts)).encode()).hexdigest()


def _place_box(rng: random.Random, width: int, height: int, taken: list[Box]) -> Box:
    """A box of 18-35% of the width and 25-45% of the height, overlapping others little;
    now and then flush with the image border (the release has such boxes)."""
    best: Box | None = None
    best_overlap = math.inf
    for _ in range(40):
        w = int(width * rng.uniform(0.18, 0.35))
        h = int(height * rng.uniform(0.25, 0.45))
        left, top = rng.randint(0, width - w), rng.randint(0, height - h)
        if rng.random() < 0.08:
            left = rng.choice((0, width - w))
        box = Box(left, top, w, h)
        overlap = max((box.iou(t) for t in taken), default=0.0)
        if overlap < best_overlap:
            best, best_overlap = box, overlap
        if overlap < 0.05:
            break
    assert best is not None
    return best


def _image_observations(rng: random.Random, scene: Scene, width: int, height: int, used: set[str]) -> list[_Obs]:
    n = rng.choice((3, 3, 4, 4, 5))
    kinds = rng.sample(OBJECTS, n)  # distinct objects within an image: boxes are tellable apart
    taken: list[Box] = []
    out = []
    for obj in kinds:
        r = rng.random()
        count = 0 if r < 0.04 else (2 if r < 0.19 else 1)
        if count == 0:
            box = Box(rng.randint(0, width - 1), rng.randint(0, height - 1), 1, 1)
            boxes = [box]
        else:
            boxes = [_place_box(rng, width, height, taken) for _ in range(count)]
        taken.extend(boxes)
        colors = list(COLORS)
        rng.shuffle(colors)
        obs = _Obs(scene, obj, colors[0], boxes, count)
        for color in colors:  # prefer an inference text unused in this chunk
            obs.color = color
            if obs.texts(width)[1] not in used:
                break
        used.add(obs.texts(width)[1])
        out.append(obs)
    return out


def _image_url(rng: random.Random, index: int, vcr: bool) -> str:
    if vcr:
        movie = f"movieclips_Synthetic_Film_{index % 7}" if index % 2 else f"lsmdc_{3000 + index % 5}_SYNTHETIC"
        return f"https://s3.us-west-2.amazonaws.com/ai2-rowanz/vcr1images/{movie}/{_hex('clip', index)[:11]}@{index % 40}.jpg"
    folder = "VG_100K" if index % 3 else "VG_100K_2"
    return f"https://cs.stanford.edu/people/rak248/{folder}/{2300000 + index}.jpg"


def _records_for_image(
    rng: random.Random, index: int, roots: ImageRoots, used: set[str], split_idx: int | None,
    meta: dict[str, tuple[str, str]],
) -> tuple[list[dict[str, Any]], list[Box]]:
    """Draw one image, save it, and return its release-schema records and its auto-box proposals."""
    vcr = rng.random() < 0.4
    width, height = VCR_SIZE if vcr else rng.choice(VG_SIZES)
    scene = rng.choice(SCENES)
    url = _image_url(rng, index, vcr)
    observations = _image_observations(rng, scene, width, height, used)
    img = background(scene, width, height)
    for obs in observations:
        for box in obs.boxes:
            draw_object(img, obs.obj.shape, box, COLORS[obs.color])
    path = roots.resolve(url)
    path.parent.mkdir(parents=True, exist_ok=True)
    img.save(path, format="JPEG", quality=92)
    records = []
    for obs_idx, obs in enumerate(observations):
        clue, inference = obs.texts(width)
        rec: dict[str, Any] = {"instance_id": _hex("inst", url, clue, inference, obs_idx)}
        if split_idx is not None:
            rec["split_idx"] = split_idx
        rec["inputs"] = {
            "image": {"url": url, "width": width, "height": height},
            "bboxes": [box_json(b) for b in obs.boxes],
            "clue": clue,
            "confidence": rng.randint(1, 3),
            "obs_idx": obs_idx,
        }
        rec["targets"] = {"inference": inference}
        records.append(rec)
        meta[rec["instance_id"]] = (scene.name, obs.obj.name)
    return records, _proposals(rng, [b for o in observations for b in o.boxes], width, height)


def _proposals(rng: random.Random, gt: list[Box], width: int, height: int) -> list[Box]:
    """Detector-like proposals: jittered copies of the true boxes (some IoU > 0.5, some not)
    mixed with random boxes, in a shuffled order."""
    out = []
    for box in gt:
        if box.area <= 1:
            continue
        for scale in (0.05, 0.3):
            dw, dh = box.width * scale, box.height * scale
            left = min(max(0, box.left + rng.uniform(-dw, dw)), width - 2)
            top = min(max(0, box.top + rng.uniform(-dh, dh)), height - 2)
            w = min(max(2, box.width + rng.uniform(-dw, dw)), width - left)
            h = min(max(2, box.height + rng.uniform(-dh, dh)), height - top)
            out.append(Box(int(left), int(top), int(w), int(h)))
    while len(out) < PROPOSALS_PER_IMAGE:
        w, h = rng.randint(10, width // 2), rng.randint(10, height // 2)
        out.append(Box(rng.randint(0, width - w), rng.randint(0, height - h), w, h))
    rng.shuffle(out)
    return out[:PROPOSALS_PER_IMAGE]


def _instances(records: list[dict[str, Any]], roots: ImageRoots) -> list[SherlockInstance]:
    from abduct_sherlock.loader import parse_record

    return [parse_record(r, i, Path("<synthetic>"), roots, need_split_idx=False) for i, r in enumerate(records)]


def _likert(rng: random.Random, truth: int) -> int:
    """One annotator: the latent plausibility, off by one now and then."""
    if rng.random() < 0.2:
        return min(3, max(1, truth + rng.choice((-1, 1))))
    return truth


def _comparison(rng: random.Random, split: str, instances: list[SherlockInstance], meta: dict[str, tuple[str, str]],
                max_sources: int) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Sources (image+region) with 6-10 candidate inferences and two annotators' Likert
    judgments: the true inference is Good; same scene or same object is Okay-ish."""
    sources = rng.sample(instances, min(max_sources, len(instances)))
    rows, test_id_map, annotations = [], {}, []
    for src in sources:
        others = [c for c in instances if c.instance_id != src.instance_id]
        k = min(len(others), rng.randint(5, 9))
        same_image = [c for c in others if c.image_url == src.image_url]
        pool = same_image[:3] + rng.sample(others, k)
        chosen: dict[str, SherlockInstance] = {src.instance_id: src}
        for c in pool:
            if len(chosen) >= k + 1:
                break
            chosen.setdefault(c.instance_id, c)
        candidates = list(chosen.values())
        rng.shuffle(candidates)
        entries = []
        for cand in candidates:
            if cand.instance_id == src.instance_id:
                truth = 3
            else:
                truth = 1 + (meta[cand.instance_id][0] == meta[src.instance_id][0]) + (meta[cand.instance_id][1] == meta[src.instance_id][1])
            tid = build.test_id(split, "comparison", src.instance_id, cand.instance_id)
            rows.append(build.row(src, src.region, cand.inference, tid, "comparison"))
            test_id_map[tid] = {"Input_iid": src.instance_id, "candidate": cand.instance_id}
            entries.append({"source_iid": cand.instance_id, "annot1": _likert(rng, truth), "annot2": _likert(rng, truth)})
        annotations.append({"Input_iid": src.instance_id, "candidates": entries})
    return rows, {"test_id_map": test_id_map, "annotations": annotations}


def synthesize(out_dir: Path, images: int = DEFAULT_IMAGES, seed: int = 0, *, chunk_instances: int = CHUNK_INSTANCES) -> Path:
    """Write the corpus into ``out_dir`` (created if needed) and return ``out_dir``.

    ``chunk_instances`` is the approximate size of a retrieval chunk (``split_idx``)."""
    if images < 3:
        raise ValueError("synthesize needs at least 3 images (train, val and test)")
    with building_folder(Path(out_dir)) as out:  # the corpus appears whole or not at all
        rng = random.Random(seed)
        roots = ImageRoots.for_data_dir(out, out / "images" / "vg", out / "images" / "vcr")
        n_val = max(1, round(images * 0.25))
        n_test = max(1, round(images * 0.15))
        n_train = images - n_val - n_test
        images_per_chunk = max(1, chunk_instances) / 3.8

        splits: dict[str, list[dict[str, Any]]] = {"train": [], "val": [], "test": []}
        chunk_of: dict[str, list[int]] = {"val": [], "test": []}
        proposals: dict[str, list[Box]] = {}
        meta: dict[str, tuple[str, str]] = {}  # instance id -> (scene, object) for the Likert judgments
        index = 0
        for split, count in (("train", n_train), ("val", n_val), ("test", n_test)):
            n_chunks = max(1, round(count / images_per_chunk))
            used: dict[int, set[str]] = {}
            for i in range(count):
                chunk = i * n_chunks // count  # balanced chunks of consecutive images
                split_idx = chunk if split != "train" else None
                # inference texts are kept unique within a chunk (ties make P@1 impossible)
                records, props = _records_for_image(rng, index, roots, used.setdefault(chunk, set()), split_idx, meta)
                if split == "test":
                    for rec in records:
                        rec.pop("split_idx", None)
                        chunk_of["test"].append(chunk)
                else:
                    proposals[records[0]["inputs"]["image"]["url"]] = props if split == "val" else []
                splits[split].extend(records)
                index += 1
        atomic_write_json(out / ANNOTATION_FILES["train"][0], splits["train"])
        atomic_write_json(out / ANNOTATION_FILES["val"][0], splits["val"])
        val_props = {url: boxes for url, boxes in proposals.items() if boxes}
        atomic_write_json(out / AUTOBOX_FILE, {url: [box_json(b) for b in boxes] for url, boxes in val_props.items()})

        for split in ("val", "test"):
            records = splits[split]
            insts = _instances(records, roots)
            chunks = [r["split_idx"] for r in records] if split == "val" else chunk_of["test"]
            keep_keys = split == "val"
            for k in sorted(set(chunks)):
                members = [inst for inst, c in zip(insts, chunks) if c == k]
                rows, key = build.retrieval_files(split, k, members)
                build.write_file_set(out, split, "retrieval", rows, key if keep_keys else None, chunk=k)
            image_props = val_props if split == "val" else {
                url: _proposals(rng, [b for i in group for b in i.region.boxes], group[0].width, group[0].height)
                for url, group in build.group_by_image(insts).items()
            }
            loc_rows, loc_key = build.localization_files(split, insts, image_props)
            build.write_file_set(out, split, "localization", loc_rows, loc_key if keep_keys else None)
            cmp_rows, cmp_key = _comparison(rng, split, insts, meta, max_sources=max(3, len(insts) // 3))
            build.write_file_set(out, split, "comparison", cmp_rows, cmp_key if keep_keys else None)
        atomic_write_bytes(out / "SYNTHETIC", f"abduct synthetic Sherlock corpus: images={images} seed={seed}\n".encode())
    return Path(out_dir)


def demo_corpus(ctx: DemoContext) -> Path:
    """The corpus every Sherlock demo section uses, made once per ``abduct demo``."""
    def make() -> Path:
        ctx.say(f"synthesising a Sherlock corpus ({ctx.images or DEMO_IMAGES} images)")
        return synthesize(ctx.dir("sherlock-data"), images=ctx.images or DEMO_IMAGES, seed=ctx.seed)

    return ctx.shared("sherlock-corpus", make)
