"""CLI options that several commands share, declared once."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from abduct.contract.errors import AbductError
from abduct.contract.spec import Settings

F = TypeVar("F", bound=Callable[..., Any])
# Every seed numpy, torch and random all accept: -1 or 2**80 would fail deep in numpy, a traceback.
SEED = click.IntRange(0, 2**32 - 1)


class _ResampleCount(click.IntRange):
    """``--ci-resamples``: bounded, as 1e23 would run for ever; ``default`` is what a run's
    intervals and a comparison's paired tests draw when not told."""

    default = 1000


RESAMPLE_COUNT = _ResampleCount(0, 100_000)


class FiniteFloat(click.FloatRange):
    """A ``click.FloatRange`` that also refuses nan and ±inf (a range lets nan through, and
    ``--lr nan`` trains a network of NaN without a word)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return number


POSITIVE = FiniteFloat(min=0, min_open=True)  # learning rates, epochs, rates, time limits
NON_NEGATIVE = FiniteFloat(min=0)  # weight decay, margins


def settings_options(
    *, device: str = "cpu", batch_size: int = 64, batch_help: str = "Inputs per model call."
) -> Callable[[F], F]:
    """``--seed``, ``--batch-size`` and ``--device``; read them back with ``settings_from``."""

    def decorate(command: F) -> F:
        command = click.option("--seed", type=SEED, default=0, show_default=True, help="Random seed.")(command)
        command = click.option("--batch-size", type=click.IntRange(min=1), default=batch_size, show_default=True,
                               help=batch_help)(command)
        command = click.option("--device", default=device, show_default=True, callback=_check_device,
                               help="cpu, cuda, cuda:N, or auto (cuda when available).")(command)
        return command

    return decorate


DEVICE_FORM = re.compile(r"auto|cpu|mps|(cuda|xpu)(:\d+)?")


def _check_device(ctx: click.Context, param: click.Parameter, value: str) -> str:
    """Refuse a malformed device before anything loads; whether a GPU is there is for the
    torch models to check (models without torch run on the CPU whatever --device says)."""
    if not DEVICE_FORM.fullmatch(value):
        raise click.BadParameter(f"unknown device '{value}' (expected cpu, cuda, cuda:N or auto)")
    return value


def settings_from(options: dict[str, Any]) -> Settings:
    """Pop the shared options out of a command's keyword arguments."""
    return Settings(device=options.pop("device"), batch_size=options.pop("batch_size"), seed=options.pop("seed"))


def option_pairs(command: F) -> F:
    """``-o key=value`` (repeatable): the same as ``,key=value`` after the name."""
    return click.option("--option", "-o", "option_pairs", multiple=True, metavar="KEY=VALUE",
                        help="An option of the component, repeatable; same as ',key=value' after its name.")(command)


def quiet_and_json(command: F) -> F:
    command = click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")(command)
    return click.option("--quiet", is_flag=True, help="No progress bars.")(command)


def emit_json(obj: Any) -> None:
    click.echo(json.dumps(obj, indent=2, allow_nan=False))


def report_problems(ctx: click.Context, problems: list[str], data_dir: Path, as_json: bool) -> None:
    """What a dataset's ``check`` command prints: each problem (or a JSON list), and exit 1
    when there are any (the check ran and found problems; 2 stays for unusable input)."""
    if as_json:
        emit_json(problems)
    else:
        for problem in problems:
            click.echo(problem)
    if problems:
        click.echo(f"{len(problems)} problem(s) found in {data_dir}", err=True)
        ctx.exit(1)
    if not as_json:
        click.echo(f"{data_dir}: no problems found")


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
