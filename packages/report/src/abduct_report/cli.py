"""``abduct compare RUN_DIR...``: finished runs side by side (see ``compare``); ``abduct published
[TASK]``: the papers' rows the installed tasks ship."""

from __future__ import annotations

from pathlib import Path

import click

from abduct import AbductError
from abduct.kit import RESAMPLE_COUNT, SEED, atomic_write_text, emit_json


@click.command("compare")
@click.argument("run_dirs", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--html", "html_out", type=click.Path(path_type=Path), default=None,
              help="Also write the comparison as a self-contained HTML page here.")
@click.option("--no-published", is_flag=True, help="Leave out the papers' published rows.")
@click.option("--ci-resamples", type=RESAMPLE_COUNT, default=RESAMPLE_COUNT.default, show_default=True,
              metavar="N",
              help="Resamples of each paired test (0: no tests).")
@click.option("--seed", type=SEED, default=0, show_default=True, help="Seed of the paired tests' resampling.")
@click.option("--breakdowns", is_flag=True,
              help="Also print each breakdown (by_<field>, per_<name>) cell by cell, with n and intervals.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def compare_cmd(run_dirs: tuple[Path, ...], html_out: Path | None, no_published: bool, ci_resamples: int, seed: int,
                breakdowns: bool, as_json: bool) -> None:
    """Put finished runs (their --out directories) side by side: models x tasks, the papers'
    published rows for reference, each run's difference from the first run of its task with a
    paired test on the units both scored (Holm-corrected within the headline metrics; each
    breakdown is a family of its own), and mean ± std over runs differing only in --seed."""
    from abduct_report.comparison import compare, disagreement_pages, html_page, text_table
    from abduct_report.conditions import input_differences
    from abduct_report.parity import identical

    comparison = compare(run_dirs, published=not no_published, resamples=ci_resamples, seed=seed)
    if html_out is not None:
        if html_out.is_dir():
            raise AbductError(f"--html {html_out} is a directory; give a file name (e.g. compare.html)")
        pages = disagreement_pages(comparison, html_out)  # rendered before anything is written
        for name, text in pages.items():
            atomic_write_text(html_out.parent / name, text)
        atomic_write_text(html_out, html_page(comparison, list(pages), where=html_out.parent))
    if as_json:
        emit_json({"runs": [{"dir": str(r.run), "task": r.task, "model": r.model, "split": r.split,
                             "conditions": r.conditions, "metrics": r.metrics, "intervals": r.intervals, "name": r.name,
                             "headline": comparison.headline(r.task), "breakdowns": comparison.breakdowns(r.task),
                             # what shaped its inputs differently from the first run of its task
                             "not_like_for_like": input_differences(comparison.baseline(r.task).results, r.results),
                             # the share of answers identical to the first run's (the parity of two setups)
                             **({"same_answers": same} if r is not comparison.baseline(r.task) and r.run is not None
                                and (same := identical(comparison.baseline(r.task).run or r.run, r.run)) else {}),
                             **({"versus": r.versus} if r.versus is not None else {})} for r in comparison.runs],
                   "seeds": comparison.seeds,
                   "published": [{"task": p.task, "model": p.model, "split": p.split, "metrics": p.metrics,
                                  "citation": p.citation, "source": p.source, "conditions": p.conditions}
                                 for p in comparison.published]})
        return
    click.echo(text_table(comparison, breakdowns=breakdowns), nl=False)
    if html_out is not None:
        click.echo(f"wrote {html_out}")


PUBLISHED_COLUMNS = ("task", "model", "setting", "split", "metrics", "source", "citation")


@click.command("published")
@click.argument("task", required=False)
@click.option("--json", "as_json", is_flag=True, help="A JSON list of rows.")
def published_cmd(task: str | None, as_json: bool) -> None:
    """The papers' published rows (every installed task, or TASK): tab-separated under a header
    line (task, model, setting, split, metrics, source: the paper's table, citation)."""
    from abduct.host import get_registry

    registry = get_registry()
    names = [c.name for c in registry.components("task")]
    if task is not None and task not in names:
        raise AbductError(f"unknown task '{task}'; installed: {', '.join(sorted(names))}")
    rows = [row for name in ([task] if task else names) for row in registry.published() if row.task == name]
    if as_json:
        emit_json([{"task": r.task, "model": r.model, "split": r.split, "metrics": r.metrics,
                    "citation": r.citation, "source": r.source,
                    **({"setting": r.setting} if r.setting else {}), **({"std": r.std} if r.std else {}),
                    **({"conditions": r.conditions} if r.conditions else {})}
                   for r in rows])
        return
    if not rows:
        click.echo("no published rows" + (f" for task '{task}'" if task else ""))
        return
    click.echo("\t".join(PUBLISHED_COLUMNS))
    for r in rows:
        values = ", ".join(f"{k}={v:g}" for k, v in r.metrics.items())
        click.echo("\t".join((r.task, r.model, r.setting or "-", r.split or "-", values, r.source, r.citation)))
