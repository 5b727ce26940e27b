"""``retrieve:<scorer>`` returns, per request, the pool text the scorer ranks first (ties: the
first in pool order), encodes a dual encoder's pool once, and refuses what it cannot do."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from compose_models import Parrot

from abduct import (
    COUNT,
    AbductError,
    Decoding,
    Evaluation,
    Generate,
    GenerationItem,
    GenerationRequest,
    Records,
    Registration,
    RunInfo,
    Settings,
    Spec,
    Stage,
    TextPool,
    VisualInput,
    hookimpl,
)
from abduct.host import EvalConfig, LoadedModel, build_registry, run_evaluation
from abduct_compose.retrieval import Retriever, make_retrieve
from abduct_testing import registry_with_models
from abduct_testing.toy import ToyPlugin


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


def test_refusals() -> None:
    registry = registry_with_models("compose-test", {"parrot": ("generates its prompt", Parrot)})
    with pytest.raises(AbductError, match=r"retrieve needs the scoring model"):
        make_retrieve(Spec.parse("retrieve"), Settings(), registry)
    with pytest.raises(AbductError, match=r"does not score"):
        make_retrieve(Spec.parse("retrieve:parrot"), Settings(), registry)
    retriever = make_retrieve(Spec.parse("retrieve:constant"), Settings(), registry)
    with pytest.raises(AbductError, match=r"offers none"):
        retriever.generate(_requests("1"), Decoding(), None)


class Describe:
    """The toy benchmark's images, each to be described; the pool is every caption of the split."""

    default_split = "val"
    dataset = "toy"
    metric_info = {"n": COUNT}

    def plan(self, examples: Sequence[dict[str, Any]], run: RunInfo) -> list[Stage]:
        pool = TextPool.of([it["caption"] for it in run.corpus])
        items = [GenerationItem(it["id"], GenerationRequest(VisualInput(it["image"])), (it["caption"],))
                 for it in examples]
        return [Stage("describe", Generate(items, pool))]

    def finish(self, examples: Sequence[dict[str, Any]], records: Mapping[str, Records], run: RunInfo) -> Evaluation:
        return Evaluation({"n": len(records["describe"])}, records["describe"])


def make_describe(spec: Spec, settings: Settings) -> Describe:
    return Describe()


class DescribePlugin(ToyPlugin):
    @hookimpl
    def register_tasks(self) -> Iterator[Registration]:
        yield Registration("toy-describe", "Describe the toy images", f"{__name__}:make_describe")


def test_as_a_model_in_a_generation_task(toy_data: Path, tmp_path: Path) -> None:
    config = EvalConfig(task="toy-describe", model="retrieve:random", data_dir=toy_data, out_dir=tmp_path / "out",
                        quiet=True, use_cache=False)
    results = run_evaluation(config, build_registry(extra_plugins=[("toy", DescribePlugin())]))
    assert results["model"]["abilities"] == ["generate"] and results["metrics"]["n"] == 12
    captions = {it["caption"] for it in json.loads((toy_data / "toy.json").read_text())}
    predictions = [json.loads(line) for line in (tmp_path / "out" / "predictions.jsonl").read_text().splitlines()]
    assert len(predictions) == 12 and {p["prediction"] for p in predictions} <= captions
