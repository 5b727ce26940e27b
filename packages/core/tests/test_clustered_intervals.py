"""Intervals and paired tests by cluster (``UnitScores.clustered``): unchanged without clusters
(bit for bit), equal with one unit per cluster, wider where a cluster's units agree, the
interval against a cluster bootstrap written out, the paired test against all 2^k sign flips
enumerated, and results.json, units.json and ``abduct compare`` end to end."""

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

from abduct import (
    DataError,
    Evaluation,
    PluginError,
    Records,
    Registration,
    RunInfo,
    Settings,
    Spec,
    UnitScores,
    hookimpl,
)
from abduct._cli import main
from abduct._registry.registry import Registry, build_registry, reset_registry
from abduct._stats.resampling import interval, paired_test, rng_for
from abduct._stats.unitsfile import checked, decode, encode
from abduct_testing.toy import ToyChoice, ToyPlugin, write_toy_data

OLD_KEYS = {"low", "high", "level", "method", "resamples", "unit", "units"}  # an interval before clusters existed
ALPHA = (1 - 0.95) / 2
TAILS = [100 * ALPHA, 100 * (1 - ALPHA)]  # the percentiles as the interval computes them (not exactly 2.5)


def _means(values: Sequence[float]) -> UnitScores:
    return UnitScores.means("question", {f"q{i}": v for i, v in enumerate(values)})


def _video_of(sizes: Sequence[int]) -> dict[str, str]:
    """Question ids q0, q1, ... over videos v0, v1, ... of the given sizes, in order."""
    return {f"q{i}": f"v{c}" for i, c in enumerate(c for c, size in enumerate(sizes) for _ in range(size))}


# -- no clusters: today's numbers, bit for bit -----------------------------------------------
def test_without_clusters_the_interval_is_the_plain_bootstrap_bit_for_bit() -> None:
    rng = np.random.default_rng(4)
    values = rng.integers(0, 2, 300).astype(float)
    found = interval(_means(list(values)), 1000, 7, "accuracy")
    draws = rng_for(7, "accuracy").integers(0, 300, (1000, 300))  # scipy's percentile bootstrap, written out
    expected = np.percentile(100.0 * values[draws].mean(axis=-1), TAILS)
    assert found is not None and set(found) == OLD_KEYS
    assert (found["low"], found["high"]) == (float(expected[0]), float(expected[1]))  # ==, not approx

    rows = {f"s{i}": (float(rng.integers(0, 4)), 4.0) for i in range(80)}
    ratio = interval(UnitScores.ratio("image", rows), 500, 3, "share")
    table = np.array(list(rows.values()))
    sums = table[rng_for(3, "share").integers(0, 80, (500, 80))].sum(axis=-2)
    expected = np.percentile(100.0 * (sums[..., 0] / sums[..., 1]), TAILS)
    assert ratio is not None and (ratio["low"], ratio["high"]) == (float(expected[0]), float(expected[1]))


def test_without_clusters_the_paired_test_is_the_plain_one_bit_for_bit() -> None:
    rng = np.random.default_rng(5)
    a, b = rng.integers(0, 2, 120).astype(float), rng.integers(0, 2, 120).astype(float)
    test = paired_test(_means(list(a)), _means(list(b)), 999, 2, "accuracy")
    draws = rng_for(2, "accuracy", "paired").integers(0, 120, (999, 120))
    expected = np.percentile(100.0 * b[draws].mean(axis=-1) - 100.0 * a[draws].mean(axis=-1), TAILS)
    ref = stats.permutation_test((a, b), lambda x, y, axis=-1: 100.0 * y.mean(axis=axis) - 100.0 * x.mean(axis=axis),
                                 permutation_type="samples", vectorized=True, n_resamples=999,
                                 rng=rng_for(2, "accuracy", "permutation"))
    assert test is not None and "clustered_by" not in test and test["units"] == 120
    assert (test["low"], test["high"], test["p_value"]) == (float(expected[0]), float(expected[1]), float(ref.pvalue))


def test_an_old_units_file_reads_and_writes_as_before(tmp_path: Path) -> None:
    old = {"accuracy": {"unit": "question", "aggregate": "mean", "scale": 100.0, "ids": ["a", "b"], "values": [1.0, 0.0]}}
    scores = decode(old, tmp_path / "units.json")["accuracy"]
    assert scores.cluster == "" and scores.clusters == () and encode({"accuracy": scores}) == old


# -- one unit per cluster: the same numbers ----------------------------------------------------
def test_one_question_per_video_gives_the_unclustered_numbers() -> None:
    rng = np.random.default_rng(6)
    a, b = _means(list(rng.integers(0, 2, 50).astype(float))), _means(list(rng.integers(0, 2, 50).astype(float)))
    videos = _video_of([1] * 50)
    ca, cb = a.clustered("video", videos), b.clustered("video", videos)
    plain, grouped = interval(a, 1000, 0, "m"), interval(ca, 1000, 0, "m")
    assert plain is not None and grouped is not None
    assert grouped == {**plain, "clustered_by": "video", "clusters": 50}
    plain_test, grouped_test = paired_test(a, b, 999, 0, "m"), paired_test(ca, cb, 999, 0, "m")
    assert plain_test is not None and grouped_test == {**plain_test, "clustered_by": "video", "clusters": 50}


# -- questions of a video that agree: wider ----------------------------------------------------
def test_a_clustered_interval_is_wider_where_a_videos_questions_agree() -> None:
    # 60 videos of 5 questions each, a video's questions all right or all wrong: 60 independent
    # outcomes, not 300, so the interval is about sqrt(5) = 2.2 times as wide
    right = np.random.default_rng(7).integers(0, 2, 60)
    scores = _means([float(right[i // 5]) for i in range(300)])
    plain = interval(scores, 1000, 0, "accuracy")
    grouped = interval(scores.clustered("video", _video_of([5] * 60)), 1000, 0, "accuracy")
    assert plain is not None and grouped is not None
    assert grouped["high"] - grouped["low"] > 1.6 * (plain["high"] - plain["low"])
    assert (grouped["units"], grouped["clusters"], grouped["clustered_by"]) == (300, 60, "video")


def test_the_clustered_interval_is_the_ratio_estimator_over_drawn_clusters() -> None:
    # videos of 1 to 6 questions: a resample's figure is the drawn videos' right answers over
    # their questions (not the mean of per-video means), recomputed here at the unit level
    sizes = [1, 6, 2, 3, 1, 4, 5, 2, 2, 3, 6, 1]
    videos = _video_of(sizes)
    values = np.random.default_rng(8).integers(0, 2, len(videos)).astype(float)
    found = interval(_means(list(values)).clustered("video", videos), 2000, 9, "accuracy")
    members = [np.flatnonzero([v == f"v{c}" for v in videos.values()]) for c in range(len(sizes))]
    figures = [100.0 * values[np.concatenate([members[c] for c in draw])].mean()
               for draw in rng_for(9, "accuracy").integers(0, len(sizes), (2000, len(sizes)))]
    assert found is not None
    assert (found["low"], found["high"]) == pytest.approx(tuple(np.percentile(figures, [2.5, 97.5])), abs=1e-9)


def test_a_corpus_metric_pools_its_clusters_statistics() -> None:
    rows = {f"q{i}": (float(i % 3), 3.0) for i in range(12)}
    videos = _video_of([4, 4, 4])
    found = interval(UnitScores.ratio("question", rows).clustered("video", videos), 500, 1, "share")
    table = np.array(list(rows.values())).reshape(3, 4, 2).sum(axis=1)  # each video's summed row
    sums = table[rng_for(1, "share").integers(0, 3, (500, 3))].sum(axis=-2)
    assert found is not None and found["clusters"] == 3
    assert (found["low"], found["high"]) == pytest.approx(tuple(np.percentile(100 * sums[:, 0] / sums[:, 1],
                                                                               [2.5, 97.5])), abs=1e-9)


# -- the paired test by cluster against every sign flip ----------------------------------------
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
    for draw in rng_for(3, "accuracy", "paired").integers(0, 10, (999, 10)):
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


# -- declarations and units.json ---------------------------------------------------------------
def test_declared_clusters_are_checked() -> None:
    scores = _means([1.0, 0.0])
    assert checked({"accuracy": scores.clustered("video", {"q0": "v", "q1": "v"})}, {"accuracy": 50.0}, "task 't'")
    with pytest.raises(PluginError, match="unit 'q1' has no video"):
        checked({"accuracy": scores.clustered("video", {"q0": "v"})}, {"accuracy": 50.0}, "task 't'")
    with pytest.raises(PluginError, match="1 clusters for 2 units"):
        checked({"accuracy": UnitScores("q", ("a", "b"), (1.0, 0.0), cluster="video", clusters=("v",))},
                {"accuracy": 50.0}, "task 't'")


def test_clusters_survive_units_json_and_breakdowns(tmp_path: Path) -> None:
    scores = _means([1.0, 0.0, 1.0]).clustered("video", {"q0": "a", "q1": "b", "q2": "a"})
    assert decode(json.loads(json.dumps(encode({"m": scores}))), tmp_path / "units.json")["m"] == scores
    part = scores.breakdown("m", {"by_kind": {"q1": "k", "q2": "k"}})["by_kind.k.m"]
    assert part.ids == ("q1", "q2") and part.clusters == ("b", "a") and part.cluster == "video"


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
        yield Registration("toy-by-image", "Toy multiple choice by image", "test_clustered_intervals:make_by_image")


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
