"""Generated caption data, tiny random BERT models built locally (no downloads), and the
reference side's one pycocoevalcap ``Meteor()`` for the session."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from abduct_metrics.testing import build_tiny_bert, generated_data

PROBE = generated_data(15, seed=11, related=True)


def _as_gts_res(data: tuple[dict[str, str], dict[str, list[str]]]) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    predictions, references = data
    return {k: list(references[k]) for k in predictions}, {k: [predictions[k]] for k in predictions}


@pytest.fixture(scope="session")
def meteor_probe() -> tuple[dict[str, str], dict[str, list[str]]]:
    """Predictions and references the METEOR checks score as given (``pretokenized=True``)."""
    return PROBE


@dataclass(frozen=True)
class ReferenceMeteor:
    """pycocoevalcap's own ``Meteor()``, untouched: one JVM for the session's reference side
    (a JVM start costs seconds), and its answer on ``PROBE`` as its very first exchange."""

    meteor: Any
    fresh_probe: tuple[float, list[float]]

    def compute_score(self, gts: dict[str, list[str]], res: dict[str, list[str]]) -> tuple[float, list[float]]:
        corpus, each = self.meteor.compute_score(gts, res)
        return corpus, each


@pytest.fixture(scope="session")
def reference_meteor() -> Iterator[ReferenceMeteor]:
    from pycocoevalcap.meteor.meteor import Meteor

    meteor = Meteor()
    yield ReferenceMeteor(meteor, meteor.compute_score(*_as_gts_res(PROBE)))
    meteor.meteor_p.stdin.close()
    meteor.meteor_p.kill()
    meteor.meteor_p.wait()


@pytest.fixture(scope="session")
def caption_data() -> tuple[dict[str, str], dict[str, list[str]]]:
    return generated_data(80, seed=1)


@pytest.fixture(scope="session")
def tiny_bert(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_bert(tmp_path_factory.mktemp("tiny_bert"), seed=1)


@pytest.fixture(scope="session")
def tiny_bem(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 2-label classifier with three segment embeddings (original BEM layout)."""
    return build_tiny_bert(tmp_path_factory.mktemp("tiny_bem"), classifier=True, type_vocab_size=3, seed=2)


@pytest.fixture(scope="session")
def tiny_bem_pairs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 2-label classifier with two segment embeddings (the PyTorch reproduction's layout)."""
    return build_tiny_bert(tmp_path_factory.mktemp("tiny_bem_pairs"), classifier=True, type_vocab_size=2, seed=3)
