"""The core's own plugin: baselines and generic metrics, registered through the same hooks
as everyone else's."""

from __future__ import annotations

from collections.abc import Iterator

from abduct.contract.hooks import Registration, hookimpl


@hookimpl
def register_models() -> Iterator[Registration]:
    yield Registration("random", "Seeded chance baseline: uniform scores; generates a pick from the task's texts",
                       "abduct._builtins.baselines:make_random")
    yield Registration("constant", "The same score for every pair (the all-ties case)", "abduct._builtins.baselines:make_constant")


@hookimpl
def register_metrics() -> Iterator[Registration]:
    yield Registration("exact-match", "Exact match after answer normalisation", "abduct.kit.answers:make_exact_match")
