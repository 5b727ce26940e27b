"""BERTScore by hub name on a machine without network: one line in seconds (no five retries);
a model in the hub cache loads with no network call."""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from abduct_testing import hub_snapshot, main, unreachable_hub


@pytest.fixture
def no_hub(tmp_path: Path) -> Iterator[Path]:
    with unreachable_hub(tmp_path / "hf-cache") as cache:
        yield cache


def _inputs(tmp_path: Path) -> list[str]:
    (tmp_path / "p.json").write_text(json.dumps({"a": "a dog runs"}))
    (tmp_path / "r.json").write_text(json.dumps({"a": ["a dog is running"]}))
    return ["--predictions", str(tmp_path / "p.json"), "--references", str(tmp_path / "r.json")]


def test_an_uncached_hub_model_fails_in_seconds_with_one_line(no_hub: Path, tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    started = time.monotonic()
    code = main(["metric", "bertscore", *_inputs(tmp_path)])
    elapsed = time.monotonic() - started
    err = capsys.readouterr().err
    assert code == 2 and elapsed < 10, (code, elapsed)
    assert err.count("\n") == 1 and "bertscore model 'roberta-large': weights not found" in err, err
    assert "unreachable" in err and f"hub roberta-large in {no_hub}" in err and "model=/path/to/model-dir" in err


def test_a_cached_hub_model_loads_offline(no_hub: Path, tiny_bert: Path, tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    snapshot = hub_snapshot(no_hub, "abduct-test/tiny-bert")
    for file in tiny_bert.iterdir():
        shutil.copy(file, snapshot / file.name)
    assert main(["metric", "bertscore,model=abduct-test/tiny-bert,num_layers=1", *_inputs(tmp_path), "--json"]) == 0
    offline = json.loads(capsys.readouterr().out)
    assert main(["metric", f"bertscore,model={tiny_bert},num_layers=1", *_inputs(tmp_path), "--json"]) == 0
    local = json.loads(capsys.readouterr().out)
    assert offline["bertscore_f1"] == local["bertscore_f1"]
