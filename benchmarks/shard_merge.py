"""Independent shards (`abduct eval ... --shard I/N`, then `abduct merge`): what merging costs
against the one-process run, and that shards split the work without doing any of it twice.

    python benchmarks/shard_merge.py [--units 20000] [--shards 4] [--repeats 3] [--model random]
                                     [--real-model t5:tiny] [--real-units N] [--real-repeats 1] [--json]

A generated multiple-choice task (defined here: ``--units`` questions, each a text context and
four candidate texts, one question per stored unit) is evaluated through the ordinary runner,
in this process, caches off, with two models by default:

- ``--model`` (default ``random``): no model work at all, so the whole run is as cheap as a
  run gets and the merge's share is an upper bound: it measures the outputs' writing against
  the runner's per-unit overhead, not what a real run sees;
- ``--real-model`` (default ``t5:tiny``; ``none`` leaves it out): the cheapest real network
  the project runs offline on a CPU with no download. abduct-t5's ``t5:tiny`` is a randomly
  initialised T5 (d_model 64, 2 encoder and 2 decoder layers, a fixed 330-token vocabulary:
  0.19 M parameters; it runs on one CPU thread) that scores each candidate by
  its mean token log-likelihood given ``clue: {context}``, so it reads the task as it is (no
  image needed). Its cost per unit (four candidates) is reported from the run itself: the
  network's time (results.json's ``timings.model_seconds``) and the whole run's wall time, each
  divided by the units. On 2 busy CPU cores it cost about 7 ms per unit (benchmarks/README.md),
  so 20,000 units take 2 to 3 min per run, about 5 per round (whole run, then the shards);
  ``--real-units`` (default ``--units``) and ``--real-repeats`` (default 1) size it.

For each model:

1. the task is evaluated once whole, into one folder: its wall time is the reference;
2. as ``--shards`` shards one after the other (as a loop over machines would, on one), each
   into its own folder, then merged: the merge's wall time as a share of the whole run's
   (the goal: at most 5%), and the shards' summed time against the whole run's. The merge
   does what the whole run does after the model's work (load the data, plan, ``finish``,
   write results.json with its intervals, predictions, units, the reports and the samples
   page), plus reading the shards: that part, the only one sharding adds, is also given
   alone, as a share of the whole run. Steps 1 and 2 run ``--repeats`` (``--real-repeats``)
   times, interleaved, and the medians are reported (the machine's load moves single timings
   a lot). The merged run's metrics and intervals must equal the whole run's and its
   predictions be the same set, or the script fails;
3. (``--model`` only: it checks the unit store, which no model changes) as 2 shards: the
   elements the two stores hold, counted, against the units of one run (no unit evaluated
   twice or left out).

``--json`` prints the figures: the ``--model`` run's at the top level (as before this script
had a real model), the real model's under ``real`` (``null`` with ``--real-model none``).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import abduct._run.merge as merge
from abduct import (
    Choice,
    Choose,
    Evaluation,
    Records,
    Registration,
    RunInfo,
    Settings,
    Spec,
    Stage,
    UnitScores,
    VisualInput,
    hookimpl,
)
from abduct._run.shards import Shard, read_records  # internal: the shard key and the stored records
from abduct.host import EvalConfig, build_registry, run_evaluation
from abduct.kit import accuracy


class Questions:
    """``questions.json``: the generated questions."""

    def load(self, data_dir: Path, split: str) -> list[dict[str, Any]]:
        return list(json.loads((data_dir / "questions.json").read_text()))

    def files(self, data_dir: Path, split: str) -> list[Path]:
        return [data_dir / "questions.json"]

    def check(self, data_dir: Path) -> list[str]:
        return [] if (data_dir / "questions.json").is_file() else [f"{data_dir / 'questions.json'}: not found"]


class Choose4:
    """Four texts per question, one question per unit (as a task of costly items stores them)."""

    default_split = "val"
    dataset = "bench-questions"
    optional_inputs = frozenset({"context"})  # random reads none; t5 reads the context

    def plan(self, examples: Sequence[dict[str, Any]], run: RunInfo) -> list[Stage]:
        items = [Choice(q["id"], VisualInput(context=q["question"]), tuple(q["choices"]), q["label"])
                 for q in examples]
        return [Stage("questions", Choose(items, per_unit=1))]

    def finish(self, examples: Sequence[dict[str, Any]], records: Mapping[str, Records], run: RunInfo) -> Evaluation:
        answers = records["questions"]
        return Evaluation({"accuracy": accuracy(answers), "n": len(answers)}, answers,
                          units={"accuracy": UnitScores.means("question", {r.id: r.correct for r in answers})})


def make_dataset(spec: Spec, settings: Settings) -> Questions:
    return Questions()


def make_task(spec: Spec, settings: Settings) -> Choose4:
    return Choose4()


class BenchPlugin:
    @hookimpl
    def register_datasets(self) -> Iterator[Registration]:
        yield Registration("bench-questions", "Generated questions", "shard_merge:make_dataset")

    @hookimpl
    def register_tasks(self) -> Iterator[Registration]:
        yield Registration("bench-choice", "Generated multiple choice", "shard_merge:make_task")


def write_data(directory: Path, units: int) -> Path:
    directory.mkdir(parents=True)
    questions = [{"id": f"q{i:06d}", "question": f"which one, {i}?", "choices": [f"text {i} {k}" for k in range(4)],
                  "label": i % 4} for i in range(units)]
    (directory / "questions.json").write_text(json.dumps(questions))
    return directory


def timed(fn: Any, *args: Any, **kwargs: Any) -> tuple[float, Any]:
    started = time.perf_counter()
    value = fn(*args, **kwargs)
    return time.perf_counter() - started, value


def watch(module: Any, *names: str) -> list[float]:
    """Seconds spent in ``module``'s functions ``names`` from now on, one entry per call."""
    spent: list[float] = []
    def watched(fn: Any) -> Any:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            seconds, value = timed(fn, *args, **kwargs)
            spent.append(seconds)
            return value

        return wrapper

    for name in names:
        setattr(module, name, watched(getattr(module, name)))
    return spent


def predictions(out: Path) -> set[str]:
    return set((out / "predictions.jsonl").read_text().splitlines())


def model_seconds(out: Path) -> float:
    """The seconds the run spent inside the model (the runner's own timer)."""
    return float(json.loads((out / "results.json").read_text())["timings"]["model_seconds"])


def measure(model: str, units: int, shards: int, repeats: int, root: Path, registry: Any,
            outputs: list[float], reading: list[float], *, store_check: bool) -> dict[str, Any]:
    """Steps 1 to 3 of the docstring for ``model`` on ``units`` generated questions, in ``root``."""
    data = write_data(root / "data", units)

    def evaluate(out: Path, shard: Shard | None = None) -> float:
        config = EvalConfig("bench-choice", model, data, out, quiet=True, use_cache=False, shard=shard)
        return float(timed(run_evaluation, config, registry)[0])

    warm = write_data(root / "warm-data", 50)  # imports (the model's, plots, intervals) paid before any timing
    run_evaluation(EvalConfig("bench-choice", model, warm, root / "warm", quiet=True, use_cache=False), registry)
    rounds: list[dict[str, Any]] = []
    for repeat in range(repeats):
        here = root / f"round-{repeat}"
        whole = evaluate(here / "whole")
        shard_seconds = [evaluate(here / f"shard-{i}", Shard(i, shards)) for i in range(shards)]
        outputs.clear()
        reading.clear()
        merge_seconds, merged = timed(merge.merge_shards, here / "merged", [here / f"shard-{i}" for i in range(shards)],
                                      quiet=True, use_cache=False, registry=registry)
        reference = json.loads((here / "whole" / "results.json").read_text())
        if not (merged["metrics"] == reference["metrics"] and merged["intervals"] == reference["intervals"]
                and predictions(here / "merged") == predictions(here / "whole")):
            raise SystemExit(f"{model}: the merged run differs from the whole run")
        inside = model_seconds(here / "whole")
        rounds.append({"whole_seconds": whole, "shard_seconds": shard_seconds, "merge_seconds": merge_seconds,
                       "merge_outputs_seconds": sum(outputs), "merge_reading_seconds": sum(reading),
                       "merge_share": merge_seconds / whole, "merge_reading_share": sum(reading) / whole,
                       "shards_over_whole": sum(shard_seconds) / whole, "model_seconds": inside,
                       "model_ms_per_unit": 1000 * inside / units, "whole_ms_per_unit": 1000 * whole / units,
                       "accuracy": reference["metrics"]["accuracy"]})

    def median(key: str) -> float:
        return float(statistics.median(r[key] for r in rounds))

    report: dict[str, Any] = {
        "model": model,
        "units": units,
        "shards": shards,
        "repeats": repeats,
        **{key: median(key) for key in ("whole_seconds", "merge_seconds", "merge_outputs_seconds",
                                        "merge_reading_seconds", "merge_share", "merge_reading_share",
                                        "shards_over_whole", "model_seconds", "model_ms_per_unit",
                                        "whole_ms_per_unit")},
        "rounds": rounds,
        "merged_equals_whole": True,
    }
    if store_check:
        for i in range(2):
            evaluate(root / f"half-{i}", Shard(i, 2))
        stored = [key for i in range(2) for elements in read_records(root / f"half-{i}").values()
                  for key, _ in elements]
        report["two_shards"] = {"stored": len(stored), "distinct": len(set(stored)), "units": units,
                                "each_once": len(stored) == len(set(stored)) == units}
    return report


def describe(report: Mapping[str, Any]) -> list[str]:
    """The text lines of one model's figures."""
    lines = [
        f"{report['units']} units, model {report['model']}, {report['shards']} shards; medians of {report['repeats']} "
        "rounds (whole run, shards, merge, interleaved)",
        f"whole run {report['whole_seconds']:.2f} s = {report['whole_ms_per_unit']:.3f} ms per unit, of which the "
        f"model {report['model_seconds']:.2f} s = {report['model_ms_per_unit']:.3f} ms per unit; shards together "
        f"{report['shards_over_whole']:.2f} x the whole run",
        f"merge {report['merge_seconds']:.2f} s = {100 * report['merge_share']:.1f}% of the whole run (goal: at most "
        "5%); metrics, intervals and predictions equal the whole run's",
        f"  reading the shards' records and putting them in the plan's order: {report['merge_reading_seconds']:.3f} s "
        f"= {100 * report['merge_reading_share']:.2f}% of the whole run",
        f"  what the whole run does too: writing the outputs {report['merge_outputs_seconds']:.2f} s, the rest "
        "(loading the data, the plan, finish)",
    ]
    for n, r in enumerate(report["rounds"], 1):
        lines.append(f"  round {n}: whole {r['whole_seconds']:.2f} s, shards "
                     f"{', '.join(f'{x:.2f}' for x in r['shard_seconds'])} s, merge {r['merge_seconds']:.2f} s "
                     f"({100 * r['merge_share']:.1f}%; reading {100 * r['merge_reading_share']:.2f}%); accuracy "
                     f"{r['accuracy']:.2f}")
    two = report.get("two_shards")
    if two is not None:
        lines.append(f"2 shards stored {two['stored']} units ({two['distinct']} distinct) of {two['units']}: "
                     f"each once: {two['each_once']}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--units", type=int, default=20_000)
    parser.add_argument("--shards", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=3, help="whole run, shards and merge, interleaved; medians")
    parser.add_argument("--model", default="random", metavar="SPEC",
                        help="the model of the first figure (default: random, the upper bound of the merge's share)")
    parser.add_argument("--real-model", default="t5:tiny", metavar="SPEC",
                        help="a real network measured the same way after it (default: t5:tiny; 'none': leave out)")
    parser.add_argument("--real-units", type=int, default=None, help="units for the real model (default: --units)")
    parser.add_argument("--real-repeats", type=int, default=1, help="rounds for the real model (default: 1)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    real_model = None if args.real_model.strip().lower() in ("", "none") else args.real_model
    sys.modules.setdefault("shard_merge", sys.modules[__name__])  # the registrations' factories
    registry = build_registry(extra_plugins=[("bench", BenchPlugin())])
    outputs, reading = watch(merge, "results_of", "write_outputs"), watch(merge, "_open", "_stored", "merged_stage")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        report = measure(args.model, args.units, args.shards, args.repeats, root / "first", registry, outputs,
                         reading, store_check=True)
        real = None if real_model is None else measure(
            real_model, args.real_units or args.units, args.shards, args.real_repeats, root / "real", registry,
            outputs, reading, store_check=False)
    if args.json:
        print(json.dumps({**report, "real": real}, indent=2))
        return
    print("\n".join(describe(report)))
    if real is not None:
        print("\n".join(describe(real)))
        print(f"merge share: {100 * report['merge_share']:.1f}% with {report['model']} "
              f"({report['model_ms_per_unit']:.3f} ms of model per unit, {report['units']} units), "
              f"{100 * real['merge_share']:.1f}% with {real['model']} ({real['model_ms_per_unit']:.3f} ms per unit, "
              f"{real['units']} units)")


if __name__ == "__main__":
    main()
