"""Loading and validating the annotation files; `abduct sherlock check`."""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from sherlock_test_util import write_json

from abduct import AbductError, Box, DataError, Region, VisualInput
from abduct_sherlock import SherlockInstance, load_instances
from abduct_sherlock.layout import ImageRoots
from abduct_sherlock.loader import load_report
from abduct_testing import main

VAL = "sherlock_val_with_split_idxs_v1_1.json"
RECORD: dict[str, Any] = {
    "instance_id": "36adc017ebdbc0aa7f93ffa1c01b0568",
    "split_idx": 0,
    "inputs": {"image": {"url": "https://cs.stanford.edu/people/rak248/VG_100K/2370338.jpg", "width": 500, "height": 333},
               "bboxes": [{"left": 172, "top": 171, "width": 328, "height": 162}],
               "clue": "wooden debris thrown about the floor", "confidence": 1, "obs_idx": 1},
    "targets": {"inference": "there was a storm here recently"},
}


def _record(**changes: Any) -> dict[str, Any]:
    rec = copy.deepcopy(RECORD)
    for path, value in changes.items():
        *parents, leaf = path.split("__")
        target = rec
        for p in parents:
            target = target[p]
        if value is _DELETE:
            del target[leaf]
        else:
            target[leaf] = value
    return rec


_DELETE = object()


def test_reference_record_loads(tmp_path: Path) -> None:
    write_json(tmp_path / VAL, [RECORD])
    (inst,) = load_instances(tmp_path, "val")
    assert isinstance(inst, SherlockInstance)
    assert inst.image_path == str(tmp_path / "images" / "vg" / "VG_100K" / "2370338.jpg")
    assert inst.region == Region((Box(172, 171, 328, 162),))
    assert (inst.width, inst.height, inst.confidence, inst.obs_idx, inst.split_idx) == (500, 333, 1, 1, 0)
    assert inst.visual == VisualInput(inst.image_path, inst.region, context="wooden debris thrown about the floor")


def test_image_roots_follow_the_url(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    roots = ImageRoots.for_data_dir(tmp_path)
    vcr = "http://s3-us-west-2.amazonaws.com/ai2-rowanz/vcr1images/movieclips_Attila/7S3biRDwbAc@39.jpg"
    assert roots.resolve(vcr) == tmp_path / "images" / "vcr" / "movieclips_Attila" / "7S3biRDwbAc@39.jpg"
    assert roots.resolve("https://x/VG_100K_2/1.jpg") == tmp_path / "images" / "vg" / "VG_100K_2" / "1.jpg"
    monkeypatch.setenv("ABDUCT_SHERLOCK_VCR_ROOT", str(tmp_path / "elsewhere"))
    assert ImageRoots.for_data_dir(tmp_path).resolve(vcr).parent == tmp_path / "elsewhere" / "movieclips_Attila"


def test_v1_0_file_is_read_when_v1_1_is_absent(tmp_path: Path) -> None:
    train = _record(split_idx=_DELETE)
    write_json(tmp_path / "sherlock_train_v1_0.json", [train])
    assert len(load_instances(tmp_path, "train")) == 1
    with pytest.raises(AbductError, match="sherlock_val_with_split_idxs_v1_1.json not found"):
        load_instances(tmp_path, "val")


@pytest.mark.parametrize(
    "changes, field, message",
    [
        ({"targets__inference": _DELETE}, "targets.inference", "missing"),
        ({"inputs__clue": 7}, "inputs.clue", "expected a string"),
        ({"inputs__image__width": "500"}, "inputs.image.width", "expected an integer"),
        ({"inputs__confidence": 4}, "inputs.confidence", "outside"),
        ({"split_idx": _DELETE}, "split_idx", "missing"),
        ({"inputs__bboxes": []}, "inputs.bboxes", "no boxes"),
        ({"inputs__bboxes": [{"left": 400, "top": 10, "width": 101, "height": 5}]}, "inputs.bboxes[0]", "outside"),
        ({"inputs__bboxes": [{"left": 1, "top": 1, "width": 2, "height": 2}, {"left": 4, "top": 4, "width": 0, "height": 3}]},
         "inputs.bboxes[1]", "zero-area"),
        ({"inputs__bboxes": [{"left": 1, "top": 1, "width": True, "height": 3}]}, "inputs.bboxes[0].width", "expected a number"),
    ],
)
def test_invalid_records_name_file_record_and_field(tmp_path: Path, changes: dict[str, Any], field: str, message: str) -> None:
    good = _record(instance_id="0" * 32)
    path = write_json(tmp_path / VAL, [good, _record(**changes)])
    with pytest.raises(DataError, match=message) as info:
        load_instances(tmp_path, "val")
    assert (info.value.file, info.value.record, info.value.field) == (str(path), 1, field)
    assert str(path) in str(info.value) and "record 1" in str(info.value) and f"field '{field}'" in str(info.value)


def test_duplicate_ids_and_border_boxes(tmp_path: Path) -> None:
    border = _record(inputs__bboxes=[{"left": 0, "top": 0, "width": 500, "height": 333}, {"left": 499, "top": 332, "width": 1, "height": 1}])
    write_json(tmp_path / VAL, [border, RECORD])
    with pytest.raises(DataError, match="duplicate instance_id") as info:
        load_instances(tmp_path, "val")
    assert info.value.record == 1 and info.value.field == "instance_id"


def test_skip_invalid_skips_and_counts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    records = [RECORD, _record(instance_id="1" * 32, inputs__clue=None), RECORD, _record(instance_id="2" * 32)]
    write_json(tmp_path / VAL, records)
    report = load_report(tmp_path, "val", skip_invalid=True)
    assert [i.instance_id for i in report.instances] == [RECORD["instance_id"], "2" * 32]
    assert [e.record for e in report.skipped] == [1, 2]
    assert len(load_instances(tmp_path, "val", skip_invalid=True)) == 2
    assert "skipped 2 invalid record(s)" in capsys.readouterr().err


def test_not_a_list_and_bad_json(tmp_path: Path) -> None:
    write_json(tmp_path / VAL, {"a": 1})
    with pytest.raises(DataError, match="JSON list"):
        load_instances(tmp_path, "val")
    (tmp_path / VAL).write_text("[{")
    with pytest.raises(DataError, match="not valid JSON"):
        load_instances(tmp_path, "val")


def test_check_on_a_clean_corpus(corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sherlock", "check", "--data", str(corpus)]) == 0
    assert "no problems" in capsys.readouterr().out


def test_check_lists_missing_unreadable_and_schema_problems(corpus: Path, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "data"
    shutil.copytree(corpus, data, ignore=shutil.ignore_patterns("val_*", "test_*"))
    val = load_instances(data, "val")
    Path(val[0].image_path).unlink()
    other = next(i for i in val if i.image_url != val[0].image_url)
    Path(other.image_path).write_bytes(b"not a jpeg")
    records = json.loads((data / VAL).read_text())
    records[5]["inputs"]["bboxes"][0]["width"] = 0
    (data / VAL).write_text(json.dumps(records))
    assert main(["sherlock", "check", "--data", str(data), "--json"]) == 1
    problems = json.loads(capsys.readouterr().out)
    assert any("image missing" in p and val[0].image_path in p for p in problems)
    assert any("image unreadable" in p and other.image_path in p for p in problems)
    assert any("record 5" in p and "inputs.bboxes[0]" in p and "zero-area" in p for p in problems)
