"""abduct-lxmert and abduct-uniter installed with the datasets: `abduct eval` of the three
Sherlock tasks and CoSIm with lxmert:tiny, uniter:tiny and the cascade on small synthetic
corpora, `abduct train lxmert --task cosim`, and one-line errors for bad feature files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from abduct_testing import main
from conftest import abduct


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """The CLI in this process (torch is imported once for all these tests)."""
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(autouse=True)
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ABDUCT_CACHE_DIR", str(tmp_path / "cache"))

TASKS = ["sherlock-retrieval", "sherlock-localization", "sherlock-comparison"]
MODELS = ["lxmert:tiny", "uniter:tiny", "cascade:\"clip:tiny,workers=0+lxmert:tiny\",k=3"]


@pytest.fixture(scope="module")
def sherlock(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("sherlock") / "data"
    done = abduct("sherlock", "synth", "--out", str(out), "--images", "12", "--chunk-size", "10")
    assert done.returncode == 0, done.stderr
    return out


@pytest.fixture(scope="module")
def cosim(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("cosim") / "data"
    done = abduct("cosim", "synth", "--out", str(out), "--train", "8", "--val", "6")
    assert done.returncode == 0, done.stderr
    return out


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("task", TASKS)
def test_eval_sherlock(sherlock: Path, tmp_path: Path, task: str, model: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "eval", task, "--model", model, "--data", str(sherlock), "--out", str(tmp_path),
                         "--json", "--quiet", "--no-cache", "--limit", "2")
    assert code == 0, err
    metrics = json.loads(out)["metrics"]
    assert metrics and all(v == v for v in metrics.values() if isinstance(v, float))


@pytest.mark.parametrize("model", MODELS)
def test_eval_cosim(cosim: Path, tmp_path: Path, model: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "eval", "cosim", "--model", model, "--data", str(cosim), "--out", str(tmp_path),
                         "--json", "--quiet", "--no-cache")
    assert code == 0, err
    results = json.loads(out)
    assert results["metrics"]["n"] == 6 and results["inputs"]["ignored"] == []


def test_train_lxmert_on_cosim_then_evaluate(cosim: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "train", "lxmert", "--task", "cosim", "--data", str(cosim), "--out", str(tmp_path / "run"),
                       "--steps", "4", "--batch-size", "2", "--checkpoint-every", "4", "--device", "cpu", "--quiet")
    assert code == 0, err
    code, _, err = run(capsys, "eval", "cosim", "--model", f"lxmert:{tmp_path / 'run' / 'best'}", "--data", str(cosim),
                       "--out", str(tmp_path / "eval"), "--json", "--quiet", "--no-cache")
    assert code == 0, err


def test_a_features_file_without_the_image_is_one_line(sherlock: Path, tmp_path: Path) -> None:
    (tmp_path / "empty.tsv").write_text("")
    done = abduct("eval", "sherlock-comparison", "--model", f"lxmert:tiny,features={tmp_path / 'empty.tsv'}",
                  "--data", str(sherlock), "--out", str(tmp_path / "out"), "--quiet", "--no-cache", "--limit", "1",
                  env={"ABDUCT_CACHE_DIR": str(tmp_path / "cache")})  # all of stderr, a traceback included
    assert done.returncode == 2
    assert "empty.tsv" in done.stderr and "is not in the features file" in done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1
