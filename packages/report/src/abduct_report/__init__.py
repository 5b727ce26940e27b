"""abduct-report: the human-readable pages of abduct runs.

Installed beside abduct-core, every finished run (``abduct eval``, ``abduct merge``) also gets
``report.md``, ``report.html`` (its metrics with intervals, plots, breakdowns and examples) and
``samples.html`` (every sample, offline), through the core's ``render_run_pages`` hook; and the
CLI gets ``abduct compare`` (finished runs side by side, paired tests, the papers' rows).
Scripts use ``compare``, ``html_page``, ``text_table``, ``html_report`` and ``markdown_report``.
"""

from abduct_report.comparison import Comparison, Row, compare, html_page, text_table
from abduct_report.markdown import markdown_report
from abduct_report.report_page import html_report

__all__ = ["Comparison", "Row", "compare", "html_page", "html_report", "markdown_report", "text_table"]
