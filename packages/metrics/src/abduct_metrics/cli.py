"""``abduct metric NAME``: score prediction/reference JSON files with a registered metric."""

from __future__ import annotations

import inspect
import json
from pathlib import Path
from typing import Any

import click

from abduct.errors import AbductError


def parse_options(pairs: tuple[str, ...]) -> dict[str, Any]:
    """``key=value`` pairs; values are read as JSON when they parse (``2``, ``true``,
    ``null``) and kept as text otherwise (``roberta-large``, a path)."""
    options: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        key = key.strip().replace("-", "_")
        if not sep or not key:
            raise AbductError(f"--option expects key=value, got '{pair}'")
        try:
            options[key] = json.loads(raw)
        except json.JSONDecodeError:
            options[key] = raw
    return options


def check_options(name: str, factory: Any, options: dict[str, Any]) -> None:
    """Unknown option names become a one-line error listing the accepted ones."""
    params = inspect.signature(factory).parameters
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return
    accepted = [p for p, v in params.items() if v.kind is inspect.Parameter.KEYWORD_ONLY or v.default is not v.empty]
    unknown = sorted(set(options) - set(accepted))
    if unknown:
        listing = ", ".join(accepted) if accepted else "none"
        raise AbductError(f"metric '{name}' has no option {', '.join(repr(u) for u in unknown)} (accepted: {listing})")


@click.command("metric")
@click.argument("name")
@click.option("--predictions", required=True, type=click.Path(path_type=Path), help="JSON {id: text}.")
@click.option("--references", required=True, type=click.Path(path_type=Path), help="JSON {id: [text, ...]}.")
@click.option("--questions", type=click.Path(path_type=Path), default=None, help="JSON {id: text} (bem).")
@click.option("--option", "-o", "option_pairs", multiple=True, metavar="KEY=VALUE",
              help="Metric option, repeatable (e.g. -o model=DIR -o num_layers=17 -o clean_non_ascii=true).")
@click.option("--per-sample", is_flag=True, help="Also print the per-sample values.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def metric_command(
    name: str, predictions: Path, references: Path, questions: Path | None,
    option_pairs: tuple[str, ...], per_sample: bool, as_json: bool,
) -> None:
    """Score PREDICTIONS against REFERENCES with the metric NAME (see `abduct metrics`)."""
    from abduct.cli import emit_json
    from abduct.plugins import PluginError, get_registry
    from abduct_metrics.inputs import load_inputs

    pred, refs, ques = load_inputs(predictions, references, questions)
    options = parse_options(option_pairs)
    component = get_registry().get("metric", name)
    try:
        factory = component.registration.load()
    except Exception as exc:
        raise PluginError(f"metric '{name}' failed to load: {type(exc).__name__}: {exc}") from exc
    check_options(name, factory, options)
    result = factory(**options).compute(pred, refs, ques)
    values: dict[str, Any] = dict(result.corpus)
    if "hash" in result.info and name == "bertscore":
        values["bertscore_hash"] = result.info["hash"]
    if per_sample:
        values["per_sample"] = {k: dict(v) for k, v in result.per_sample.items()}
    if as_json:
        emit_json(values)
        return
    for key, value in values.items():
        if key == "per_sample":
            for sample, row in value.items():
                click.echo(f"{sample}\t" + "\t".join(f"{k}={v:.6f}" for k, v in row.items()))
        else:
            click.echo(f"{key}: {value:.6f}" if isinstance(value, float) else f"{key}: {value}")
