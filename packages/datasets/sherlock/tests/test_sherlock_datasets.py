"""Sherlock's registered datasets: each task reads its own (``sherlock``, ``sherlock-localization``,
``sherlock-comparison``, ``sherlock-generation``), and ``--dataset NAME,key=value`` changes what
it reads; an option a task's dataset cannot use is refused with one line."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PIL import Image, ImageOps
from sherlock_test_util import PixelReader, registry_with_test_models, write_json

from abduct import Task
from abduct.host import EvalConfig, build_registry, get_registry, run_evaluation
from abduct_sherlock import load_instances
from abduct_testing import main

DATASETS = {"sherlock-retrieval": "sherlock", "sherlock-localization": "sherlock-localization",
            "sherlock-comparison": "sherlock-comparison", "sherlock-generation": "sherlock-generation"}


def _eval(data: Path, out: Path, task: str, model: str = "random", datasets: tuple[str, ...] = ()) -> dict[str, Any]:
    return run_evaluation(EvalConfig(task=task, model=model, data_dir=data, out_dir=out, quiet=True, use_cache=False,
                                     datasets=datasets), registry_with_test_models())


def _predictions(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()]


@pytest.fixture(scope="module")
def inverted_roots(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Copies of the corpus's VG and VCR image folders, every image's colours inverted."""
    root = tmp_path_factory.mktemp("roots")
    for name in ("vg", "vcr"):
        shutil.copytree(corpus / "images" / name, root / name)
    for path in root.rglob("*.jpg"):
        ImageOps.invert(Image.open(path).convert("RGB")).save(path)
    return root / "vg", root / "vcr"


@pytest.fixture
def pixel_reads() -> Iterator[list[str]]:
    PixelReader.seen = []
    yield PixelReader.seen
    PixelReader.seen = []


def test_every_task_names_its_dataset() -> None:
    for task, dataset in DATASETS.items():
        loaded = get_registry().create("task", task)
        assert isinstance(loaded, Task) and loaded.dataset == dataset
        assert not hasattr(loaded, "evaluate")


@pytest.mark.parametrize("task", sorted(DATASETS))
def test_the_image_roots_change_what_every_task_reads(corpus: Path, inverted_roots: tuple[Path, Path], tmp_path: Path,
                                                      task: str, pixel_reads: list[str]) -> None:
    """vg_root/vcr_root move every image a task reads, the leaderboard rows' included: a model
    reading pixels sees the inverted copies (other predictions; other metrics where they score)."""
    if task == "sherlock-generation":
        pytest.importorskip("abduct_metrics")  # its metrics; the integration session has them
    vg, vcr = inverted_roots
    default = _eval(corpus, tmp_path / "a", task, "pixel-reader")
    assert pixel_reads and all(Path(p).is_relative_to(corpus / "images") for p in pixel_reads)
    pixel_reads.clear()
    moved = _eval(corpus, tmp_path / "b", task, "pixel-reader", (f"{DATASETS[task]},vg_root={vg},vcr_root={vcr}",))
    assert pixel_reads and all(Path(p).is_relative_to(vg) or Path(p).is_relative_to(vcr) for p in pixel_reads)
    assert {Path(p).is_relative_to(vg) for p in pixel_reads} == {True, False}  # both roots were read
    assert _predictions(tmp_path / "a") != _predictions(tmp_path / "b")
    if task != "sherlock-generation":  # its metrics need abduct-metrics; its predictions differ
        results = json.loads((tmp_path / "b" / "results.json").read_text())
        assert results["metrics"] == moved["metrics"] != default["metrics"]


def test_skip_invalid_changes_what_retrieval_reads(corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "data"
    data.mkdir()
    records = json.loads((corpus / "sherlock_val_with_split_idxs_v1_1.json").read_text())
    records[0]["inputs"]["confidence"] = 9
    write_json(data / "sherlock_val_with_split_idxs_v1_1.json", records)
    args = ["eval", "sherlock-retrieval", "--model", "random", "--data", str(data), "--quiet", "--no-cache"]
    assert main([*args, "--out", str(tmp_path / "refused")]) == 2
    assert "record 0, field 'inputs.confidence'" in capsys.readouterr().err
    assert main([*args, "--out", str(tmp_path / "o"), "--dataset", "sherlock,skip_invalid=true"]) == 0
    results = json.loads((tmp_path / "o" / "results.json").read_text())
    assert results["metrics"]["instances"] == len(records) - 1
    assert records[0]["instance_id"] not in {r["instance_id"] for r in _predictions(tmp_path / "o")}


def test_localization_source_chooses_the_files(corpus: Path, tmp_path: Path) -> None:
    """source=annotations reads the annotations and proposals although the leaderboard files are
    there: the same rows, so the same numbers, from other files."""
    leaderboard = _eval(corpus, tmp_path / "l", "sherlock-localization")
    annotations = _eval(corpus, tmp_path / "a", "sherlock-localization",
                        datasets=("sherlock-localization,source=annotations",))
    assert (leaderboard["details"]["source"], annotations["details"]["source"]) == ("leaderboard", "annotations")
    assert annotations["metrics"] == leaderboard["metrics"]
    files = {name: set(json.loads((tmp_path / name / "results.json").read_text())["data"]["files"]) for name in "la"}
    assert files["l"] == {"val_localization/val_localization_instances.json",
                          "val_localization/val_localization_answer_key.json", "sherlock_val_with_split_idxs_v1_1.json"}
    assert files["a"] == {"sherlock_val_with_split_idxs_v1_1.json", "sherlock_val_autoboxes.json"}


def _refused(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert main(["eval", *args, "--model", "random", "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    return err


def test_an_option_a_task_cannot_use_is_one_line(corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    where = ["--data", str(corpus), "--out", str(tmp_path / "o")]
    assert "reads dataset 'sherlock-comparison', not 'sherlock'" in _refused(
        capsys, "sherlock-comparison", *where, "--dataset", f"sherlock,vg_root={tmp_path}")
    assert "has no option 'source'" in _refused(capsys, "sherlock-retrieval", *where, "--dataset", "sherlock,source=annotations")
    assert "has no option 'source'" in _refused(capsys, "sherlock-comparison", *where, "--dataset",
                                                "sherlock-comparison,source=annotations")
    err = _refused(capsys, "sherlock-localization", *where, "--dataset", "sherlock-localization,source=elsewhere")
    assert "source" in err and "elsewhere" in err and "is not one of auto, leaderboard, annotations" in err
    data = tmp_path / "data"
    shutil.copytree(corpus, data, ignore=shutil.ignore_patterns("images", "val_localization"))
    err = _refused(capsys, "sherlock-localization", "--data", str(data), "--out", str(tmp_path / "o2"),
                   "--dataset", "sherlock-localization,source=leaderboard")
    assert "source=leaderboard" in err and "val_localization_instances.json not found" in err


@pytest.mark.parametrize("name", sorted(set(DATASETS.values())))
def test_every_dataset_checks_the_directory_with_its_roots(corpus: Path, tmp_path: Path, name: str) -> None:
    registry = build_registry()
    assert registry.create("dataset", name).check(corpus) == []
    problems = registry.create("dataset", f"{name},vg_root={tmp_path}").check(corpus)
    assert any(str(tmp_path) in p for p in problems) and all(str(tmp_path) in p for p in problems if "VG_" in p)


def test_the_generation_pool_is_the_training_inferences(corpus: Path, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    dataset = build_registry().create("dataset", "sherlock-generation")
    examples = dataset.load(corpus, "val")
    train = [inst.inference for inst in load_instances(corpus, "train")]
    assert [e.instance for e in examples] == load_instances(corpus, "val")
    assert all(e.pool is examples[0].pool for e in examples) and examples[0].pool.texts == tuple(dict.fromkeys(train))
    data = tmp_path / "data"  # without a training file: no pool, which only a choosing generator needs
    shutil.copytree(corpus, data, ignore=shutil.ignore_patterns("sherlock_train_*"))
    assert all(e.pool is None for e in dataset.load(data, "val"))
    assert dataset.files(data, "val") == [data / "sherlock_val_with_split_idxs_v1_1.json"]
    assert "picks from a pool of texts" in _refused(capsys, "sherlock-generation", "--data", str(data),
                                                    "--out", str(tmp_path / "o"), "--limit", "2")
