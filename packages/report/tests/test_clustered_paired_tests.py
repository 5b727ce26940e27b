"""Paired tests by cluster (``UnitScores.clustered``): unchanged without clusters (bit for bit),
equal with one unit per cluster, against all 2^k sign flips enumerated and a cluster bootstrap
written out, refused where two runs cluster differently, and results.json, units.json and
``abduct compare`` end to end."""

from __future__ import annotations

import itertools
import json
import shutil
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy import stats

from abduct import DataError, Evaluation, Records, Registration, RunInfo, Settings, Spec, UnitScores, hookimpl
from abduct.host import Registry, build_registry, interval_rng, main, reset_registry
from abduct_report.paired_tests import paired_test
from abduct_testing.toy import ToyChoice, ToyPlugin, write_toy_data


def _means(values: Sequence[float]) -> UnitScores:
    return UnitScores.means("question", {f"q{i}": v for i, v in enumerate(values)})


def _video_of(sizes: Sequence[int]) -> dict[str, str]:
    """Question ids q0, q1, ... over videos v0, v1, ... of the given sizes, in order."""
    return {f"q{i}": f"v{c}" for i, c in enumerate(c for c, size in enumerate(sizes) for _ in range(size))}


def test_without_clusters_the_paired_test_is_the_plain_one_bit_for_bit() -> None:
    rng = np.random.default_rng(5)
    a, b = rng.integers(0, 2, 120).astype(float), rng.integers(0, 2, 120).astype(float)
    test = paired_test(_means(list(a)), _means(list(b)), 999, 2, "accuracy")
    draws = interval_rng(2, "accuracy", "paired").integers(0, 120, (999, 120))
    alpha = (1 - 0.95) / 2  # the percentiles as the bootstrap computes them (not exactly 2.5 and 97.5)
    expected = np.percentile(100.0 * b[draws].mean(axis=-1) - 100.0 * a[draws].mean(axis=-1),
                             [100 * alpha, 100 * (1 - alpha)])
    ref = stats.permutation_test((a, b), lambda x, y, axis=-1: 100.0 * y.mean(axis=axis) - 100.0 * x.mean(axis=axis),
                                 permutation_type="samples", vectorized=True, n_resamples=999,
                                 rng=interval_rng(2, "accuracy", "permutation"))
    assert test is not None and "clustered_by" not in test and test["units"] == 120
    assert (test["low"], test["high"], test["p_value"]) == (float(expected[0]), float(expected[1]), float(ref.pvalue))


def test_one_question_per_video_gives_the_unclustered_numbers() -> None:
    rng = np.random.default_rng(6)
    a, b = _means(list(rng.integers(0, 2, 50).astype(float))), _means(list(rng.integers(0, 2, 50).astype(float)))
    videos = _video_of([1] * 50)
    plain, grouped = paired_test(a, b, 999, 0, "m"), paired_test(a.clustered("video", videos),
                                                                  b.clustered("video", videos), 999, 0, "m")
    assert plain is not None and grouped == {**plain, "clustered_by": "video", "clusters": 50}


def test_the_paired_test_by_cluster_is_every_sign_flip_enumerated() -> None:
    sizes = [3, 1, 4, 2, 5, 2, 3]  # 7 videos: 128 flips, fewer than the resamples, so scipy enumerates them
    videos = _video_of(sizes)
    rng = np.random.default_rng(10)
    a, b = rng.integers(0, 2, len(videos)).astype(float), rng.integers(0, 2, len(videos)).astype(float)
    b[:7] = 1.0  # a clear difference in the first videos
    test = paired_test(_means(list(a)).clustered("video", videos), _means(list(b)).clustered("video", videos),
                       999, 0, "accuracy")
    cluster = np.array([int(v[1:]) for v in videos.values()])
    observed = 100 * (b.mean() - a.mean())
    null = []
    for signs in itertools.product((False, True), repeat=len(sizes)):  # swap both runs' answers on a video's questions
        swap = np.array(signs)[cluster]
        null.append(100 * (np.where(swap, a, b).mean() - np.where(swap, b, a).mean()))
    p = np.mean(np.abs(null) >= abs(observed) - 1e-9)
    assert test is not None and test["test"] == "sign-flip permutation"
    assert test["difference"] == pytest.approx(observed) and test["p_value"] == pytest.approx(p)
    assert (test["units"], test["clusters"], test["clustered_by"]) == (20, 7, "video")


def test_the_paired_interval_resamples_videos_for_both_runs() -> None:
    videos = _video_of([2, 3, 1, 4, 2, 3, 5, 1, 2, 2])
    rng = np.random.default_rng(11)
    a, b = rng.integers(0, 2, len(videos)).astype(float), rng.integers(0, 2, len(videos)).astype(float)
    test = paired_test(_means(list(a)).clustered("video", videos), _means(list(b)).clustered("video", videos),
                       999, 3, "accuracy")
    cluster = np.array([int(v[1:]) for v in videos.values()])
    differences = []
    for draw in interval_rng(3, "accuracy", "paired").integers(0, 10, (999, 10)):
        drawn = np.concatenate([np.flatnonzero(cluster == c) for c in draw])
        differences.append(100 * (b[drawn].mean() - a[drawn].mean()))
    assert test is not None
    assert (test["low"], test["high"]) == pytest.approx(tuple(np.percentile(differences, [2.5, 97.5])), abs=1e-9)


def test_runs_that_cluster_their_units_differently_are_not_paired() -> None:
    a, b = _means([1.0, 0.0, 1.0, 1.0]), _means([0.0, 0.0, 1.0, 1.0])
    by_video = {"q0": "x", "q1": "x", "q2": "y", "q3": "y"}
    renamed = {"q0": "p", "q1": "p", "q2": "r", "q3": "r"}  # the same grouping, other names: paired
    test = paired_test(a.clustered("video", by_video), b.clustered("video", renamed), 99, 0, "m")
    assert test is not None and test["clusters"] == 2
    with pytest.raises(DataError, match="'q0' and 'q2' share video 'p' in this one, not in the first run"):
        paired_test(a.clustered("video", by_video), b.clustered("video", {**renamed, "q2": "p"}), 99, 0, "m")
    with pytest.raises(DataError, match="clustered by video in the first run, by image in this one"):
        paired_test(a.clustered("video", by_video), b.clustered("image", by_video), 99, 0, "m")
    one_side = paired_test(a, b.clustered("video", by_video), 99, 0, "m")  # an older run without clusters
    assert one_side is not None and one_side["clustered_by"] == "video"


# -- end to end: results.json, units.json, abduct compare ---------------------------------------
class ToyByImage(ToyChoice):
    """toy-choice with its questions clustered by the caption's image number (3 clusters of 4+)."""

    def finish(self, examples: Sequence[dict[str, Any]], records: Mapping[str, Records], run: RunInfo) -> Evaluation:
        evaluation = super().finish(examples, records, run)
        image = {it["id"]: it["caption"] for it in examples}
        evaluation.units["accuracy"] = evaluation.units["accuracy"].clustered("image", image)
        return evaluation


def make_by_image(spec: Spec, settings: Settings) -> ToyByImage:
    return ToyByImage()


class _Plugin(ToyPlugin):
    @hookimpl
    def register_tasks(self) -> Iterator[Registration]:
        yield from super().register_tasks()
        yield Registration("toy-by-image", "Toy multiple choice by image", f"{__name__}:make_by_image")


@pytest.fixture
def clustered_registry() -> Iterator[Registry]:
    registry = build_registry(extra_plugins=[("toy", _Plugin())])
    reset_registry(registry)
    yield registry
    reset_registry()


def test_results_units_and_compare_say_the_cluster(clustered_registry: Registry, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    data = write_toy_data(tmp_path / "toy", items=24)
    runs = []
    for name, model in (("a", "random"), ("b", "random:1")):
        assert main(["eval", "toy-by-image", "--model", model, "--data", str(data), "--out", str(tmp_path / name),
                     "--quiet"]) == 0
        runs.append(tmp_path / name)
    ci = json.loads((runs[0] / "results.json").read_text())["intervals"]["accuracy"]
    assert (ci["units"], ci["clusters"], ci["clustered_by"]) == (24, 3, "image")
    assert "question (24, in 3 image clusters)" in (runs[0] / "report.md").read_text()
    units = json.loads((runs[0] / "units.json").read_text())["accuracy"]
    assert units["cluster"] == "image" and len(units["clusters"]) == 24

    capsys.readouterr()
    assert main(["compare", *map(str, runs), "--json", "--no-published"]) == 0
    test = json.loads(capsys.readouterr().out)["runs"][1]["versus"]["metrics"]["accuracy"]
    assert (test["units"], test["clusters"], test["clustered_by"]) == (24, 3, "image")
    assert main(["compare", *map(str, runs), "--no-published"]) == 0
    assert "24 question in 3 image clusters" in capsys.readouterr().out

    moved = tmp_path / "moved"  # the same run with one question in another cluster
    shutil.copytree(runs[1], moved)
    units = json.loads((moved / "units.json").read_text())
    units["accuracy"]["clusters"][0] = "elsewhere"
    (moved / "units.json").write_text(json.dumps(units))
    assert main(["compare", str(runs[0]), str(moved), "--json", "--no-published"]) == 0
    versus = json.loads(capsys.readouterr().out)["runs"][1]["versus"]
    assert "metrics" not in versus and "clustered differently: 'q000' and 'q003' share image" in versus["refused"]
