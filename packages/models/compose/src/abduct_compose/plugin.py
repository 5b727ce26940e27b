"""abduct plugin: registrations only (the models ``cascade`` and ``retrieve``)."""

from __future__ import annotations

from collections.abc import Iterator

from abduct import Registration, hookimpl


@hookimpl
def register_models() -> Iterator[Registration]:
    yield Registration("cascade", "Re-ranking: a dual encoder ranks, a cross-encoder re-scores each row's and column's "
                       "top k: cascade:clip:tiny+lxmert:tiny,k=50", "abduct_compose.cascade:make_cascade")
    yield Registration("retrieve", "Generates by choosing the task's text a scoring model ranks first: retrieve:clip:tiny",
                       "abduct_compose.retrieval:make_retrieve")
