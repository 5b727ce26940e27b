"""abduct-demo: ``abduct demo``, the whole workflow on a laptop CPU in a few minutes.

The command runs the sections the installed plugins register (hook ``register_demos``, which this
package declares: ``abduct_demo.hooks``): each
section is a function ``section(ctx: DemoContext) -> DemoTable`` that makes or reuses a synthetic
corpus, trains what it trains, evaluates through ``ctx.evaluate`` and returns one table. A
section that needs a module of a distribution its package does not depend on imports it with
``require_module``. Scripts run the sections with ``run_demo`` and put every kept run side by
side with ``write_overview`` (abduct-report's comparison page).

The names load on first use: the plugin's entry module (``abduct_demo.plugin``), imported by
every ``abduct`` command, stays as light as ``abduct``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from abduct_demo.runner import (
        DEMO_THREADS,
        DemoContext,
        DemoTable,
        Section,
        default_jobs,
        require_module,
        run_demo,
        sections,
        write_overview,
    )

__all__ = ["DEMO_THREADS", "DemoContext", "DemoTable", "Section", "default_jobs", "require_module", "run_demo",
           "sections", "write_overview"]


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module 'abduct_demo' has no attribute '{name}'")
    return getattr(importlib.import_module("abduct_demo.runner"), name)
