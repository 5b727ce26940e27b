"""``abduct demo``: the whole workflow on a laptop CPU in a few minutes.

Synthesise a Sherlock corpus, fine-tune ``clip:tiny`` on it, then evaluate the random
baseline, the untrained model and the fine-tuned model on the three Sherlock tasks.

When abduct-t5 is installed, a second table follows: ``t5:tiny`` fine-tuned a few hundred
steps on the corpus's clue -> inference pairs, against random, on comparison (reading the clue
only) and on generation (the latter when abduct-metrics is installed). Without abduct-t5 the
demo prints exactly what it printed before.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import click

from abduct.cli import emit_json
from abduct.errors import AbductError

TASKS = ("sherlock-retrieval", "sherlock-localization", "sherlock-comparison")
# Sized for a 2-core CPU: the whole demo runs in a few minutes.
DEMO_IMAGES = 600  # 150 validation images: enough that the random baseline sits near its expectation
DEMO_STEPS = 500
DEMO_BATCH = 32
DEMO_LR = 5e-4
DEMO_WARMUP = 40
SHOWN = {
    "sherlock-retrieval": ("p_at_1", "im2txt", "txt2im"),
    "sherlock-localization": ("gt_accuracy", "auto_accuracy"),
    "sherlock-comparison": ("accuracy",),
}


# The T5 row (abduct-t5 installed): a few hundred Adafactor steps of t5:tiny, about a minute on 2 cores.
T5_STEPS = 300
T5_BATCH = 32
T5_TASKS = ("sherlock-comparison", "sherlock-generation")
T5_SHOWN = {"sherlock-comparison": ("accuracy",), "sherlock-generation": ("bleu4", "cider", "rouge_l", "meteor")}


def _say(message: str, quiet: bool) -> None:
    if not quiet:
        print(f"[demo] {message}", file=sys.stderr, flush=True)


def _numeric(metrics: dict[str, Any]) -> dict[str, float]:
    return {k: float(v) for k, v in metrics.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}


def evaluate_models(models: dict[str, str], data_dir: Path, out_dir: Path, *, seed: int, quiet: bool,
                    tasks: tuple[str, ...] = TASKS) -> dict[str, Any]:
    """``{model label: {task: metrics}}`` for every model and Sherlock task."""
    from abduct.evaluate import EvalConfig, run_evaluation

    table: dict[str, Any] = {}
    for label, spec in models.items():
        table[label] = {}
        for task in tasks:
            started = time.perf_counter()
            config = EvalConfig(task=task, model=spec, data_dir=data_dir, out_dir=out_dir / label / task,
                                seed=seed, quiet=True, use_cache=False)
            table[label][task] = _numeric(run_evaluation(config)["metrics"])
            _say(f"{label:<10} {task:<22} {time.perf_counter() - started:5.1f}s", quiet)
    return table


def format_table(table: dict[str, Any], shown: dict[str, tuple[str, ...]] = SHOWN) -> str:
    columns = [(task, metric) for task, names in shown.items() for metric in names]
    header = ["model"] + [f"{task.removeprefix('sherlock-')[:4]}.{metric}" for task, metric in columns]
    rows = [header]
    for label, results in table.items():
        rows.append([label] + [f"{results.get(task, {}).get(metric, float('nan')):.2f}" for task, metric in columns])
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = ["  ".join(cell.rjust(w) if i else cell.ljust(w) for i, (cell, w) in enumerate(zip(row, widths)))
             for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def sherlock_synthesizer() -> Callable[..., Path]:
    """Sherlock's synthetic-corpus generator; a one-line error when abduct-sherlock is absent."""
    try:  # imported by name: abduct-clip does not depend on abduct-sherlock
        module = importlib.import_module("abduct_sherlock.synth")
    except ImportError:
        raise AbductError("abduct demo uses Sherlock's synthetic corpus and tasks: pip install abduct-sherlock") from None
    return cast(Callable[..., Path], module.synthesize)


def run_demo(*, work_dir: Path | None, images: int | None, steps: int | None, seed: int, as_json: bool,
             quiet: bool) -> dict[str, Any]:
    from abduct_clip._train import BEST, TrainConfig, train_from_data_dir

    synthesize = sherlock_synthesizer()
    with tempfile.TemporaryDirectory(prefix="abduct-demo-") as scratch:
        work = Path(work_dir) if work_dir is not None else Path(scratch)
        started = time.perf_counter()
        _say(f"synthesising a Sherlock corpus in {work / 'data'}", quiet)
        data = synthesize(work / "data", images=images or DEMO_IMAGES, seed=seed)
        _say("fine-tuning clip:tiny on the CPU", quiet)
        train_started = time.perf_counter()
        config = TrainConfig(
            data_dir=data, out_dir=work / "train", model="clip:tiny", steps=steps or DEMO_STEPS,
            batch_size=DEMO_BATCH, lr=DEMO_LR, warmup=DEMO_WARMUP, checkpoint_every=max(1, (steps or DEMO_STEPS) // 4),
            log_every=50, seed=seed, quiet=quiet,
        )
        train_from_data_dir(config)
        train_seconds = time.perf_counter() - train_started
        models = {"random": "random", "zero_shot": "clip:tiny", "fine_tuned": f"clip:{work / 'train' / BEST}"}
        table = evaluate_models(models, data, work / "eval", seed=seed, quiet=quiet)
        t5_table = t5_rows(data, work, steps=steps, seed=seed, quiet=quiet) if t5_installed() else None
        _say(f"done in {time.perf_counter() - started:.0f}s (training {train_seconds:.0f}s)", quiet)
    if t5_table is not None:
        table["t5"] = t5_table
    if as_json:
        emit_json(table)
    else:
        click.echo(format_table({k: v for k, v in table.items() if k != "t5"}))
        click.echo("zero_shot = clip:tiny before fine-tuning (random weights); fine_tuned = after.")
        if t5_table is not None:
            click.echo("")
            click.echo(format_table(t5_table, {t: T5_SHOWN[t] for t in t5_table["t5_fine_tuned"]}))
            click.echo("t5_fine_tuned = t5:tiny after fine-tuning on clue -> inference, reading the clue only; "
                       "generation: pycocoevalcap values (0-1; CIDEr-D 0-10), random picks training inferences.")
    return table


def t5_installed() -> bool:
    return importlib.util.find_spec("abduct_t5") is not None


def t5_rows(data: Path, work: Path, *, steps: int | None, seed: int, quiet: bool) -> dict[str, Any]:
    """Fine-tune ``t5:tiny`` on the corpus's clue -> inference pairs, then random and it on
    comparison and (with abduct-metrics) generation."""
    train = importlib.import_module("abduct_t5._train")  # by name: abduct-clip does not depend on abduct-t5
    t5_steps = T5_STEPS if steps is None else min(steps, T5_STEPS)
    _say(f"fine-tuning t5:tiny on the clues ({t5_steps} steps)", quiet)
    config = train.TrainConfig(data_dir=data, out_dir=work / "train-t5", model="t5:tiny", steps=t5_steps,
                               batch_size=T5_BATCH, eval_every=max(1, t5_steps // 3), log_every=50, seed=seed,
                               device="cpu", quiet=True)
    train.train_from_data_dir(config)
    tasks = T5_TASKS if importlib.util.find_spec("abduct_metrics") is not None else T5_TASKS[:1]
    if len(tasks) < len(T5_TASKS):
        _say("abduct-metrics is not installed: the T5 row shows comparison only", quiet)
    models = {"random": "random", "t5_fine_tuned": f"t5:{work / 'train-t5' / train.BEST}"}
    return evaluate_models(models, data, work / "eval-t5", seed=seed, quiet=quiet, tasks=tasks)
