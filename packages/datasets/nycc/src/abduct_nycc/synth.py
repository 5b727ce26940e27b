"""A tiny fake NYCC release in the Hugging Face repo's layout: the test split of all 30 configs
(``<config>/test-00000-of-00001.parquet``, fold 0 unsuffixed), the description and pixels
configs sharing instance ids, and the two public leaderboard sets (``<task>_test_set_public/
instances.json`` with JPEGs). Some cartoons are greyscale, as in the release.

The learnable rule: a cartoon is a flat colour; its own caption (matching), the finalist
(ranking) and the explanation name that colour. Extra columns (``questions``,
``n_tokens_label``) are written as the release has them and ignored by the loader.
"""

from __future__ import annotations

import hashlib
import io
import json
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from abduct.kit import building_folder
from abduct_nycc.layout import config_name
from abduct_nycc.records import LETTERS, N_FOLDS, TASKS

COLORS = {"red": (200, 40, 40), "green": (40, 160, 60), "blue": (40, 70, 200), "yellow": (220, 200, 40),
          "purple": (130, 50, 170), "orange": (230, 130, 30)}
DEFAULT_PER_FOLD = 8


def _jpeg(rgb: tuple[int, int, int], grey: bool) -> bytes:
    image = Image.new("RGB", (32, 24), rgb)
    buffer = io.BytesIO()
    (image.convert("L") if grey else image).save(buffer, format="JPEG")
    return buffer.getvalue()


def _write(path: Path, rows: list[dict[str, Any]]) -> None:
    import pyarrow as pa  # type: ignore[import-untyped,import-not-found,unused-ignore]
    import pyarrow.parquet as pq  # type: ignore[import-untyped,import-not-found,unused-ignore]

    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows), path)


def _instance(rng: np.random.Generator, task: str, fold: int, k: int, salt: str = "") -> dict[str, Any]:
    names = list(COLORS)
    color = names[(fold * 7 + k) % len(names)]
    others = [n for n in names if n != color]
    iid = hashlib.md5(f"{task}-{fold}-{k}{salt}".encode()).hexdigest()
    row: dict[str, Any] = {"contest_number": 500 + fold * 100 + k, "color": color, "instance_id": iid,
                           "image": {"bytes": _jpeg(COLORS[color], grey=k % 3 == 0), "path": None},
                           "questions": [f"why is it {color}?"]}
    if task == "explanation":
        caption = f"I told you the {color} one was mine."
        row.update(caption_choices=caption, label=f"The joke is that everything is {color}; the speaker claims "
                   f"the {color} thing as if it were unusual.", n_tokens_label=20)
        return row
    letters = LETTERS[task]
    gold = int(rng.integers(len(letters)))
    picks = [str(x) for x in rng.choice(others, size=len(letters), replace=False)]
    choices = [f"Nothing says {c} like a Monday." for c in picks]
    choices[gold] = f"Nothing says {color} like a Monday."
    row.update(caption_choices=choices, label=letters[gold], n_tokens_label=1)
    if task == "ranking":
        row["winner_source"] = "crowd_winner" if k % 2 else "official_winner"
    return row


def _description(row: dict[str, Any], task: str) -> str:
    text = f"scene: a room description: everything is {row['color']} uncanny: all of it entities: Color."
    if task == "explanation":
        return f"{text} caption: {row['caption_choices']}"
    return text + " choices " + " ".join(f"{letter}: {c}" for letter, c in zip(LETTERS[task], row["caption_choices"]))


def synthesize(out_dir: Path, per_fold: int = DEFAULT_PER_FOLD, seed: int = 0) -> Path:
    with building_folder(Path(out_dir)) as out:  # the release appears whole or not at all
        rng = np.random.default_rng(seed)
        for task in TASKS:
            for fold in range(N_FOLDS):
                rows = [_instance(rng, task, fold, k) for k in range(per_fold)]
                pixels = [{k: v for k, v in r.items() if k not in ("color", "questions")} for r in rows]
                described = [{**{k: v for k, v in r.items() if k != "color"}, "image_location": "a room",
                              "image_description": f"everything is {r['color']}", "image_uncanny_description": "all",
                              "entities": ["https://en.wikipedia.org/wiki/Color"],
                              "from_description": _description(r, task)} for r in rows]
                for configs, table in (("description", described), ("pixels", pixels)):
                    _write(out / config_name(task, fold, configs) / "test-00000-of-00001.parquet", table)
            if task in LETTERS:
                board = out / f"{task}_test_set_public"
                board.mkdir()
                entries = []
                for k in range(per_fold):
                    row = _instance(rng, task, 0, k, salt="-leaderboard")
                    name = f"{row['instance_id'][:12]}.jpg"
                    (board / name).write_bytes(row["image"]["bytes"])
                    entries.append({"choices": dict(zip(LETTERS[task], row["caption_choices"])), "image": name,
                                    "instance_id": row["instance_id"]})
                (board / "instances.json").write_text(json.dumps(entries, indent=1))
        # a "SYNTHETIC" file marks the release as made, not real: abduct compare never draws it beside paper rows
        (out / "SYNTHETIC").write_text(f"abduct synthetic NYCC release: per_fold={per_fold} seed={seed}\n")
    return Path(out_dir)
