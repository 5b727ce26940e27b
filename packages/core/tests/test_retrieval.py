"""``retrieve:<scorer>`` returns, per request, the pool text the scorer ranks first (ties: the
first in pool order), encodes a dual encoder's pool once, and refuses what it cannot do."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from abduct import AbductError, Decoding, GenerationRequest, Settings, Spec, TextPool, VisualInput
from abduct._builtins.retrieval import Retriever, make_retrieve
from abduct._engine.models import LoadedModel
from abduct._registry.registry import Registry, build_registry
from abduct._run.evaluate import EvalConfig, run_evaluation


class ShortTexts:
    """A dual encoder that ranks shorter texts higher, whatever the image (score = -len(text))."""

    fingerprint = "short"

    def __init__(self) -> None:
        self.text_calls = 0

    def encode_visual(self, visuals: Sequence[VisualInput]) -> np.ndarray:
        return np.ones((len(visuals), 1))

    def encode_text(self, texts: Sequence[str]) -> np.ndarray:
        self.text_calls += 1
        return np.array([[-float(len(t))] for t in texts])


def _requests(*stems: str) -> list[GenerationRequest]:
    return [GenerationRequest(VisualInput(f"/data/{stem}.jpg")) for stem in stems]


def test_picks_the_best_text_and_encodes_the_pool_once() -> None:
    encoder = ShortTexts()
    retriever = Retriever(LoadedModel(Spec("short"), encoder, Decoding()))
    pool = TextPool.of(["a long text", "ab", "a"])
    assert retriever.generate(_requests("1", "2"), Decoding(), pool) == ["a", "a"]
    assert retriever.generate(_requests("3"), Decoding(), pool) == ["a"]
    assert encoder.text_calls == 1


def test_ties_go_to_the_first_text_in_the_pool() -> None:
    retriever = make_retrieve(Spec.parse("retrieve:constant:0.5"), Settings(), build_registry())
    assert retriever.generate(_requests("1"), Decoding(), TextPool.of(["second", "first"])) == ["second"]
    assert retriever.fingerprint == "retrieve(constant-0.5)"


def test_agrees_with_the_scorers_own_argmax() -> None:
    retriever = make_retrieve(Spec.parse("retrieve:random:3"), Settings(), build_registry())
    texts = [f"text {i}" for i in range(40)]
    requests = _requests(*map(str, range(10)))
    chosen = retriever.generate(requests, Decoding(), TextPool.of(texts))
    matrix = retriever.inner.model.score_matrix([r.visual for r in requests], texts)
    assert chosen == [texts[int(i)] for i in matrix.argmax(axis=1)]
    assert len(set(chosen)) > 1


def test_refusals(toy_registry: Registry) -> None:
    with pytest.raises(AbductError, match=r"retrieve needs the scoring model"):
        make_retrieve(Spec.parse("retrieve"), Settings(), toy_registry)
    with pytest.raises(AbductError, match=r"does not score"):
        make_retrieve(Spec.parse("retrieve:echo"), Settings(), toy_registry)
    retriever = make_retrieve(Spec.parse("retrieve:constant"), Settings(), toy_registry)
    with pytest.raises(AbductError, match=r"offers none"):
        retriever.generate(_requests("1"), Decoding(), None)


def test_as_a_model_in_a_generation_task(toy_registry: Registry, toy_data: Path, tmp_path: Path) -> None:
    """The toy captioning task offers every caption of the split as its pool."""
    config = EvalConfig(task="toy-describe", model="retrieve:random", data_dir=toy_data, out_dir=tmp_path / "out",
                        quiet=True, use_cache=False)
    results = run_evaluation(config, toy_registry)
    assert results["model"]["abilities"] == ["generate"] and results["metrics"]["n"] == 12
    captions = {it["caption"] for it in json.loads((toy_data / "toy.json").read_text())}
    predictions = [json.loads(line) for line in (tmp_path / "out" / "predictions.jsonl").read_text().splitlines()]
    assert len(predictions) == 12 and {p["prediction"] for p in predictions} <= captions
