"""CLIP with Sherlock (needs abduct-clip and abduct-sherlock; belongs in the root tests/):
the dual-encoder fast path ranks exactly as pairwise scoring on sherlock-retrieval, and
`abduct train clip` reads Sherlock's training pairs in the order of its instances (the
order the demo's figures depend on)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from abduct import Registration, Settings, Spec, VisualInput, hookimpl
from abduct.host import EvalConfig, build_registry, run_evaluation
from abduct_testing import main


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from abduct_sherlock.synth import synthesize

    return synthesize(tmp_path_factory.mktemp("sherlock"), images=24, seed=2)


class PairwiseClip:
    """clip:tiny behind the per-pair interface only (no encode_*, no score_matrix)."""

    accepts = frozenset({"image", "region"})

    def __init__(self, spec: Spec, settings: Settings) -> None:
        from abduct_clip.factory import make_clip

        self.inner = make_clip(Spec("clip", "tiny"), settings, workers=0)

    def score(self, visuals: Sequence[VisualInput], texts: Sequence[str]) -> np.ndarray:
        return self.inner.score(visuals, texts)


class _PairwisePlugin:
    @hookimpl
    def register_models(self) -> Iterator[Registration]:
        yield Registration("pairwise-clip", "clip:tiny scored pair by pair", f"{__name__}:PairwiseClip")


def _eval(data: Path, out: Path, model: str, **kwargs: Any) -> dict[str, Any]:
    registry = build_registry([("pairwise-test", _PairwisePlugin())])
    config = EvalConfig(task="sherlock-retrieval", model=model, data_dir=data, out_dir=out, quiet=True, **kwargs)
    return run_evaluation(config, registry)


def _records(out: Path) -> list[dict[str, Any]]:
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


@pytest.mark.parametrize("split", ["train", "val"])
def test_training_examples_follow_the_sherlock_instances(corpus: Path, split: str) -> None:
    """The examples `abduct train clip` builds from Sherlock's pairs are, in order, those it
    built from the loaded instances before (image, region, inference, clue, chunk)."""
    from abduct.host import load_pairs
    from abduct_clip._train import examples_from_pairs
    from abduct_sherlock import load_instances

    examples = examples_from_pairs(load_pairs("sherlock", corpus, split, Settings()))
    instances = load_instances(corpus, split)
    assert [(e.visual.media, e.visual.region, e.inference, e.clue, e.chunk) for e in examples] == [
        (i.image_path, i.region, i.inference, i.clue, None if i.split_idx is None else str(i.split_idx))
        for i in instances
    ]


def test_train_clip_on_sherlock_by_default(corpus: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    code = main(["train", "clip", "--data", str(corpus), "--out", str(out), "--steps", "2", "--batch-size", "8",
                 "--checkpoint-every", "2", "--workers", "0", "--device", "cpu", "--quiet"])
    assert code == 0
    assert (out / "best.pt").is_file() and (out / "last.pt").is_file()
