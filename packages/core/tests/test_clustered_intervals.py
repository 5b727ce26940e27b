"""Intervals by cluster (``UnitScores.clustered``): unchanged without clusters (bit for bit),
equal with one unit per cluster, wider where a cluster's units agree, against a cluster
bootstrap written out, and clusters in units.json. (abduct-report tests its paired tests by
cluster, and results.json, units.json and ``abduct compare`` end to end.)"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from abduct import PluginError, UnitScores
from abduct._stats.resampling import interval, rng_for
from abduct._stats.unitsfile import checked, decode, encode

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


def test_an_old_units_file_reads_and_writes_as_before(tmp_path: Path) -> None:
    old = {"accuracy": {"unit": "question", "aggregate": "mean", "scale": 100.0, "ids": ["a", "b"], "values": [1.0, 0.0]}}
    scores = decode(old, tmp_path / "units.json")["accuracy"]
    assert scores.cluster == "" and scores.clusters == () and encode({"accuracy": scores}) == old


# -- one unit per cluster: the same numbers ----------------------------------------------------
def test_one_question_per_video_gives_the_unclustered_numbers() -> None:
    rng = np.random.default_rng(6)
    a = _means(list(rng.integers(0, 2, 50).astype(float)))
    plain, grouped = interval(a, 1000, 0, "m"), interval(a.clustered("video", _video_of([1] * 50)), 1000, 0, "m")
    assert plain is not None and grouped is not None
    assert grouped == {**plain, "clustered_by": "video", "clusters": 50}


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
