"""Independent shards (`abduct eval ... --shard I/N`, then `abduct merge`): what merging costs
against the one-process run, and that shards split the work without doing any of it twice.

    python benchmarks/shard_merge.py [--units 20000] [--shards 4] [--repeats 3] [--json]

A generated multiple-choice task (defined here: ``--units`` questions of four texts each, one
question per stored unit) is evaluated with the ``random`` model, in this process, caches off:

1. once whole, into one folder: its wall time is the reference;
2. as ``--shards`` shards one after the other (as a loop over machines would, on one), each
   into its own folder, then merged: the merge's wall time as a share of the whole run's
   (the goal: at most 5%), and the shards' summed time against the whole run's. The merge
   does what the whole run does after the model's work (load the data, plan, ``finish``,
   write results.json with its intervals, predictions, units, the reports and the samples
   page), plus reading the shards: that part, the only one sharding adds, is also given
   alone, as a share of the whole run. Steps 1 and 2 run ``--repeats`` times, interleaved,
   and the medians are reported (the machine's load moves single timings a lot);
3. as 2 shards: the elements the two stores hold, counted, against the units of one run
   (no unit evaluated twice or left out).

The merged run's metrics and intervals must equal the whole run's and its predictions be the
same set, or the script fails. The random model does almost no work, so the whole run is
as cheap as a run gets: the share is an upper bound of what a real model's run would see.
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
from abduct import Registration, Settings, Spec, UnitScores, VisualInput, hookimpl
from abduct._registry.registry import build_registry
from abduct._run.evaluate import EvalConfig, run_evaluation
from abduct._run.shards import Shard, read_records
from abduct.contract.stages import Choice, Choose, Records, RunInfo, Stage
from abduct.contract.task import Evaluation
from abduct.kit.shapes import accuracy


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
    optional_inputs = frozenset({"context"})  # the random model reads none

    def plan(self, examples: Sequence[dict[str, Any]], run: RunInfo) -> list[Stage]:
        items = [Choice(q["id"], VisualInput(context=q["question"]), tuple(q["choices"]), q["label"])
                 for q in examples]
        return [Stage("questions", Choose(items, per_unit=1))]

    def finish(self, examples: Sequence[dict[str, Any]], records: Mapping[str, Records], run: RunInfo) -> Evaluation:
        answers = records["questions"]
        return Evaluation({"accuracy": accuracy(answers), "n": len(answers)}, answers,
                          units={"accuracy": UnitScores.means("question", {r["id"]: r["correct"] for r in answers})})


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--units", type=int, default=20_000)
    parser.add_argument("--shards", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=3, help="whole run, shards and merge, interleaved; medians")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    sys.modules.setdefault("shard_merge", sys.modules[__name__])  # the registrations' factories
    registry = build_registry(extra_plugins=[("bench", BenchPlugin())])
    outputs, reading = watch(merge, "results_of", "write_outputs"), watch(merge, "_open", "_stored", "merged_stage")
    rounds: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        data = write_data(root / "data", args.units)

        def evaluate(out: Path, shard: Shard | None = None) -> float:
            config = EvalConfig("bench-choice", "random", data, out, quiet=True, use_cache=False, shard=shard)
            return float(timed(run_evaluation, config, registry)[0])

        warm = write_data(root / "warm-data", 50)  # imports (plots, intervals) paid before any timing
        run_evaluation(EvalConfig("bench-choice", "random", warm, root / "warm", quiet=True, use_cache=False), registry)
        for repeat in range(args.repeats):
            here = root / f"round-{repeat}"
            whole = evaluate(here / "whole")
            shard_seconds = [evaluate(here / f"shard-{i}", Shard(i, args.shards)) for i in range(args.shards)]
            outputs.clear(), reading.clear()
            merge_seconds, merged = timed(merge.merge_shards, here / "merged",
                                          [here / f"shard-{i}" for i in range(args.shards)], quiet=True,
                                          use_cache=False, registry=registry)
            reference = json.loads((here / "whole" / "results.json").read_text())
            if not (merged["metrics"] == reference["metrics"] and merged["intervals"] == reference["intervals"]
                    and predictions(here / "merged") == predictions(here / "whole")):
                raise SystemExit("the merged run differs from the whole run")
            rounds.append({"whole_seconds": whole, "shard_seconds": shard_seconds, "merge_seconds": merge_seconds,
                           "merge_outputs_seconds": sum(outputs), "merge_reading_seconds": sum(reading),
                           "merge_share": merge_seconds / whole, "merge_reading_share": sum(reading) / whole,
                           "shards_over_whole": sum(shard_seconds) / whole})

        for i in range(2):
            evaluate(root / f"half-{i}", Shard(i, 2))
        stored = [key for i in range(2) for elements in read_records(root / f"half-{i}").values()
                  for key, _ in elements]

    def median(key: str) -> float:
        return float(statistics.median(r[key] for r in rounds))

    report: dict[str, Any] = {
        "units": args.units,
        "shards": args.shards,
        "repeats": args.repeats,
        **{key: median(key) for key in ("whole_seconds", "merge_seconds", "merge_outputs_seconds",
                                        "merge_reading_seconds", "merge_share", "merge_reading_share",
                                        "shards_over_whole")},
        "rounds": rounds,
        "merged_equals_whole": True,
        "two_shards": {"stored": len(stored), "distinct": len(set(stored)), "units": args.units,
                       "each_once": len(stored) == len(set(stored)) == args.units},
    }
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(f"{args.units} units, random model, {args.shards} shards; medians of {args.repeats} rounds "
          f"(whole run, shards, merge, interleaved)")
    print(f"whole run {report['whole_seconds']:.2f} s; shards together {report['shards_over_whole']:.2f} x the whole run")
    print(f"merge {report['merge_seconds']:.2f} s = {100 * report['merge_share']:.1f}% of the whole run (goal: at most "
          "5%); metrics, intervals and predictions equal the whole run's")
    print(f"  reading the shards' records and putting them in the plan's order: {report['merge_reading_seconds']:.2f} s "
          f"= {100 * report['merge_reading_share']:.1f}% of the whole run")
    print(f"  what the whole run does too: writing the outputs {report['merge_outputs_seconds']:.2f} s, the rest "
          "(loading the data, the plan, finish)")
    for n, r in enumerate(rounds, 1):
        print(f"  round {n}: whole {r['whole_seconds']:.2f} s, shards {', '.join(f'{x:.2f}' for x in r['shard_seconds'])}"
              f" s, merge {r['merge_seconds']:.2f} s ({100 * r['merge_share']:.1f}%; reading "
              f"{100 * r['merge_reading_share']:.1f}%)")
    two = report["two_shards"]
    print(f"2 shards stored {two['stored']} units ({two['distinct']} distinct) of {two['units']}: "
          f"each once: {two['each_once']}")


if __name__ == "__main__":
    main()
