"""``abduct metric NAME`` (added by the plugin's ``register_commands``): any installed metric,
the core's ``exact-match`` included, on predictions and references read from JSON files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from abduct import Spec
from abduct.kit import emit_json, option_pairs, read_json, settings_from, settings_options, validate_inputs


def load_inputs(
    predictions: Path, references: Path, questions: Path | None = None
) -> tuple[dict[str, str], dict[str, list[str]], dict[str, str] | None]:
    """Read the three JSON files and validate them together."""
    files: dict[str, str | Path] = {"predictions": predictions, "references": references}
    if questions is not None:
        files["questions"] = questions
    return validate_inputs(
        read_json(predictions, "predictions file"),
        read_json(references, "references file"),
        None if questions is None else read_json(questions, "questions file"),
        files=files,
    )


@click.command("metric")
@click.argument("name")
@click.option("--predictions", required=True, type=click.Path(path_type=Path), help="JSON {id: text}.")
@click.option("--references", required=True, type=click.Path(path_type=Path), help="JSON {id: [text, ...]}.")
@click.option("--questions", type=click.Path(path_type=Path), default=None, help="JSON {id: text} (bem).")
@option_pairs
@click.option("--per-sample", is_flag=True, help="Also print the per-sample values.")
@settings_options()
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def metric_cmd(name: str, predictions: Path, references: Path, questions: Path | None,
               option_pairs: tuple[str, ...], per_sample: bool, as_json: bool, **shared: Any) -> None:
    """Score PREDICTIONS against REFERENCES with the metric NAME (see `abduct metrics`);
    its options go after the name (bertscore,num_layers=17) or in -o."""
    from abduct.host import get_registry

    pred, refs, ques = load_inputs(predictions, references, questions)
    spec = Spec.parse(name).with_options(option_pairs)
    result = get_registry().create("metric", spec, settings_from(shared)).compute(pred, refs, ques)
    values: dict[str, Any] = dict(result.corpus)
    if "hash" in result.info:  # e.g. BERTScore's description of model, layer, idf and rescaling
        values[f"{spec.name.replace('-', '_')}_hash"] = result.info["hash"]
    if per_sample:
        values["per_sample"] = {k: dict(v) for k, v in result.per_sample.items()}
    if as_json:
        emit_json(values)
        return
    for sample, row in values.pop("per_sample", {}).items():
        click.echo(f"{sample}\t" + "\t".join(f"{k}={v:.6f}" for k, v in row.items()))
    for key, value in values.items():
        click.echo(f"{key}: {value:.6f}" if isinstance(value, float) else f"{key}: {value}")
