"""What the tutorial's plugin refuses, each in one line before any output is written (checks beyond
the ones docs/plugins.md shows)."""

import json
from pathlib import Path

from test_tutorial import write_pictures

from abduct_testing import run_cli


def test_predictions_come_in_name_order(tmp_path: Path) -> None:
    data = write_pictures(tmp_path / "data", count=10)
    done = run_cli(["eval", "tutorial-light", "--model", "random", "--data", str(data), "--out", str(tmp_path / "run"),
                    "--quiet"])
    assert done.code == 0 and done.crash is None, done.err
    records = [json.loads(line) for line in (tmp_path / "run" / "predictions.jsonl").read_text().splitlines()]
    assert [r["id"] for r in records] == sorted(json.loads((data / "labels.json").read_text()))


def test_a_bad_option_or_label_is_one_line_and_no_output(tmp_path: Path) -> None:
    data = write_pictures(tmp_path / "data", count=4)
    argv = ["eval", "tutorial-light", "--data", str(data), "--out", str(tmp_path / "out"), "--quiet"]
    refused = run_cli([*argv, "--model", "tutorial-brightness,threshold=high"])
    assert refused.code == 2 and refused.crash is None and "'high' is not a number" in refused.err
    labels = json.loads((data / "labels.json").read_text())
    labels["02.png"] = "grey"
    (data / "labels.json").write_text(json.dumps(labels))
    outcome = run_cli([*argv, "--model", "tutorial-brightness"])
    assert outcome.code == 2 and outcome.crash is None
    assert outcome.err.count("\n") == 1 and "labels.json, record 02.png: label must be one of" in outcome.err
    assert not (tmp_path / "out" / "results.json").exists()


def test_check_reads_the_dataset_and_a_dataset_option_is_refused(tmp_path: Path) -> None:
    """``abduct check`` is the dataset's check; the dataset has no options, so one given is one
    line, and so is another dataset than the task's, before any output is written."""
    data = write_pictures(tmp_path / "data", count=4)
    checked = run_cli(["check", "tutorial-light", "--data", str(data)])
    assert checked.code == 0 and checked.crash is None and "no problems found" in checked.out
    argv = ["eval", "tutorial-light", "--model", "random", "--data", str(data), "--out", str(tmp_path / "out"), "--quiet"]
    for option, message in (("tutorial-light,labels=other.json", "has no option 'labels'"),
                            ("toy,labels=other.json", "unknown dataset 'toy'")):
        refused = run_cli([*argv, "--dataset", option])
        assert refused.code == 2 and refused.crash is None and message in refused.err, refused.err
        assert refused.err.count("\n") == 1
    assert not (tmp_path / "out").exists()
    (data / "labels.json").write_text('{"9.png": "dark"}')
    checked = run_cli(["check", "tutorial-light", "--data", str(data)])
    assert checked.code == 1 and "labels.json, record 9.png: picture not found" in checked.out
