"""cascade: and retrieve: build their parts from the registry that builds them (a factory's third
positional parameter): a model that only a test's registry has, not the process-wide one."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from abduct import AbductError, VisualInput
from abduct._builtins.cascade import CascadeScorer
from abduct._builtins.retrieval import Retriever
from abduct._registry.registry import build_registry, reset_registry
from abduct_testing import registry_with_models


class Lengths:
    """Scores a text by its length, whatever the image."""

    def score(self, visuals: Sequence[VisualInput], texts: Sequence[str]) -> np.ndarray:
        return np.array([float(len(t)) for t in texts])


def test_parts_come_from_the_registry_that_builds_the_whole() -> None:
    registry = registry_with_models("test-models", {"lengths": ("scores a text by its length", Lengths)})
    reset_registry(build_registry())  # the process-wide registry lacks the test's model
    try:
        cascade = registry.create("model", "cascade:lengths+random,k=2")
        retrieve = registry.create("model", "retrieve:lengths")
        assert isinstance(cascade, CascadeScorer) and isinstance(retrieve, Retriever)
        assert isinstance(cascade.dual.model, Lengths) and isinstance(retrieve.inner.model, Lengths)
        with pytest.raises(AbductError, match="unknown model 'lengths'"):
            build_registry().create("model", "retrieve:lengths")
    finally:
        reset_registry()
