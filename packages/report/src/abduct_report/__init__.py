"""abduct-report: the human-readable pages of abduct runs.

Installed beside abduct-core, every finished run (``abduct eval``, ``abduct merge``) also gets
``report.md``, ``report.html`` (its metrics with intervals, plots, breakdowns and examples) and
``samples.html`` (every sample, offline), through the core's ``render_run_pages`` hook; and the
CLI gets ``abduct compare`` (finished runs side by side, paired tests, the papers' rows).
Scripts use ``compare``, ``html_page``, ``text_table``, ``html_report`` and ``markdown_report``.
"""


from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from abduct_report.comparison import Comparison, Row, compare, html_page, text_table
    from abduct_report.markdown import markdown_report
    from abduct_report.report_page import html_report

# Loaded on first use: every abduct command imports the plugin's entry module (abduct_report.plugin),
# and with it this package, so importing the pages here would cost every command their imports.
_HOMES = {"Comparison": "comparison", "Row": "comparison", "compare": "comparison", "html_page": "comparison",
          "text_table": "comparison", "markdown_report": "markdown", "html_report": "report_page"}

__all__ = ["Comparison", "Row", "compare", "html_page", "html_report", "markdown_report", "text_table"]


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module 'abduct_report' has no attribute '{name}'")
    return getattr(importlib.import_module(f"abduct_report.{_HOMES[name]}"), name)
