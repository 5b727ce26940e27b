"""The video clusters VAR's intervals resample: examples that share a video (a chain over
several videos links theirs) are one cluster, on hand-made chains and on the real val file;
a run on the real val annotations records them in results.json and units.json."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from abduct_testing import main, shared_data_dir
from abduct_var.loader import load_split, parse_examples
from abduct_var.records import VarExample
from abduct_var.tasks import video_clusters

REAL = shared_data_dir()
needs_real = pytest.mark.skipif(REAL is None or not (REAL / "var").is_dir(), reason="shared VAR files absent")


def _chains(videos: dict[str, list[str]]) -> list[VarExample]:
    event = {"timestamp": [0.0, 1.0], "clip_idx": 0, "clip_tot": 1, "duration": 5.0, "sentence": "x"}
    data = {x: {"events": [{**event, "video_id": v} for v in [*chain, chain[-1]]], "hypothesis": 0, "split": "val"}
            for x, chain in videos.items()}
    return parse_examples(data, Path("hand-made.json"))


def test_a_chain_over_two_videos_joins_their_examples() -> None:
    found = video_clusters(_chains({"a": ["v3"], "b": ["v2", "v3"], "c": ["v2"], "d": ["v5"], "e": ["v9", "v5"],
                                    "f": ["v7"]}))
    assert found == {"a": "v2", "b": "v2", "c": "v2", "d": "v5", "e": "v5", "f": "v7"}


def _connected(examples: list[VarExample], members: list[str]) -> bool:
    """Whether ``members`` are linked by shared videos (a walk over them, not a union-find)."""
    videos = {x.id: set(x.video_ids) for x in examples if x.id in members}
    reached, frontier = {members[0]}, [members[0]]
    while frontier:
        here = videos[frontier.pop()]
        for other, theirs in videos.items():
            if other not in reached and here & theirs:
                reached.add(other)
                frontier.append(other)
    return reached == set(members)


@needs_real
def test_real_val_clusters_are_the_examples_linked_by_shared_videos() -> None:
    assert REAL is not None
    examples, _ = load_split(REAL / "var", "val")
    found = video_clusters(examples)
    by_video: dict[str, set[str]] = {}
    for x in examples:
        for video in x.video_ids:
            by_video.setdefault(video, set()).add(found[x.id])
    assert all(len(clusters) == 1 for clusters in by_video.values())  # a video's examples in one cluster
    members: dict[str, list[str]] = {}
    for x in examples:
        members.setdefault(found[x.id], []).append(x.id)
    assert all(_connected(examples, group) for group in members.values())  # and no more than those
    assert len(members) < len(examples)  # VAR's examples share chains: clustering matters here


@needs_real
def test_a_run_records_its_video_clusters(tmp_path: Path) -> None:
    assert REAL is not None
    out = tmp_path / "run"
    assert main(["eval", "var-explanation,meteor=false,frames=false", "--model", "random", "--data",
                 str(REAL / "var"), "--out", str(out), "--limit", "80", "--quiet"]) == 0
    interval = json.loads((out / "results.json").read_text())["intervals"]["cider"]
    units = json.loads((out / "units.json").read_text())["cider"]
    examples, _ = load_split(REAL / "var", "val")
    whole_split = video_clusters(examples)  # the clusters do not depend on --limit
    assert units["cluster"] == "video" and units["clusters"] == [whole_split[x] for x in units["ids"]]
    assert (interval["units"], interval["clustered_by"]) == (80, "video")
    assert interval["clusters"] == len(set(units["clusters"])) < 80
