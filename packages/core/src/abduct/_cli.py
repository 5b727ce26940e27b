"""The ``abduct`` command line. Plugins add commands through the ``register_commands`` hook."""

from __future__ import annotations

import contextlib
import math
import os
import signal
import sys
import threading
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from abduct import __version__
from abduct._declare.traits import score_files, task_traits
from abduct._registry.registry import KINDS, get_registry
from abduct.contract.errors import AbductError
from abduct.contract.spec import Settings, Spec
from abduct.contract.task import ScoreContext
from abduct.kit.cli import RESAMPLE_COUNT, emit_json, option_pairs, quiet_and_json, settings_from, settings_options
from abduct.kit.cli import _check_device as check_device
from abduct.kit.install import install_command
from abduct.kit.io import describe_os_error

if TYPE_CHECKING:
    from abduct._run.shards import Shard


def _label(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """``--label NAME``: a name of one line with some text in it, trimmed."""
    if value is None:
        return None
    if not value.strip() or any(c in value for c in "\n\r"):
        raise click.BadParameter(f"{value!r} is not a name: give some text on one line", ctx, param)
    return value.strip()


def _shard(ctx: click.Context, param: click.Parameter, value: str | None) -> Any:
    """``--shard I/N``: shard I (from 0) of N, or a usage error saying what is wrong; ``auto``
    as it is (the environment is read once --shards is known)."""
    if value is None or value.strip() == "auto":
        return None if value is None else "auto"
    from abduct._run.shards import Shard

    try:
        return Shard.parse(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc), ctx, param) from None


BUDGET_SPENT = 3  # the exit status of a run --budget stopped (1: check problems, 2: user errors, 130/143: signals)


def _budget(ctx: click.Context, param: click.Parameter, value: str | None) -> dict[str, float] | None:
    """``--budget tokens=N`` and/or ``cost=X`` (comma-separated): ``{"tokens": N, "cost": X}``, or a
    usage error saying what is wrong."""
    if value is None:
        return None
    found: dict[str, float] = {}
    for part in value.split(","):
        name, _, amount = part.strip().partition("=")
        if name == "tokens" and amount.strip().isdigit() and int(amount) >= 1:
            found["tokens"] = int(amount)
            continue
        try:
            cost = float(amount)
        except ValueError:
            cost = math.nan
        if name != "cost" or not math.isfinite(cost) or cost <= 0:
            raise click.BadParameter(f"'{value}' is not tokens=N (N a whole number of at least 1) or cost=X (X a "
                                     "number above 0, at the models' price_in=/price_out=), e.g. --budget "
                                     "tokens=200000 or --budget cost=5", ctx, param)
        found["cost"] = cost
    return found


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="abduct")
def cli() -> None:
    """abduct: visual abductive reasoning — models, benchmarks, official scoring."""


@cli.command("plugins")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def plugins_cmd(as_json: bool) -> None:
    """List installed plugins, what they register, and errors of broken ones (a plugin written
    for a plugin API this abduct-core does not support is listed, with the versions, and not loaded)."""
    registry = get_registry()
    registry.published()  # reads every plugin's published rows, so that a malformed one shows here
    infos = registry.plugins
    if as_json:
        emit_json([info.as_json() for info in infos])
        return
    for info in infos:
        head = f"{info.name} ({info.distribution or 'unpackaged'} {info.version or ''})".replace(" )", ")")
        click.echo(head)
        if info.error:
            click.echo(f"  ERROR: {info.error}")
        if info.published_error:
            click.echo(f"  published rows left out: {info.published_error}")
        for kind, names in info.registers.items():
            click.echo(f"  {kind}s: {', '.join(names)}")
        if info.note:
            click.echo(f"  note: {info.note}")


def _list_command(name: str, kind: str, doc: str) -> None:
    @cli.command(name, help=doc)
    @click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
    def command(as_json: bool) -> None:
        rows = [
            {"name": c.name, "plugin": c.plugin, "description": c.description, "kind": c.kind}
            for c in get_registry().components(kind)
        ]
        if as_json:
            emit_json(rows)
            return
        if not rows:
            click.echo(f"no {name} installed")
        width = max((len(r["name"]) for r in rows), default=0)
        for r in rows:
            click.echo(f"{r['name']:<{width}}  {r['description']}  [{r['plugin']}]")


_list_command("tasks", "task", "List evaluation tasks.")
_list_command("models", "model", "List models (each scores, generates, or both).")
_list_command("metrics", "metric", "List metrics.")
_list_command("datasets", "dataset", "List datasets.")
_list_command("demos", "demo", "List the sections `abduct demo` (abduct-demo) runs.")
assert set(KINDS) == {"dataset", "task", "model", "metric", "demo"}


def echo_values(values: dict[str, Any], indent: str = "", metric_info: dict[str, Any] | None = None,
                intervals: dict[str, Any] | None = None, prefix: str = "") -> None:
    """``key: value`` lines; with ``metric_info`` (results.json's block), ↑/↓ after each value;
    with ``intervals``, each metric's ``[low, high]``."""
    from abduct._declare.metrics import arrow_of

    for key, value in values.items():
        arrow = arrow_of(metric_info or {}, key)
        suffix = f" {arrow}" if arrow else ""
        ci = (intervals or {}).get(prefix + key)
        shown = f" [{ci['low']:.4f}, {ci['high']:.4f}]" if isinstance(ci, dict) else ""
        if isinstance(value, dict) and value and all(isinstance(v, int | float | str) for v in value.values()):
            click.echo(f"{indent}{key}:")  # a group of values, e.g. VAR's observed/hypothesis sets
            echo_values(value, indent + "  ", None, intervals, f"{prefix}{key}.")
        elif isinstance(value, float):
            click.echo(f"{indent}{key}: {value:.4f}{shown}{suffix}")
        elif isinstance(value, (int, str)):
            click.echo(f"{indent}{key}: {value}{shown}{suffix}")


@cli.command("eval")
@click.argument("task")
@click.option("--model", "model", required=True, help="Model spec: name[:argument][@tag][,key=value...].")
@click.option("--data", "data_dir", required=True, type=click.Path(path_type=Path), help="Dataset directory.")
@click.option("--out", "out_dir", required=True, type=click.Path(path_type=Path), help="Output directory.")
@click.option("--split", default=None, help="Dataset split (the task's default otherwise).")
@click.option("--limit", type=click.IntRange(min=1), default=None, metavar="N",
              help="Evaluate only the first N items in the task's own unit (Sherlock retrieval: chunks of ~1,000 "
                   "instances; localization: images; comparison: source instances; generation: instances; CoSIm: "
                   "records; NL-EYE: samples); results.json's limit_unit names it.")
@settings_options()
@click.option("--cache-dir", type=click.Path(path_type=Path), default=None,
              help="Cache location for embeddings and generations (default ~/.cache/abduct).")
@click.option("--no-cache", is_flag=True, help="Do not read or write the caches.")
@click.option("--judge", "judges", multiple=True, metavar="SPEC",
              help="A generating model that judges generations against references, for tasks that ask for one "
                   "(e.g. openai:MODEL,base_url=URL or vlm:DIR). Repeatable: the first judge's verdicts make the "
                   "task's numbers; each further judge is asked the same items, for the judges' agreement.")
@click.option("--overwrite", is_flag=True,
              help="Replace a finished run of another configuration in --out (refused otherwise).")
@click.option("--dataset", "datasets", multiple=True, metavar="SPEC",
              help="Options for a dataset the task reads, e.g. --dataset sherlock,vg_root=DIR (repeatable).")
@click.option("--ci-resamples", type=RESAMPLE_COUNT, default=RESAMPLE_COUNT.default, show_default=True,
              metavar="N",
              help="Bootstrap resamples for each metric's 95% interval (seeded by --seed); 0 turns intervals off.")
@click.option("--shard", default=None, metavar="I/N|auto", callback=_shard,
              help="Evaluate only shard I of N (from 0) into --out, with no communication between shards (one "
                   "per machine or array task); `abduct merge OUT SHARD_DIR...` makes the run from all N. auto: "
                   "the shard the job engine names: a Slurm array task (SLURM_ARRAY_TASK_ID and _COUNT, the "
                   "array 0-(N-1) with no step or gap), a Kubernetes Indexed Job (JOB_COMPLETION_INDEX, with "
                   "--shards N) or RANK/WORLD_SIZE (each process one shard, joining no torchrun group; not under "
                   "torchrun itself); refused when none is set or two name different shards.")
@click.option("--shards", "shard_count", type=click.IntRange(min=1), default=None, metavar="N",
              help="With --shard auto: the number of shards, where the environment does not give it (Kubernetes) "
                   "or to confirm it (refused when it differs).")
@click.option("--label", default=None, metavar="NAME", callback=_label,
              help="What compare and the pages call this run (recorded in results.json as model.label); default: "
                   "the model spec without URL-valued options (openai:MODEL for openai:MODEL,base_url=URL).")
@click.option("--budget", default=None, metavar="tokens=N|cost=X", callback=_budget,
              help="Send nothing more once the model and the judge have spent N tokens (prompt and completion, "
                   "as the server's usage counts them; a local generator: prompt and generated tokens) in this "
                   "command, or cost X at their prices (price_in=, price_out= per million tokens on each --model "
                   "and --judge spec); both: tokens=N,cost=X. Checked before each unit and each --batch-size batch, "
                   "so the budget is passed by at most one batch. The finished units are kept, the line says what "
                   f"was spent, and a rerun with a larger budget (or none) resumes. Exit status {BUDGET_SPENT}.")
@quiet_and_json
def eval_cmd(task: str, model: str, data_dir: Path, out_dir: Path, split: str | None, limit: int | None,
             cache_dir: Path | None, no_cache: bool, judges: tuple[str, ...], overwrite: bool, datasets: tuple[str, ...],
             ci_resamples: int, shard: Any, shard_count: int | None, label: str | None, budget: dict[str, float] | None, quiet: bool, as_json: bool,
             **shared: Any) -> None:
    """Evaluate MODEL on TASK (a spec too: name[,key=value...]); writes results.json,
    predictions.jsonl, units.json and (with abduct-report) report.md, report.html and samples.html into --out. Under
    `torchrun --nproc-per-node N $(which abduct) eval ...` the processes share the work and
    the first one writes. With --shard I/N (or auto: the job engine's task index), --out
    receives that shard's records for `abduct merge`."""
    from abduct._run.evaluate import EvalConfig, run_evaluation

    shard = _resolved_shard(shard, shard_count)
    settings = settings_from(shared)
    config = EvalConfig(
        task=task, model=model, data_dir=data_dir, out_dir=out_dir, split=split, limit=limit,
        seed=settings.seed, batch_size=settings.batch_size, device=settings.device, quiet=quiet,
        cache_dir=cache_dir, use_cache=not no_cache, judge=judges[0] if judges else None,
        other_judges=tuple(judges[1:]), overwrite=overwrite,
        datasets=datasets, ci_resamples=ci_resamples, shard=shard, label=label,
        budget_tokens=int(budget["tokens"]) if budget and "tokens" in budget else None,
        budget_cost=budget.get("cost") if budget else None,
    )
    from abduct._run.runner import BudgetSpent

    try:
        results = run_evaluation(config)
    except KeyboardInterrupt:
        raise Interrupted(_resume_hint(out_dir)) from None
    except BudgetSpent as exc:
        click.echo(f"stopped: {exc}; {_budget_hint(out_dir)}", err=True)
        click.get_current_context().exit(BUDGET_SPENT)
    if results.get("processes", 1) > 1 and not _is_main_process():
        return
    if results.get("resumed"):  # on stderr, also under --quiet and --json
        units = results.get("resumed_units") or {}
        click.echo(f"resumed: {units.get('kept')} of {units.get('of')} units kept from an unfinished run in "
                   f"{out_dir}", err=True)
    if as_json:
        emit_json(results)
        echo_unparsed(results)
        return
    if shard is not None and results.get("already_finished"):
        click.echo(f"{task} / {results['model']['spec']}: shard {shard.described} was already finished in {out_dir}; "
                   "nothing to do (--overwrite evaluates it again)")
        return
    if shard is not None:
        done = ", ".join(f"{entry['elements']} of stage '{stage}'" for stage, entry in results["stages"].items())
        click.echo(f"{task} / {results['model']['spec']}: shard {shard.described} done ({done or 'nothing to do'}); wrote "
                   f"{out_dir}. When all {shard.count} are done: abduct merge OUT SHARD_DIR...")
        return
    click.echo(f"{task} / {results['model']['spec']}:")
    echo_values(results["metrics"], "  ", results.get("metric_info"), results.get("intervals"))
    if results["inputs"]["ignored"]:
        click.echo(f"  (the model went without: {', '.join(results['inputs']['ignored'])}; the task allows it)")
    if results.get("limit_unit"):
        click.echo(f"  (limited to the first {limit} {results['limit_unit']})")
    if "judge" in results:
        for k, judge in enumerate([results["judge"], *results["judge"].get("others", [])]):
            said = f"  {'also judged' if k else 'judged'} by {judge['spec']}: {judge['judged']} items"
            if judge["read_by_task"] == judge["judged"]:  # the task's own figures say what it read
                click.echo(f"{said} (answers read by the task)")
                continue
            same = (f", the same verdict as the first on {judge['same_verdicts']} of {judge['both_read']} read by both"
                    if k else "")
            click.echo(f"{said}, {judge['parse_failures']} unparsed verdicts{same}")
    echo_tokens(results)
    echo_written(out_dir, results)
    echo_unparsed(results)  # last: what a reader of the run must not miss


def _resolved_shard(shard: Shard | str | None, count: int | None) -> Shard | None:
    """The Shard ``--shard`` and ``--shards`` name (``auto``: the environment's), None without
    --shard; one line (an AbductError) for what cannot be one shard of one run."""
    from abduct._run.shards import from_environment

    if not isinstance(shard, str):
        if count is not None:
            raise AbductError(f"--shards {count} goes with --shard auto" +
                              (f" (--shard {shard} already says {shard.count})" if shard is not None else ""))
        return shard
    try:
        return from_environment(os.environ, count)
    except ValueError as exc:
        raise AbductError(str(exc)) from None


PAGES = ("report.md", "report.html", "samples.html")


class Interrupted(Exception):
    """Ctrl-C (SIGINT) during a command: exit 130, as shells expect, with one line saying what a
    rerun does (the message) where there is something to say."""


def _resume_hint(out_dir: Path) -> str:
    """What rerunning an interrupted ``abduct eval`` into ``out_dir`` does."""
    from abduct._run.runner import PARTIAL_DIR, stored_units, units_phrase

    kept = stored_units(out_dir / PARTIAL_DIR)
    if not kept:
        return "no unit had finished, so nothing was kept; the same command starts again"
    return f"rerun the same command to resume ({units_phrase(kept)} kept in {out_dir / PARTIAL_DIR})"


def _budget_hint(out_dir: Path) -> str:
    """What rerunning an ``abduct eval`` that ``--budget`` stopped does."""
    from abduct._run.runner import PARTIAL_DIR, stored_units, units_phrase

    kept = stored_units(out_dir / PARTIAL_DIR)
    kept_part = f"{units_phrase(kept)} kept in {out_dir / PARTIAL_DIR}" if kept else "no unit finished"
    return f"{kept_part} (and the answers received are cached); the same command with a larger --budget (or none) resumes"


def echo_unparsed(results: dict[str, Any]) -> None:
    """On stderr (also under --quiet and --json): a loud line where most answers could not be read."""
    from abduct.kit.answers import unparsed_warnings

    for line in unparsed_warnings(results.get("metrics") or {}):
        click.secho(line, err=True, fg="yellow", bold=True)


def echo_tokens(results: dict[str, Any]) -> None:
    """The token ledger's line of the summary (``eval`` and ``merge``), where results.json has one."""
    if isinstance(results.get("tokens"), dict):
        from abduct._engine.tokens import summary_line

        click.echo(f"  tokens: {summary_line(results['tokens'])}")


def echo_written(out_dir: Path, results: dict[str, Any]) -> None:
    """The files a finished run wrote, the task's own among them (``artifacts``: a submission
    file, say); where no page renderer is installed, how to get the pages."""
    names = [name for name in ("results.json", "predictions.jsonl", "units.json", *results.get("artifacts", ()), *PAGES)
             if (out_dir / name).is_file()]
    click.echo(f"wrote {', '.join(names)} in {out_dir}")
    if not any(name in names for name in PAGES):
        click.echo(f"  (report.html and samples.html come with abduct-report: {install_command('abduct-report')})")


def _is_main_process() -> bool:
    """Rank 0 under torchrun (the process group is gone by the time results are printed)."""
    return os.environ.get("RANK", "0") == "0"


def task_flags(args: list[str]) -> list[str]:
    """``--name [VALUE]`` words after a task's own options, as its ``name=VALUE`` options
    (``--separate`` alone is ``separate=true``), so a task's options read as flags."""
    pairs, words = [], list(args)
    while words:
        word = words.pop(0)
        if not word.startswith("--") or len(word) < 3:
            raise AbductError(f"unexpected argument '{word}' (task options are --name [VALUE] or -o name=VALUE)")
        name, sep, value = word[2:].partition("=")
        if not sep:
            value = words.pop(0) if words and not words[0].startswith("--") else "true"
        pairs.append(f"{name}={value}")
    return pairs


@cli.command("score", context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
@click.argument("task")
@click.option("--predictions", required=True, type=click.Path(path_type=Path))
@click.option("--answer-key", type=click.Path(path_type=Path), default=None,
              help="The answers, for tasks whose predictions file does not carry its references.")
@click.option("--instance-ids", type=click.Path(path_type=Path), default=None,
              help="Sorted test ids, for .npy predictions.")
@option_pairs
@click.option("--json", "as_json", is_flag=True, help="Print the metrics object as JSON.")
@click.pass_context
def score_cmd(ctx: click.Context, task: str, predictions: Path, answer_key: Path | None, instance_ids: Path | None,
              option_pairs: tuple[str, ...], as_json: bool) -> None:
    """Score a predictions file in TASK's official format (against an answer key for tasks
    that need one). Further ``--name [VALUE]`` words are the task's options."""
    from abduct._run.collect import load_task

    spec = Spec.parse(task).with_options([*option_pairs, *task_flags(list(ctx.args))])
    loaded = load_task(spec)
    traits = task_traits(loaded, task)
    if traits.score_files is None:
        raise AbductError(f"task '{spec.name}' has no official predictions format to score; run it with abduct eval")
    if answer_key is None and traits.needs_answer_key:
        raise AbductError(f"task '{spec.name}' scores against an answer key: pass --answer-key FILE")
    registry, settings = get_registry(), Settings()
    context = ScoreContext(settings, lambda name, **options: registry.create("metric", Spec(name), settings, **options))
    metrics = score_files(traits, predictions, answer_key, instance_ids, context)
    if as_json:
        emit_json(metrics)
        return
    echo_values(metrics)


@cli.command("check")
@click.argument("task")
@click.option("--data", "data_dir", required=True, type=click.Path(path_type=Path), help="Dataset directory.")
@click.option("--dataset", "datasets", multiple=True, metavar="SPEC",
              help="Options for the dataset the task reads, e.g. --dataset cosim,image_root=DIR.")
@click.option("--json", "as_json", is_flag=True, help="Print the problems as a JSON list.")
@click.pass_context
def check_cmd(ctx: click.Context, task: str, data_dir: Path, datasets: tuple[str, ...], as_json: bool) -> None:
    """Check DIR as TASK reads it (its registered dataset's check, with the --dataset options):
    list schema problems and missing or unreadable media without running a model; exit 1 if
    there are any."""
    from abduct._run.collect import dataset_of
    from abduct.kit.cli import report_problems
    from abduct.kit.io import require_dir

    require_dir(data_dir, "data directory")
    report_problems(ctx, list(dataset_of(task, datasets).check(data_dir)), data_dir, as_json)


@cli.command("merge")
@click.argument("out_dir", type=click.Path(path_type=Path))
@click.argument("shard_dirs", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--data", "data_dir", type=click.Path(path_type=Path), default=None,
              help="Where this machine reads the data (default: where the first shard read it); its files must "
                   "hash as the shards' did.")
@click.option("--device", default="cpu", show_default=True, callback=check_device,
              help="Where the task's metrics run (no model is loaded).")
@click.option("--no-cache", is_flag=True, help="Do not keep the sample page's thumbnails in the cache.")
@click.option("--overwrite", is_flag=True, help="Replace a finished run of another configuration in OUT_DIR.")
@quiet_and_json
def merge_cmd(out_dir: Path, shard_dirs: tuple[Path, ...], data_dir: Path | None, device: str, no_cache: bool,
              overwrite: bool, quiet: bool, as_json: bool) -> None:
    """Make the run of SHARD_DIRS (the --out folders of `abduct eval ... --shard I/N`, all N of
    them) in OUT_DIR: results.json, predictions.jsonl, units.json and the pages,
    as one process would have written them. Nothing is written unless the shards are 0..N-1 of
    one run, each once."""
    from abduct._run.merge import merge_shards

    try:
        results = merge_shards(out_dir, shard_dirs, data_dir=data_dir, device=device, overwrite=overwrite,
                               quiet=quiet, use_cache=not no_cache)
    except KeyboardInterrupt:
        raise Interrupted("the merge did not finish; rerun the same command to merge (it starts again)") from None
    if as_json:
        emit_json(results)
        echo_unparsed(results)
        return
    click.echo(f"{results['task']} / {results['model']['spec']} ({results['shards']} shards):")
    echo_values(results["metrics"], "  ", results.get("metric_info"), results.get("intervals"))
    echo_tokens(results)
    echo_written(out_dir, results)
    echo_unparsed(results)  # last: what a reader of the run must not miss


class _Commands(click.Group):
    """Names the package to install for a first-party command that is missing (``abduct sherlock``
    with only abduct-core: ``pip install abduct-sherlock``; ``abduct demo``: abduct-demo) in one
    line, exit 2, instead of "No such command". The table: ``abduct._registry.providers``. A
    command that may come with a plugin written for another plugin API says that plugin's reason."""

    def invoke(self, ctx: click.Context) -> Any:
        """A command's Ctrl-C as ``Interrupted`` (click would make it Abort, after a blank line)."""
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            raise Interrupted() from None

    def resolve_command(self, ctx: click.Context, args: list[str]) -> tuple[str | None, click.Command | None, list[str]]:
        from abduct._registry.providers import provider

        name = args[0] if args else None
        missing = name is not None and name not in self.commands and not name.startswith("-")
        package = provider("command", name) if missing and name is not None else None
        refused = get_registry().refused(package) if missing else []
        if package is not None and refused:  # installed, but written for a plugin API this core does not support
            raise AbductError(f"command '{name}' comes with {package}, which is not loaded: {refused[0].error}")
        if package is not None:
            raise AbductError(f"command '{name}' comes with {package}, which is not installed: {install_command(package)}")
        try:
            return super().resolve_command(ctx, args)
        except click.UsageError:
            if not refused:  # it may be a command of a plugin that was not loaded: say which, and why
                raise
            raise AbductError(f"no such command '{name}'; not loaded: {refused[0].error}") from None


def build_cli(with_plugins: bool = True) -> click.Group:
    """The CLI with every healthy plugin's commands added (none, and no plugin imported, without
    ``with_plugins``)."""
    group = _Commands(
        name="abduct", commands=dict(cli.commands), params=list(cli.params),
        help=cli.help, context_settings=cli.context_settings,
    )
    if with_plugins:
        get_registry().call_each("register_commands", cli=group)
    return group


def _asks_version(argv: list[str] | None) -> bool:
    """``abduct --version`` (before any command): answered without importing a plugin, so that it
    works whatever a plugin does as it is imported."""
    args = sys.argv[1:] if argv is None else argv
    command_at = next((i for i, arg in enumerate(args) if not arg.startswith("-")), len(args))
    return "--version" in args[:command_at]


INTERRUPTED = 130  # 128 + SIGINT, what shells report for a command Ctrl-C stopped
TERMINATED = 143  # 128 + SIGTERM (kill, a batch system's time limit, torchrun ending its workers)
_terminated: list[int] = []  # the SIGTERM this command received, if any
_shown: set[str] = set()  # the warnings this command printed (main() starts each command with none)


def _one_line_warning(message: Warning | str, category: type[Warning], filename: str, lineno: int,
                      file: Any = None, line: str | None = None) -> None:
    """A warning as one line on stderr (``warning: ...``), once per command: Python's default
    prints the source line that raised it, which tells a user of the command line nothing, and
    shows a warning again after any ``catch_warnings`` (a library's, a second model's)."""
    text = f"warning: {message}"
    if text in _shown:
        return
    _shown.add(text)
    click.echo(text, err=True)


def main(argv: list[str] | None = None) -> int:
    """Entry point: user errors print one line and exit 2, never a traceback; Ctrl-C one line and
    exit 130 (SIGTERM: the same, exit 143); warnings one line each, each once."""
    _shown.clear()
    _terminated.clear()
    with warnings.catch_warnings(), _sigterm_as_interrupt():
        warnings.showwarning = _one_line_warning
        return _main(argv)


def _on_sigterm(signum: int, frame: Any) -> None:
    _terminated.append(signum)
    raise KeyboardInterrupt  # unwinds as Ctrl-C does: temporary files removed, a finished run kept whole


def _sigterm_default_in_a_forked_child() -> None:
    """A process forked while a command runs (a library's multiprocessing pool: bert-score's idf
    workers) is not the command: SIGTERM must end it, as ``Pool.terminate()`` expects. With the
    command's handler, a worker stuck on a lock copied at the fork never runs it, so it never
    ends and the pool's join waits for ever (seen once: a test session that hung)."""
    if signal.getsignal(signal.SIGTERM) is _on_sigterm:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


os.register_at_fork(after_in_child=_sigterm_default_in_a_forked_child)


@contextlib.contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """SIGTERM handled as SIGINT while a command runs (Python's default ends the process at once,
    with no message, leaving temporary files behind); only the main thread may set handlers."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _interrupted(hint: str = "") -> int:
    """Ctrl-C: one line (rank 0 alone under torchrun), exit 130; on a terminal, after the ``^C``
    echo. SIGTERM: "terminated", exit 143."""
    said = "terminated" if _terminated else "interrupted"
    if _is_main_process():
        if sys.stderr.isatty() and not _terminated:
            click.echo(err=True)
        click.echo(f"{said}: {hint}" if hint else said, err=True)
    return TERMINATED if _terminated else INTERRUPTED


def _main(argv: list[str] | None) -> int:
    try:
        group = build_cli(with_plugins=False) if _asks_version(argv) else build_cli()
        returned = group.main(args=argv, prog_name="abduct", standalone_mode=False)
    except AbductError as exc:
        click.echo(f"error: {exc}", err=True)
        return 2
    except Interrupted as exc:
        return _interrupted(str(exc))
    except KeyboardInterrupt:  # before any command ran (the plugins loading)
        return _interrupted()
    except click.exceptions.Abort as exc:
        if isinstance(exc.__cause__, KeyboardInterrupt):  # while click read the arguments
            return _interrupted()
        click.echo("aborted", err=True)
        return 1
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    except click.exceptions.Exit as exc:
        return int(exc.exit_code)
    except BrokenPipeError:
        return 0
    except OSError as exc:  # the file system refused (read-only, not a directory, disk full): the user's to fix
        click.echo(f"error: {describe_os_error(exc)}", err=True)
        return 2
    # Without standalone mode, click hands back a command's `ctx.exit(code)` as the return value.
    return returned if isinstance(returned, int) else 0


if __name__ == "__main__":
    sys.exit(main())
