"""The host and scripting API: what a program that runs abduct uses, rather than what a plugin
declares (that is ``abduct``, the front door, and ``abduct.contract``).

- the registry: ``build_registry``, ``get_registry``, ``reset_registry``, ``Registry``, and
  ``UnknownNameError``, what it raises for a name no installed plugin registers;
- evaluation: ``EvalConfig``, ``run_evaluation``, ``load_task``; a declaring task's data as a run
  reads it: ``build_dataset``, ``collect_examples``, ``Collected``;
- models and engines: ``load_model``, ``LoadedModel``, ``engine_for``, ``Engines``,
  ``ScoringEngine``, ``GenerationEngine``; training pairs: ``load_pairs``;
- the judge of generated answers: ``JudgeEngine``, its prompt ``EQUIVALENCE_TEMPLATE`` and
  ``parse_verdict``, which reads a judge's reply;
- reproducing a run's numbers: ``metric_from_units`` (a metric over its units' scores, as the
  run reported it) and ``interval_rng`` (the random stream of a metric's confidence interval;
  with a purpose, of another resampling of it, such as a paired test's);
- resampling units (what abduct-report's paired tests build on): ``read_units`` (a run's
  units.json), ``unit_values`` (a metric's per-unit values as an array), ``metric_of_rows`` (the
  metric over an array of its units' values), ``by_cluster`` (the rows a bootstrap draws, summed
  within their cluster), ``bootstrap`` (the intervals' percentile bootstrap; ``Bootstrap``, its
  result), ``cluster_summary`` (what results.json says of the clusters) and the default number
  of resamples, ``RESAMPLES``;
- reading declarations: ``task_traits``, ``model_traits``, ``TaskTraits``, ``ModelTraits``,
  ``options_of``, ``bind_options``, ``check_fields``, ``constraints_of``;
- composite specs (``cascade:DUAL+CROSS``): ``split_outside_quotes``, which splits a spec's
  argument at a separator that is not inside quotes;
- the command line: ``main``. (``abduct demo`` sections: ``DemoContext``, ``DemoTable`` and
  ``require_module`` are abduct-demo's, in ``abduct_demo``.)
"""

from __future__ import annotations

from abduct._cli import main
from abduct._declare.options import bind_options, options_of
from abduct._declare.traits import ModelTraits, TaskTraits, model_traits, task_traits
from abduct._engine.generation import GenerationEngine
from abduct._engine.judging import EQUIVALENCE_TEMPLATE, JudgeEngine, parse_verdict
from abduct._engine.models import Engines, LoadedModel, engine_for, load_model
from abduct._engine.scoring import ScoringEngine
from abduct._registry.pairs import load_pairs
from abduct._registry.providers import UnknownNameError
from abduct._registry.registry import Registry, build_registry, get_registry, reset_registry
from abduct._run.evaluate import EvalConfig, load_task, run_evaluation
from abduct._run.examples import Collected, build_dataset, collect_examples
from abduct._spec_text import split_outside_quotes
from abduct._stats.aggregates import as_array as unit_values
from abduct._stats.aggregates import statistic as metric_of_rows
from abduct._stats.aggregates import value as metric_from_units
from abduct._stats.resampling import RESAMPLES, Bootstrap, bootstrap, by_cluster, cluster_summary
from abduct._stats.resampling import rng_for as interval_rng
from abduct._stats.unitsfile import read_units
from abduct.contract.options import check_fields, constraints_of

__all__ = [
    "Bootstrap", "Collected", "EQUIVALENCE_TEMPLATE", "Engines", "EvalConfig", "GenerationEngine",
    "JudgeEngine", "LoadedModel", "ModelTraits", "RESAMPLES",
    "Registry", "ScoringEngine", "TaskTraits", "UnknownNameError", "bind_options", "bootstrap", "build_dataset", "build_registry", "by_cluster", "check_fields",
    "cluster_summary", "collect_examples", "constraints_of", "engine_for", "get_registry", "interval_rng", "load_model", "load_pairs",
    "load_task", "main", "metric_from_units", "metric_of_rows", "model_traits", "options_of", "parse_verdict",
    "read_units", "reset_registry", "run_evaluation", "split_outside_quotes", "task_traits", "unit_values",
]
