from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from abduct_cosim.synth import synthesize
from abduct_testing import shared_data_dir


@pytest.fixture(scope="session")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small synthetic corpus shared by read-only tests."""
    return synthesize(tmp_path_factory.mktemp("cosim") / "data", train=24, val=30, seed=0)


@pytest.fixture(scope="session")
def real_cosim() -> Path:
    """The released CoSIm files (shared/data/cosim), read in place; skipped when absent."""
    shared = shared_data_dir()
    folder = shared / "cosim" if shared is not None else None
    if folder is None or not (folder / "val.json").is_file() or not (folder / "train.json").is_file():
        pytest.skip("the real CoSIm files (shared/data/cosim/{train,val}.json) are not available here")
    return folder


def record(choices: list[str] | None = None, label: int = 0, **fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"answer_choices": choices or ["a.", "b.", "c.", "d."], "answer_label": label,
                            "answer_orig": "No.", "change": "Add a dog.", "folder": "genome_1",
                            "img_fn": "1.jpg", "question": "Is there a dog?", "type": "hamlet"}
    base.update(fields)
    return base


def write_json(path: Path, obj: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj))
    return path
