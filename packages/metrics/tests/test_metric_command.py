"""``abduct metric``, which this package adds: values through the command, bad input files (exit 2,
one line naming the first offending id), fuzzed input files, and the install hint without it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from abduct import DataError
from abduct.host import build_registry, main, reset_registry
from abduct.kit import install_command
from abduct_metrics.cli import load_inputs
from abduct_testing.fuzzing import fuzz_cli_input


def _write(tmp_path: Path, name: str, obj: object) -> str:
    path = tmp_path / name
    path.write_text(json.dumps(obj), encoding="utf-8")
    return str(path)


def test_exact_match_values_through_the_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    preds = {"a": "The cat.", "b": "three dogs", "c": "a bird"}
    refs = {"a": ["cat"], "b": ["a horse", "3 dogs"], "c": ["bird flying"]}
    assert main(["metric", "exact-match", "--predictions", _write(tmp_path, "p.json", preds),
                 "--references", _write(tmp_path, "r.json", refs), "--json", "--per-sample"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["exact_match"] == pytest.approx(200 / 3, abs=1e-12)
    assert out["per_sample"]["c"] == {"exact_match": 0.0}


def test_load_inputs_names_each_file_in_its_errors(tmp_path: Path) -> None:
    preds, refs = _write(tmp_path, "p.json", {"b": "x", "a": "y"}), _write(tmp_path, "r.json", {"a": ["y"], "b": ["x"]})
    questions = _write(tmp_path, "q.json", {"a": "q", "b": 1})
    assert load_inputs(Path(preds), Path(refs)) == ({"b": "x", "a": "y"}, {"b": ["x"], "a": ["y"]}, None)
    with pytest.raises(DataError, match="question must be a string") as info:
        load_inputs(Path(preds), Path(refs), Path(questions))
    assert questions in str(info.value) and info.value.record == "b"


@pytest.mark.parametrize(
    ("predictions", "references", "bad_id"),
    [
        ({"1": "a dog", "2": "a cat", "3": "x"}, {"1": ["a dog"], "3": ["x"], "2x": ["a cat"]}, "2"),
        ({"1": "a dog", "2": "a cat"}, {"1": ["a dog"], "2": []}, "2"),
        ({"1": "a dog", "2": ["a cat"]}, {"1": ["a dog"], "2": ["a cat"]}, "2"),
        ({"1": "a dog"}, {"1": ["a dog"], "9": ["extra"]}, "9"),
    ],
)
@pytest.mark.parametrize("metric", ["exact-match", "bleu"])
def test_cli_bad_input_exits_2_naming_the_id(tmp_path, capsys, predictions, references, bad_id, metric) -> None:
    code = main(["metric", metric, "--predictions", _write(tmp_path, "p.json", predictions),
                 "--references", _write(tmp_path, "r.json", references), "--json"])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert f"record {bad_id}" in err and len(err.splitlines()) == 1
    assert "Traceback" not in err


def test_cli_malformed_json_and_unknown_option(tmp_path, capsys) -> None:
    bad = tmp_path / "p.json"
    bad.write_text("{not json", encoding="utf-8")
    refs = _write(tmp_path, "r.json", {"a": ["x"]})
    assert main(["metric", "exact-match", "--predictions", str(bad), "--references", refs]) == 2
    assert "not valid JSON" in capsys.readouterr().err
    preds = _write(tmp_path, "p2.json", {"a": "x"})
    assert main(["metric", "exact-match", "--predictions", preds, "--references", refs, "-o", "colour=red"]) == 2
    assert "no option 'colour'" in capsys.readouterr().err
    assert main(["metric", "exact-macth", "--predictions", preds, "--references", refs]) == 2
    assert "did you mean 'exact-match'" in capsys.readouterr().err


def test_duplicate_keys_and_infinity_in_predictions_json_exit_2(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    refs = _write(tmp_path, "refs.json", {"a": ["a cat"], "b": ["a dog"]})
    for text, needle in (('{"a": "a cat", "b": "x", "a": "y"}', "duplicate key 'a'"),
                         ('{"a": "a cat", "b": Infinity}', "Infinity")):
        preds = tmp_path / "preds.json"
        preds.write_text(text)
        assert main(["metric", "exact-match", "--predictions", str(preds), "--references", refs]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and err.startswith("error:") and str(preds) in err and needle in err, err


def test_without_this_package_the_command_names_it(monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("ABDUCT_DISABLE_PLUGINS", "metrics")  # as with only abduct-core
    reset_registry(build_registry())
    try:
        assert main(["metric", "exact-match", "--predictions", "p.json", "--references", "r.json"]) == 2
        assert capsys.readouterr().err.splitlines() == [
            f"error: command 'metric' comes with abduct-metrics, which is not installed: "
            f"{install_command('abduct-metrics')}"]
    finally:
        reset_registry()


# -- property-based fuzz of the command's input files ---------------------------------------------
def _write_metric_inputs(directory: Path) -> None:
    (directory / "preds.json").write_text(json.dumps({"a": "a cat on a mat", "b": "two dogs", "c": "rain"}))
    (directory / "refs.json").write_text(json.dumps({"a": ["a cat on a mat", "a cat"], "b": ["dogs"], "c": ["rain"]}))


def _metric_argv(directory: Path) -> list[str]:
    return ["metric", "exact-match", "--predictions", str(directory / "preds.json"),
            "--references", str(directory / "refs.json"), "--json"]


test_fuzz_metric_predictions = fuzz_cli_input(_write_metric_inputs, "preds.json", _metric_argv, out=None)
test_fuzz_metric_references = fuzz_cli_input(_write_metric_inputs, "refs.json", _metric_argv, out=None)
