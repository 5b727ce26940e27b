"""clip through ``abduct eval`` on the test plugin's task: the fast path ranks as pairwise
scoring does, embeddings come from the cache the second time, the clue it does not read is
reported as ignored; and ``abduct demo`` without abduct-sherlock is a one-line error."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from abduct.host import EvalConfig, Registry, run_evaluation
from abduct.kit import install_command
from abduct_testing import main


def _eval(registry: Registry, data: Path, out: Path, model: str, **kwargs: Any) -> dict[str, Any]:
    config = EvalConfig(task="toy-match", model=model, data_dir=data, out_dir=out, quiet=True, **kwargs)
    return run_evaluation(config, registry)


def _records(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()]


def test_fast_path_and_pairwise_give_the_same_choices(pair_data: Path, tmp_path: Path, test_registry: Registry) -> None:
    fast = _eval(test_registry, pair_data, tmp_path / "fast", "clip:tiny,workers=0", use_cache=False)
    slow = _eval(test_registry, pair_data, tmp_path / "slow", "pairwise-clip", use_cache=False)
    fast_rows, slow_rows = _records(tmp_path / "fast"), _records(tmp_path / "slow")
    assert len(fast_rows) == len(slow_rows) == 8
    for a, b in zip(fast_rows, slow_rows):
        assert a["id"] == b["id"] and a["choice"] == b["choice"]
        assert a["scores"] == pytest.approx(b["scores"], abs=1e-5)
    assert fast["metrics"] == slow["metrics"]
    assert fast["inputs"]["ignored"] == ["context"]  # the clue: clip sees image and region only


def test_embedding_cache_is_used(pair_data: Path, tmp_path: Path, test_registry: Registry) -> None:
    cache = tmp_path / "cache"
    first = _eval(test_registry, pair_data, tmp_path / "a", "clip:tiny", cache_dir=cache)
    second = _eval(test_registry, pair_data, tmp_path / "b", "clip:tiny", cache_dir=cache)
    assert first["metrics"] == second["metrics"]
    assert first["timings"]["model_seconds"] > 0 and second["timings"]["model_seconds"] == 0.0
    other = _eval(test_registry, pair_data, tmp_path / "c", "clip:tiny,mode=plain", cache_dir=cache)
    assert other["timings"]["model_seconds"] > 0  # another fingerprint


def test_demo_without_sherlock_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "abduct_sherlock.synth", None)  # import fails as if not installed
    assert main(["demo", "--quiet", "--only", "sherlock-clip", "--images", "8", "--steps", "1", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"error: abduct demo uses Sherlock's synthetic corpus and tasks: {install_command('abduct-sherlock')}"
