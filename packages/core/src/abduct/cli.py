"""The ``abduct`` command line. Plugins add commands through the ``register_commands`` hook."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from abduct import __version__
from abduct.errors import AbductError
from abduct.plugins import KINDS, get_registry


def emit_json(obj: Any) -> None:
    click.echo(json.dumps(obj, indent=2, allow_nan=False))


def subgroup(cli: click.Group, name: str, help: str) -> click.Group:
    """The group ``name`` of ``cli``, created on first use, so several plugins can share
    one (e.g. ``abduct train clip`` and ``abduct train t5``)."""
    existing = cli.commands.get(name)
    if isinstance(existing, click.Group):
        return existing
    if existing is not None:
        raise AbductError(f"command '{name}' exists and is not a group")
    group = click.Group(name=name, help=help)
    cli.add_command(group)
    return group


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="abduct")
def cli() -> None:
    """abduct: visual abductive reasoning — models, benchmarks, official scoring."""


@cli.command("plugins")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def plugins_cmd(as_json: bool) -> None:
    """List installed plugins, what they register, and errors of broken ones."""
    infos = get_registry().plugins
    if as_json:
        emit_json([info.as_json() for info in infos])
        return
    for info in infos:
        head = f"{info.name} ({info.distribution or 'unpackaged'} {info.version or ''})".replace(" )", ")")
        click.echo(head)
        if info.error:
            click.echo(f"  ERROR: {info.error}")
        for kind, names in info.registers.items():
            click.echo(f"  {kind}s: {', '.join(names)}")


def _list_command(name: str, kinds: tuple[str, ...], doc: str) -> None:
    @cli.command(name, help=doc)
    @click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
    def command(as_json: bool) -> None:
        registry = get_registry()
        rows = [
            {"name": c.name, "plugin": c.plugin, "description": c.description, "kind": c.kind}
            for kind in kinds
            for c in registry.components(kind)
        ]
        if as_json:
            emit_json(rows)
            return
        if not rows:
            click.echo(f"no {name} installed")
        width = max((len(r["name"]) for r in rows), default=0)
        for r in rows:
            click.echo(f"{r['name']:<{width}}  {r['description']}  [{r['plugin']}]")


_list_command("tasks", ("task",), "List evaluation tasks.")
_list_command("models", ("scorer", "generator"), "List models (scorers and generators).")
_list_command("metrics", ("metric",), "List metrics.")
_list_command("datasets", ("dataset",), "List datasets.")
assert set(KINDS) == {"dataset", "task", "scorer", "generator", "metric"}


@cli.command("eval")
@click.argument("task")
@click.option("--model", "model", required=True, help="Model spec: name[:argument][@tag].")
@click.option("--data", "data_dir", required=True, type=click.Path(path_type=Path), help="Dataset directory.")
@click.option("--out", "out_dir", required=True, type=click.Path(path_type=Path), help="Output directory.")
@click.option("--split", default=None, help="Dataset split (the task's default otherwise).")
@click.option("--limit", type=click.IntRange(min=1), default=None, help="Evaluate only the first N units.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--batch-size", type=click.IntRange(min=1), default=64, show_default=True)
@click.option("--device", default="cpu", show_default=True)
@click.option("--cache-dir", type=click.Path(path_type=Path), default=None, help="Embedding cache location.")
@click.option("--no-cache", is_flag=True, help="Do not read or write the embedding cache.")
@click.option("--quiet", is_flag=True, help="No progress bars.")
@click.option("--json", "as_json", is_flag=True, help="Print results.json to stdout.")
def eval_cmd(
    task: str, model: str, data_dir: Path, out_dir: Path, split: str | None, limit: int | None,
    seed: int, batch_size: int, device: str, cache_dir: Path | None, no_cache: bool,
    quiet: bool, as_json: bool,
) -> None:
    """Evaluate MODEL on TASK; writes results.json, predictions.jsonl and report.md."""
    from abduct.evaluate import EvalConfig, run_evaluation

    config = EvalConfig(
        task=task, model=model, data_dir=data_dir, out_dir=out_dir, split=split, limit=limit,
        seed=seed, batch_size=batch_size, device=device, quiet=quiet, cache_dir=cache_dir,
        use_cache=not no_cache,
    )
    results = run_evaluation(config)
    if as_json:
        emit_json(results)
        return
    click.echo(f"{task} / {results['model']['spec']}:")
    for key, value in results["metrics"].items():
        if isinstance(value, (int, float)):
            click.echo(f"  {key}: {value:.4f}" if isinstance(value, float) else f"  {key}: {value}")
    click.echo(f"wrote {out_dir / 'results.json'}")


@cli.command("score")
@click.argument("task")
@click.option("--predictions", required=True, type=click.Path(path_type=Path))
@click.option("--answer-key", required=True, type=click.Path(path_type=Path))
@click.option("--instance-ids", type=click.Path(path_type=Path), default=None,
              help="Sorted test ids, for .npy predictions.")
@click.option("--json", "as_json", is_flag=True, help="Print the metrics object as JSON.")
def score_cmd(task: str, predictions: Path, answer_key: Path, instance_ids: Path | None, as_json: bool) -> None:
    """Score a predictions file in TASK's official format against an answer key."""
    from abduct.evaluate import load_task

    metrics = load_task(task).score_files(predictions, answer_key, instance_ids)
    if as_json:
        emit_json(metrics)
        return
    for key, value in metrics.items():
        click.echo(f"{key}: {value:.4f}" if isinstance(value, float) else f"{key}: {value}")


def build_cli() -> click.Group:
    """The CLI with every healthy plugin's commands added."""
    group = click.Group(
        name="abduct", commands=dict(cli.commands), params=list(cli.params),
        help=cli.help, context_settings=cli.context_settings,
    )
    get_registry().call_each("register_commands", cli=group)
    return group


def main(argv: list[str] | None = None) -> int:
    """Entry point: user errors print one line and exit 2, never a traceback."""
    try:
        returned = build_cli().main(args=argv, prog_name="abduct", standalone_mode=False)
    except AbductError as exc:
        click.echo(f"error: {exc}", err=True)
        return 2
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        return 1
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    except click.exceptions.Exit as exc:
        return int(exc.exit_code)
    except BrokenPipeError:
        return 0
    # Without standalone mode, click hands back a command's `ctx.exit(code)` as the return value.
    return returned if isinstance(returned, int) else 0


if __name__ == "__main__":
    sys.exit(main())
