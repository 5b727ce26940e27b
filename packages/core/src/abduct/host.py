"""The host and scripting API: what a program that runs abduct uses, rather than what a plugin
declares (that is ``abduct``, the front door, and ``abduct.kit``).

- the registry: ``build_registry``, ``get_registry``, ``reset_registry``, ``Registry``;
- evaluation: ``EvalConfig``, ``run_evaluation``; a task and the examples its plan gets, read as
  a run reads them (for a host that plans without running): ``load_examples``;
- models and engines: ``load_model``, ``engine_for``, ``ScoringEngine``, ``GenerationEngine``;
  training pairs: ``load_pairs``;
- reading declarations: ``task_traits``, ``model_traits``, ``options_of`` (each option with its
  type and constraints), ``bind_options``;
- resampling a run's units (what abduct-report's paired tests build on): ``read_units`` (a run's
  units.json), ``metric_of_rows`` (the metric over an array of its units' values),
  ``paired_bootstrap`` (two runs' shared units resampled together: the difference, its interval
  and the rows drawn) and ``interval_rng`` (the random stream of a metric's confidence interval;
  with a purpose, of another resampling of it, such as a paired test's); the default number of
  resamples is ``abduct.kit.RESAMPLE_COUNT.default``;
- the command line: ``main``.
"""

from __future__ import annotations

from abduct._cli import main
from abduct._declare.options import bind_options, options_of
from abduct._declare.traits import model_traits, task_traits
from abduct._engine.generation import GenerationEngine
from abduct._engine.models import engine_for, load_model
from abduct._engine.scoring import ScoringEngine
from abduct._registry.pairs import load_pairs
from abduct._registry.registry import Registry, build_registry, get_registry, reset_registry
from abduct._run.collect import load_examples
from abduct._run.evaluate import EvalConfig, run_evaluation
from abduct._stats.aggregates import statistic as metric_of_rows
from abduct._stats.resampling import paired_bootstrap
from abduct._stats.resampling import rng_for as interval_rng
from abduct._stats.unitsfile import read_units

__all__ = [
    "EvalConfig", "GenerationEngine", "Registry", "ScoringEngine", "bind_options", "build_registry", "engine_for",
    "get_registry", "interval_rng", "load_examples", "load_model", "load_pairs", "main", "metric_of_rows",
    "model_traits", "options_of", "paired_bootstrap", "read_units", "reset_registry", "run_evaluation", "task_traits",
]
