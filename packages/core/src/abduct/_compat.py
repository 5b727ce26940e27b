"""Old names for one release, with a DeprecationWarning: the core's modules moved into layers
(``abduct.contract``, ``abduct.kit`` and private ones) and the front door narrowed, and a plugin
written against the flat layout keeps working meanwhile.

Old import paths (``abduct.errors``, ``abduct.tasks``, ...): a finder answers each with a module
that forwards attribute lookups to the new homes, in order (some old modules were split in two).
Names ``abduct`` exported before (``abduct.run_evaluation``, ...): ``moved_name`` is its ``__getattr__``."""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import types
import warnings
from collections.abc import Sequence
from typing import Any

OLD_PATHS: dict[str, tuple[str, ...]] = {
    "records": ("contract.records",), "errors": ("contract.errors",), "protocols": ("contract.protocols",),
    "metric_info": ("contract.metric_info", "_declare.metrics"), "spec": ("contract.spec",),
    "options": ("contract.options", "_declare.options"),
    "hookspecs": ("contract.hooks",), "registration": ("contract.hooks",),
    "tasks": ("kit.shapes", "contract.task"),
    "io": ("kit.io",), "checkpoints": ("abduct_modelkit.checkpoints",), "offline": ("abduct_modelkit.offline",),
    "distributed": ("kit.distributed", "abduct_modelkit.training"), "progress": ("kit.progress_bars",),
    "drawing": ("kit.drawing", "abduct_modelkit.drawing"),
    "templates": ("kit.templates",), "exact_match": ("kit.answers",), "metric_inputs": ("kit.metric_inputs", "abduct_metrics.cli"),
    "cache": ("kit.cache",), "content": ("kit.content",), "cli_options": ("kit.cli",),
    "plugins": ("_registry.registry",), "providers": ("_registry.providers",), "pairs": ("_registry.pairs",),
    "engine": ("_engine.scoring", "kit.content"), "generation": ("_engine.generation", "kit.distributed", "abduct_modelkit.training"),
    "inputs": ("_engine.inputs",), "judging": ("_engine.judging", "contract.task"), "models": ("_engine.models",),
    "runner": ("_run.runner", "kit.distributed"), "evaluate": ("_run.evaluate",), "outdir": ("_run.outdir", "kit.io"),
    "provenance": ("_run.provenance",), "report": ("abduct_report.markdown",),
    "html_report": ("abduct_report.report_page",), "compare": ("abduct_report.comparison",), "baselines": ("_builtins.baselines",), "cascade": ("abduct_compose.cascade",),
    "retrieval": ("abduct_compose.retrieval",), "builtins": ("_builtins.plugin",), "demo": ("abduct_demo", "abduct_demo.runner"),
    "cli": ("_cli", "kit.cli"), "fuzzing": ("abduct_testing.fuzzing",),
    "corpus_contract": ("abduct_testing.corpus",),
}

# Names abduct exported before the front door narrowed, and where each lives now.
MOVED_NAMES = {
    **{name: "abduct.host" for name in (
        "Collected", "Engines", "EvalConfig", "GenerationEngine", "LoadedModel",
        "ModelTraits", "Registry", "ScoringEngine", "TaskTraits", "bind_options", "build_dataset", "build_registry",
        "check_fields", "collect_examples", "constraints_of", "engine_for", "get_registry", "load_model",
        "load_pairs", "load_task", "model_traits", "options_of",
        "reset_registry", "run_evaluation", "task_traits", "UnknownNameError")},
    "published_rows": "abduct_report.comparison",  # abduct-report's
    **{name: "abduct_demo" for name in ("DemoContext", "DemoTable", "require_module")},  # abduct-demo's
    **{name: "abduct.contract" for name in (
        "FEATURES", "Generating", "MatrixScorer", "NonFinite", "Range", "Scoring",
        "reference")},
    **{name: "abduct.legacy" for name in ("Judging", "LegacyTask", "RunContext")},
}


def moved_name(name: str) -> Any:
    """``abduct.name`` for a name in ``MOVED_NAMES``, from its new home, with a DeprecationWarning."""
    home = MOVED_NAMES.get(name)
    if home is None:
        raise AttributeError(f"module 'abduct' has no attribute '{name}'")
    warnings.warn(f"abduct.{name} moved to {home}.{name}; import it from there (abduct.{name} goes in 0.3)",
                  DeprecationWarning, stacklevel=2)
    return getattr(importlib.import_module(home), name)


def _homes(old: str) -> tuple[str, ...]:
    """The new homes of ``abduct.old``; a home in another distribution (``abduct_testing``) is named in full."""
    return tuple(home if home.startswith("abduct_") else f"abduct.{home}" for home in OLD_PATHS[old])


class _Forwarding(types.ModuleType):
    """An old module: each attribute comes from the first new home that has it."""

    homes: Sequence[str] = ()

    def __getattr__(self, name: str) -> Any:
        for home in self.homes:
            module = importlib.import_module(home)
            if hasattr(module, name):
                return getattr(module, name)
        raise AttributeError(f"module '{self.__name__}' has no attribute '{name}'")


class _OldPathFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        prefix, _, old = fullname.partition(".")
        if prefix != "abduct" or old not in OLD_PATHS:
            return None
        return importlib.machinery.ModuleSpec(fullname, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        module = _Forwarding(spec.name)
        module.homes = _homes(spec.name.partition(".")[2])
        return module

    def get_code(self, fullname: str) -> types.CodeType:
        """For ``python -m abduct.cli`` (runpy asks the loader for code): run the new home as ``__main__``."""
        home = _homes(fullname.partition(".")[2])[0]
        return compile(f"import runpy\nrunpy.run_module({home!r}, run_name='__main__', alter_sys=True)", fullname, "exec")

    def exec_module(self, module: types.ModuleType) -> None:
        homes = " and ".join(getattr(module, "homes", ()))
        warnings.warn(f"{module.__name__} is deprecated and will be removed in abduct 0.3; import from abduct, "
                      f"abduct.kit, abduct_modelkit, abduct_testing, abduct_report or abduct_compose (it now lives in {homes})", DeprecationWarning, stacklevel=2)


def install_old_paths() -> None:
    if not any(isinstance(finder, _OldPathFinder) for finder in sys.meta_path):
        sys.meta_path.append(_OldPathFinder())
