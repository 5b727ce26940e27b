"""abduct-report's hooks: the pages of every finished run, and the ``abduct compare`` and
``abduct published`` commands."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from abduct import hookimpl
from abduct.contract import RunPages

if TYPE_CHECKING:
    from abduct_report.samples import SampleView


@hookimpl
def render_run_pages(results: Mapping[str, Any], predictions: Sequence[Mapping[str, Any]], out_dir: Path,
                     sample_view: SampleView | None, cache_dir: Path | None) -> RunPages:
    """report.md, report.html and samples.html (its thumbnails in ``samples/``), rendered before
    the core writes anything."""
    # imported here, not when the plugin registers: every abduct command loads this module
    from abduct_report.conditions import run_label
    from abduct_report.markdown import markdown_report
    from abduct_report.report_page import html_report
    from abduct_report.samples import SAMPLES_PAGE, render_samples
    from abduct_report.thumbnails import THUMB_DIR

    run, records = dict(results), [dict(r) for r in predictions]
    files = {"report.md": markdown_report(run), "report.html": html_report(run, records, out_dir)}
    # rendered last: its thumbnails are files, staged in a folder the core publishes or the failure removes
    files[SAMPLES_PAGE], thumbnails = render_samples(f"{run['task']} — {run_label(run) or run['model']['spec']}", records,
                                                     sample_view, out_dir, cache=cache_dir)
    return RunPages(files, {THUMB_DIR: thumbnails} if thumbnails is not None else {})


@hookimpl
def register_commands(cli: click.Group) -> None:
    from abduct_report.cli import compare_cmd, published_cmd

    cli.add_command(compare_cmd)
    cli.add_command(published_cmd)
