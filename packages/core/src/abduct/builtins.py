"""The core's own plugin: baselines registered through the same hooks as everyone else."""

from __future__ import annotations

from collections.abc import Iterator

from abduct.hookspecs import hookimpl
from abduct.plugins import Registration


@hookimpl
def register_scorers() -> Iterator[Registration]:
    yield Registration("random", "Seeded uniform random scores (the chance baseline)", "abduct.baselines:make_random")
    yield Registration("constant", "The same score for every pair (the all-ties case)", "abduct.baselines:make_constant")
