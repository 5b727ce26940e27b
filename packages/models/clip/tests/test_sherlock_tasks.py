"""The clip scorer on the Sherlock tasks of a synthetic corpus: the fast path ranks exactly as
pairwise scoring, the embedding cache is used, and the demo's JSON has its documented shape."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from abduct import hookimpl
from abduct.evaluate import EvalConfig, run_evaluation
from abduct.plugins import Registration, build_registry
from abduct.records import VisualInput
from abduct.spec import ModelOptions, ModelSpec


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from abduct_sherlock.synth import synthesize

    return synthesize(tmp_path_factory.mktemp("sherlock"), images=24, seed=2)


class PairwiseClip:
    """clip:tiny behind the per-pair interface only (no encode_*, no score_matrix)."""

    def __init__(self, spec: ModelSpec, options: ModelOptions) -> None:
        from abduct_clip._scorer import make_clip

        self.inner = make_clip(ModelSpec.parse("clip:tiny,workers=0"), options)

    def score(self, visuals: Sequence[VisualInput], texts: Sequence[str]) -> np.ndarray:
        return self.inner.score(visuals, texts)


class _PairwisePlugin:
    @hookimpl
    def register_scorers(self) -> list[Registration]:
        return [Registration("pairwise-clip", "clip:tiny scored pair by pair", f"{__name__}:PairwiseClip")]


def _eval(data: Path, out: Path, model: str, task: str = "sherlock-retrieval", **kwargs: object) -> dict:  # type: ignore[type-arg]
    registry = build_registry([("pairwise-test", _PairwisePlugin())])
    config = EvalConfig(task=task, model=model, data_dir=data, out_dir=out, quiet=True, **kwargs)  # type: ignore[arg-type]
    return run_evaluation(config, registry)


def _records(out: Path) -> list[dict]:  # type: ignore[type-arg]
    return [json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()]


def test_retrieval_ranks_equal_with_fast_path_and_pairwise(corpus: Path, tmp_path: Path) -> None:
    fast = _eval(corpus, tmp_path / "fast", "clip:tiny,workers=0", use_cache=False)
    slow = _eval(corpus, tmp_path / "slow", "pairwise-clip", use_cache=False)
    fast_rows, slow_rows = _records(tmp_path / "fast"), _records(tmp_path / "slow")
    assert len(fast_rows) == len(slow_rows) > 10
    for a, b in zip(fast_rows, slow_rows):
        assert a["instance_id"] == b["instance_id"]
        assert (a["im2txt_rank"], a["txt2im_rank"]) == (b["im2txt_rank"], b["txt2im_rank"])
    assert fast["metrics"] == slow["metrics"]


def test_embedding_cache_is_used(corpus: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    first = _eval(corpus, tmp_path / "a", "clip:tiny", cache_dir=cache)
    second = _eval(corpus, tmp_path / "b", "clip:tiny", cache_dir=cache)
    assert first["metrics"] == second["metrics"]
    assert first["timings"]["model_seconds"] > 0 and second["timings"]["model_seconds"] == 0.0
    other = _eval(corpus, tmp_path / "c", "clip:tiny,mode=plain", cache_dir=cache)  # another fingerprint
    assert other["timings"]["model_seconds"] > 0


def test_demo_json_shape(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from abduct.cli import main

    code = main(["demo", "--json", "--quiet", "--images", "16", "--steps", "2", "--work", str(tmp_path)])
    assert code == 0
    table = json.loads(capsys.readouterr().out)
    assert set(table) == {"random", "zero_shot", "fine_tuned"}
    for metrics in table.values():
        assert {"im2txt", "txt2im", "p_at_1"} <= set(metrics["sherlock-retrieval"])
        assert {"gt_accuracy", "auto_accuracy"} <= set(metrics["sherlock-localization"])
        assert "accuracy" in metrics["sherlock-comparison"]
    assert (tmp_path / "train" / "best.pt").is_file()
