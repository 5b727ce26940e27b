"""The annotation loader on the real release files and on broken ones; abduct var check."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

from abduct import DataError
from abduct_testing import main, shared_data_dir
from abduct_var.inputs import chain_input, chain_slots, event_input, is_masked
from abduct_var.loader import load_file, load_split, parse_examples
from abduct_var.records import MAX_EVENTS

REAL = shared_data_dir()
needs_real = pytest.mark.skipif(REAL is None or not (REAL / "var").is_dir(), reason="shared VAR files absent")


@needs_real
@pytest.mark.parametrize("split, examples, events", [("val", 460, 2181), ("test", 1095, 4834)])
def test_real_files_load_without_warnings(split: str, examples: int, events: int) -> None:
    assert REAL is not None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        loaded, file = load_split(REAL / "var", split)
    assert file.name == f"var_{split}_v1.0.json"
    assert len(loaded) == examples and sum(len(x.events) for x in loaded) == events
    every = [e for x in loaded for e in x.events]
    # the quirks the issue lists are all there and all accepted
    assert any(e.sentence.startswith(" ") for e in every)
    assert any(e.end > e.duration for e in every)
    assert any(len(x.video_ids) > 1 for x in loaded)
    assert any(b.start < a.end for x in loaded for a, b in zip(x.events, x.events[1:]))
    chains: dict[tuple[object, ...], set[int]] = {}
    for x in loaded:
        chains.setdefault(tuple(x.events), set()).add(x.hypothesis)
    assert any(len(h) > 1 for h in chains.values())
    if split == "test":
        assert any(ord(c) > 127 for e in every for c in e.sentence)
        assert max(len(x.events) for x in loaded) > MAX_EVENTS


def _write(tmp_path: Path, data: object) -> Path:
    path = tmp_path / "var_val_v1.0.json"
    path.write_text(json.dumps(data))
    return path


EVENT = {"video_id": "v1", "timestamp": [0, 2.5], "clip_idx": 0, "clip_tot": 2, "duration": 9, "sentence": "a"}


@pytest.mark.parametrize("mutate, field", [
    (lambda x: x["events"][1].pop("sentence"), "events[1]"),
    (lambda x: x["events"][0].update(timestamp=[3, 1]), "events[0].timestamp"),
    (lambda x: x["events"][0].update(timestamp=[0]), "events[0].timestamp"),
    (lambda x: x["events"][1].update(duration="9"), "events[1].duration"),
    (lambda x: x["events"][1].update(video_id="../x"), "events[1].video_id"),
    (lambda x: x["events"][1].update(clip_idx=1.5), "events[1].clip_idx"),
    (lambda x: x.update(hypothesis=2), "hypothesis"),
    (lambda x: x.update(hypothesis=True), "hypothesis"),
    (lambda x: x.pop("events"), "events"),
])
def test_bad_records_name_file_example_and_field(tmp_path: Path, mutate: object, field: str) -> None:
    example = {"events": [dict(EVENT), dict(EVENT, clip_idx=1)], "hypothesis": 1, "split": "val"}
    mutate(example)  # type: ignore[operator]
    path = _write(tmp_path, {"ok": {"events": [dict(EVENT), dict(EVENT)], "hypothesis": 0}, "bad_one": example})
    with pytest.raises(DataError) as caught:
        load_file(path)
    assert caught.value.file == str(path) and caught.value.record == "bad_one" and caught.value.field == field


def test_cli_errors_exit_2_with_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path, {"x1": {"events": [EVENT], "hypothesis": 0}})
    assert main(["var", "check", "--data", str(tmp_path)]) == 1  # the check ran and found the problem
    out = capsys.readouterr().out
    assert f"{path}, record x1, field 'events'" in out
    assert main(["eval", "var-explanation", "--model", "random", "--data", str(tmp_path), "--out",
                 str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err.strip()
    assert "record x1" in err and len(err.splitlines()) == 1


def test_check_lists_missing_videos(corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["var", "check", "--data", str(corpus)]) == 0
    assert "no problems found" in capsys.readouterr().out
    data = json.loads((corpus / "var_val_v1.0.json").read_text())
    _write(tmp_path, data)
    (tmp_path / "videos").mkdir()
    first = next(iter(data.values()))["events"][0]["video_id"]
    for video in (corpus / "videos").glob("val*"):
        if video.stem != first:
            (tmp_path / "videos" / video.name).symlink_to(video)
    webm = tmp_path / "videos" / "val0003.mp4"  # another container is found too
    webm.rename(webm.with_suffix(".webm"))
    assert main(["var", "check", "--data", str(tmp_path), "--json"]) == 1
    problems = json.loads(capsys.readouterr().out)
    assert problems == [f"video {first}: missing ({tmp_path / 'videos'}/{first}.{{mp4,mkv,webm}}; "
                        f"{sum(e['video_id'] == first for x in data.values() for e in x['events'])} event(s))"]


def test_chain_input_masks_only_the_hypothesis(tmp_path: Path) -> None:
    raw = {"x": {"events": [dict(EVENT, video_id=f"v{i}", timestamp=[i, i + 1]) for i in range(14)], "hypothesis": 2}}
    (x,) = parse_examples(raw, tmp_path / "f.json")
    slots = chain_slots(chain_input(x, tmp_path, masked=x.hypothesis))
    assert len(slots) == MAX_EVENTS  # only the first 12 events count
    assert [is_masked(s) for s in slots] == [i == 2 for i in range(MAX_EVENTS)]
    assert slots[3] == event_input(x.events[3], tmp_path)
    assert slots[3].media == str(tmp_path / "v3.mp4") and slots[3].spans == ((3.0, 4.0),)
