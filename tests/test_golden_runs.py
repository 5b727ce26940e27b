"""Every task, on its benchmark's synthetic corpus, gives the outputs recorded in
``tests/golden/runs.json``: metrics exactly, and the same predictions and units.

The models are the deterministic ones whose numbers do not depend on the machine (the seeded
random baseline, the example plugin's mean colour, a served model that always answers the same),
so the file pins what the tasks and the runner compute, not what a CPU's kernels round. Record
it again (``ABDUCT_WRITE_GOLDEN=1``) only for a change meant to alter a number, and say why.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from conftest import abduct

GOLDEN = Path(__file__).parent / "golden" / "runs.json"
WRITE = os.environ.get("ABDUCT_WRITE_GOLDEN") == "1"

CORPORA = {  # name: the command that writes it (its --out added)
    "cosim": ("cosim", "synth", "--train", "8", "--val", "24"),
    "nleye": ("nleye", "synth", "--samples", "12"),
    "sherlock": ("sherlock", "synth", "--images", "24", "--chunk-size", "8"),
    "var": ("var", "synth", "--examples", "8"),
    "whoops": ("whoops", "synth", "--images", "10"),
    "example": ("example", "make-data", "--items", "12"),
}

# (case name, corpus, task, model, extra eval arguments); "SERVED" is the fake OpenAI server
CASES: list[tuple[str, str, str, str, tuple[str, ...]]] = [
    ("cosim", "cosim", "cosim", "random", ()),
    ("cosim-limit", "cosim", "cosim", "random", ("--limit", "10", "--seed", "3")),
    ("nleye-pairs", "nleye", "nleye-pairs", "random", ()),
    ("nleye-triplet", "nleye", "nleye-triplet", "random", ()),
    ("nleye-triplet-pixel", "nleye", "nleye-triplet", "dumb-pixel", ()),
    ("nleye-explanation", "nleye", "nleye-explanation", "random", ()),
    ("sherlock-retrieval", "sherlock", "sherlock-retrieval", "random", ()),
    ("sherlock-localization", "sherlock", "sherlock-localization", "random", ()),
    ("sherlock-comparison", "sherlock", "sherlock-comparison", "random", ()),
    ("sherlock-generation", "sherlock", "sherlock-generation", "random", ()),
    ("sherlock-retrieval-limit", "sherlock", "sherlock-retrieval", "random", ("--limit", "1")),
    ("var", "var", "var", "random", ()),
    ("var-explanation", "var", "var-explanation", "random", ()),
    ("var-premise", "var", "var-premise", "random", ()),
    ("whoops-captioning", "whoops", "whoops-captioning", "random", ()),
    ("whoops-matching", "whoops", "whoops-matching", "random", ()),
    ("whoops-vqa", "whoops", "whoops-vqa", "random", ()),
    ("whoops-identification", "whoops", "whoops-identification", "SERVED", ()),
    ("whoops-explanation", "whoops", "whoops-explanation", "SERVED", ("--judge", "SERVED")),
    ("example-colors", "example", "example-colors", "example-color", ()),
    ("example-describe", "example", "example-describe", "example-color", ()),
    ("tutorial-light", "tutorial", "tutorial-light", "random", ()),
]


@pytest.fixture(scope="module")
def corpora(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    made = {}
    for name, command in CORPORA.items():
        out = tmp_path_factory.mktemp(name)
        done = abduct(*command, "--out", str(out))
        assert done.returncode == 0, done.stderr
        made[name] = out
    made["tutorial"] = tutorial_pictures(tmp_path_factory.mktemp("tutorial"))
    return made


def tutorial_pictures(folder: Path) -> Path:
    """The tutorial's benchmark: pictures of six grey levels and labels.json."""
    labels = {}
    for i, grey in enumerate((30, 90, 160, 220, 60, 200)):
        Image.new("RGB", (8, 6), (grey, grey, grey)).save(folder / f"{i}.png")
        labels[f"{i}.png"] = "bright" if grey > 128 else "dark"
    (folder / "labels.json").write_text(json.dumps(labels))
    return folder


@pytest.fixture(scope="module")
def served() -> Iterator[str]:
    testing = pytest.importorskip("abduct_vlm.testing")
    with testing.FakeOpenAIServer() as server:
        yield f"openai:fake,base_url={server.base_url}"


def _canonical_lines(path: Path) -> list[str]:
    return sorted(json.dumps(json.loads(line), sort_keys=True) for line in path.read_text().splitlines())


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()[:16]


def outcome(out: Path) -> dict[str, Any]:
    results = json.loads((out / "results.json").read_text())
    return {"metrics": results["metrics"],
            "predictions": _digest(_canonical_lines(out / "predictions.jsonl")),
            "units": _digest(json.loads((out / "units.json").read_text()))}


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_the_run_gives_the_recorded_outputs(case: tuple[str, str, str, str, tuple[str, ...]], corpora: dict[str, Path],
                                            served: str, tmp_path: Path) -> None:
    name, corpus, task, model, extra = case
    args = [served if a == "SERVED" else a for a in (model, *extra)]
    done = abduct("eval", task, "--model", args[0], "--data", str(corpora[corpus]), "--out", str(tmp_path / "o"),
                  "--quiet", "--no-cache", *args[1:])
    assert done.returncode == 0, done.stderr
    got = outcome(tmp_path / "o")
    recorded = json.loads(GOLDEN.read_text()) if GOLDEN.exists() else {}
    if WRITE:
        recorded[name] = got
        GOLDEN.parent.mkdir(exist_ok=True)
        GOLDEN.write_text(json.dumps(dict(sorted(recorded.items())), indent=1, sort_keys=True) + "\n")
    assert name in recorded, f"no recorded outputs for {name}; record them with ABDUCT_WRITE_GOLDEN=1"
    assert got == recorded[name]
