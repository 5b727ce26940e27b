"""The core's own plugin: baselines (``random``, ``constant``, and the models built from others,
``cascade`` and ``retrieve``) and generic metrics, registered through the same hooks
as everyone else's."""

from __future__ import annotations

from collections.abc import Iterator

from abduct.contract.hooks import Registration, hookimpl


@hookimpl
def register_models() -> Iterator[Registration]:
    yield Registration("random", "Seeded chance baseline: uniform scores; generates a pick from the task's texts",
                       "abduct._builtins.baselines:make_random")
    yield Registration("constant", "The same score for every pair (the all-ties case)", "abduct._builtins.baselines:make_constant")
    # built from other models, which the registry building them builds too
    yield Registration("cascade", "Re-ranking: a dual encoder ranks, a cross-encoder re-scores each row's and column's "
                       "top k: cascade:clip:tiny+lxmert:tiny,k=50", "abduct._builtins.cascade:make_cascade")
    yield Registration("retrieve", "Generates by choosing the task's text a scoring model ranks first: retrieve:clip:tiny",
                       "abduct._builtins.retrieval:make_retrieve")


@hookimpl
def register_metrics() -> Iterator[Registration]:
    yield Registration("exact-match", "Exact match after answer normalisation", "abduct.kit.answers:make_exact_match")
