"""The core tests' plugin: a multiple-choice task, a generation task and a judged generation
task over generated images, a slow random model (to kill runs in the middle), a matrix-only
scorer, a text-only scorer, an echoing generator that counts its calls and a judge that
compares texts literally."""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from abduct import GenerationRequest, Registration, Settings, Spec, TextPool, UnitScores, VisualInput, hookimpl
from abduct._builtins.baselines import RandomModel
from abduct._demo import DemoContext, DemoTable
from abduct._run.runner import Run
from abduct.contract.errors import DataError
from abduct.contract.metric_info import COUNT, TEXT_METRICS, percent
from abduct.contract.protocols import Decoding
from abduct.contract.task import Evaluation, JudgeItem
from abduct.kit.io import read_json
from abduct.kit.shapes import Choice, GenerationItem, accuracy, generate, multiple_choice, score_generations
from abduct.testing import make_images


def write_toy_data(directory: Path, items: int = 12) -> Path:
    paths = make_images(directory / "images", count=items)
    records = [
        {"id": f"q{i:03d}", "image": f"images/{p.name}", "question": f"which one, {i}?",
         "choices": [f"choice {i} {k}" for k in range(4)], "label": i % 4, "caption": f"image number {i % 3}"}
        for i, p in enumerate(paths)
    ]
    (directory / "toy.json").write_text(json.dumps(records))
    return directory


def kill_once_a_unit_is_stored(target: Callable[..., None], args: tuple[str, str], out: Path) -> None:
    """Run ``target(*args)`` in a child process and SIGKILL it as soon as ``out`` holds a
    stored unit: a run killed in the middle, as a crash or an out-of-memory kill would."""
    child = multiprocessing.get_context("fork").Process(target=target, args=args)
    child.start()
    deadline = time.monotonic() + 30
    while not list((out / ".partial").glob("shard-*.jsonl")) and time.monotonic() < deadline:
        time.sleep(0.05)
    os.kill(child.pid, signal.SIGKILL)  # type: ignore[arg-type]
    child.join()
    assert child.exitcode == -signal.SIGKILL


def _items(run: Run) -> list[dict[str, Any]]:
    return list(run.apply_limit(read_json(run.data_dir / "toy.json"), "questions"))


class ToyChoice:
    """Four candidates per image, the question as context; either may go unread (a text-only
    model, a chance model)."""

    default_split = "val"
    optional_inputs = frozenset({"image", "context"})
    metric_info = {"accuracy": percent(chance=25.0), "n": COUNT}

    def evaluate(self, run: Run) -> Evaluation:
        items = [Choice(it["id"], VisualInput(str(run.data_dir / it["image"]), context=it["question"]),
                        tuple(it["choices"]), it["label"]) for it in _items(run)]
        records = multiple_choice(run, "questions", items, per_unit=1)
        return Evaluation({"accuracy": accuracy(records), "n": len(records)}, records,
                          data_files=[run.data_dir / "toy.json"],
                          units={"accuracy": UnitScores.means("question", {r["id"]: r["correct"] for r in records})})

    def score_files(self, predictions: Path, answer_key: Path, instance_ids: Path | None = None) -> dict[str, float]:
        preds, key = read_json(predictions), read_json(answer_key)
        for qid in key:
            if qid not in preds:
                raise DataError("missing prediction", file=predictions, record=qid)
        return {"accuracy": 100.0 * float(np.mean([preds[q] == key[q] for q in key]))}


class ToyDescribe:
    """Generate each image's caption; exact match against it. The pool: every caption."""

    default_split = "val"
    metric_info = {"exact-match": TEXT_METRICS["exact_match"], "n": COUNT}

    def evaluate(self, run: Run) -> Evaluation:
        raw = _items(run)
        items = [GenerationItem(it["id"], GenerationRequest(VisualInput(str(run.data_dir / it["image"])), "Describe."),
                                (it["caption"],)) for it in raw]
        pool = TextPool.of([it["caption"] for it in read_json(run.data_dir / "toy.json")])
        records = generate(run, "describe", items, pool, per_unit=2)
        metrics = score_generations(run, records, {"exact-match": {}})
        return Evaluation({**metrics, "n": len(records)}, records, data_files=[run.data_dir / "toy.json"])

    def score_files(self, predictions: Path, answer_key: Path, instance_ids: Path | None = None) -> dict[str, float]:
        raise DataError("toy-describe has no official format", file=predictions)


JUDGE_TEMPLATE = "Item: {question}\nCandidate: {candidate}\nReferences:\n{references}\nThe same? Answer yes or no."


class ToyJudged:
    """Pick a caption from the pool, then ask the judge whether it is the image's caption."""

    default_split = "val"
    metric_info = {"judged_accuracy": percent(), "n": COUNT}

    def evaluate(self, run: Run) -> Evaluation:
        raw = _items(run)
        items = [GenerationItem(it["id"], GenerationRequest(VisualInput(str(run.data_dir / it["image"])), "Describe."),
                                (it["caption"],)) for it in raw]
        pool = TextPool.of([it["caption"] for it in read_json(run.data_dir / "toy.json")])
        records = generate(run, "describe", items, pool, per_unit=4)
        questions = {it["id"]: it["question"] for it in raw}
        verdicts = run.require_judge().judge(
            [JudgeItem(r["id"], r["prediction"], tuple(r["references"]), question=questions[r["id"]]) for r in records],
            JUDGE_TEMPLATE, stage="judge", per_unit=2)
        for record, verdict in zip(records, verdicts):
            record["judged"] = verdict.equivalent
        judged = [v.equivalent for v in verdicts if v.equivalent is not None]
        metrics = {"judged_accuracy": 100.0 * float(np.mean(judged)) if judged else 0.0, "n": len(records)}
        return Evaluation(metrics, records, data_files=[run.data_dir / "toy.json"])

    def score_files(self, predictions: Path, answer_key: Path, instance_ids: Path | None = None) -> dict[str, float]:
        raise DataError("toy-judged has no official format", file=predictions)


class LiteralJudge:
    """Says "Yes." when the prompt's candidate is one of its references, "No" otherwise, and
    an unparseable "Perhaps" for candidates ending in 0; logs each prompt to ``log``."""

    accepts = frozenset({"image"})
    fingerprint = "literal-judge-v1"
    calls = 0

    def __init__(self, delay: float, log: str) -> None:
        self.delay, self.log = delay, log

    def generate(self, requests: Sequence[GenerationRequest], decoding: Decoding, pool: TextPool | None) -> list[str]:
        LiteralJudge.calls += 1
        time.sleep(self.delay)
        answers = []
        for request in requests:
            lines = (request.prompt or "").splitlines()
            candidate = next(line for line in lines if line.startswith("Candidate: ")).removeprefix("Candidate: ")
            references = [line.partition(". ")[2] for line in lines if line[:1].isdigit()]
            answers.append("Perhaps" if candidate.endswith("0") else "Yes." if candidate in references else "No")
            if self.log:
                with open(self.log, "a", encoding="utf-8") as handle:
                    handle.write(lines[0] + "\n")
        return answers


class SlowRandom(RandomModel):
    """Random scores and picks, slowly: gives a test time to kill a run in the middle."""

    def __init__(self, seed: int, delay: float) -> None:
        super().__init__(seed)
        self.delay = delay

    def score_matrix(self, visuals: Sequence[VisualInput], texts: Sequence[str]) -> np.ndarray:
        time.sleep(self.delay)
        return super().score_matrix(visuals, texts)

    def score(self, visuals: Sequence[VisualInput], texts: Sequence[str]) -> np.ndarray:
        time.sleep(self.delay)
        return super().score(visuals, texts)

    def generate(self, requests: Sequence[GenerationRequest], decoding: Decoding, pool: TextPool | None) -> list[str]:
        time.sleep(self.delay)
        return super().generate(requests, decoding, pool)


class MatrixOnly:
    """A scorer offering only ``score_matrix`` (the engine derives pairs from it)."""

    accepts = frozenset({"image", "region"})
    fingerprint = "matrix-only"

    def __init__(self) -> None:
        self.calls = 0

    def score_matrix(self, visuals: Sequence[VisualInput], texts: Sequence[str]) -> np.ndarray:
        self.calls += 1
        return RandomModel(7).score_matrix(visuals, texts)


class TextOnly:
    """Scores a text by its word overlap with the input's context: sees no image at all."""

    accepts = frozenset({"context"})
    needs = frozenset({"context"})

    def __init__(self) -> None:
        self.seen: list[VisualInput] = []

    def score(self, visuals: Sequence[VisualInput], texts: Sequence[str]) -> np.ndarray:
        self.seen += list(visuals)
        return np.array([len(set(str(v.context).split()) & set(t.split())) for v, t in zip(visuals, texts)], float)


class Echo:
    """Generates ``prompt + context`` and counts its calls (class-wide, across instances)."""

    accepts = frozenset({"image", "context"})
    fingerprint = "echo-v1"
    calls = 0

    def generate(self, requests: Sequence[GenerationRequest], decoding: Decoding, pool: TextPool | None) -> list[str]:
        Echo.calls += 1
        return [f"{r.prompt or ''} {r.visual.context or ''}".strip()[: decoding.max_new_tokens] for r in requests]


def make_choice(spec: Spec, settings: Settings) -> ToyChoice:
    return ToyChoice()


def make_describe(spec: Spec, settings: Settings) -> ToyDescribe:
    return ToyDescribe()


def make_judged(spec: Spec, settings: Settings) -> ToyJudged:
    return ToyJudged()


def make_literal_judge(spec: Spec, settings: Settings, *, delay: float = 0.0, log: str = "") -> LiteralJudge:
    return LiteralJudge(delay, log)


def make_slow(spec: Spec, settings: Settings) -> SlowRandom:
    return SlowRandom(settings.seed, float(spec.argument or 0.05))


def make_matrix_only(spec: Spec, settings: Settings) -> MatrixOnly:
    return MatrixOnly()


def make_text_only(spec: Spec, settings: Settings) -> TextOnly:
    return TextOnly()


def make_echo(spec: Spec, settings: Settings) -> Echo:
    return Echo()


def toy_demo(ctx: DemoContext) -> DemoTable:
    """A demo section: the toy data, random against the text-only model, on toy-choice."""
    data = ctx.shared("toy-data", lambda: write_toy_data(ctx.dir("toy-data")))
    rows = ctx.evaluate({"random": "random", "text_only": "text-only"}, ["toy-choice"], data, section="toy")
    return DemoTable("Toy", [("toy-choice", "accuracy"), ("toy-choice", "n")], rows, note="a toy section")


def second_demo(ctx: DemoContext) -> DemoTable:
    data = ctx.shared("toy-data", lambda: write_toy_data(ctx.dir("other-data")))  # made by toy_demo already
    return DemoTable("Second", [("toy-choice", "n")], {"files": {"toy-choice": {"n": len(list(data.iterdir()))}}})


class ToyPlugin:
    @hookimpl
    def register_demos(self) -> Iterator[Registration]:
        # registered out of order: the demo runs sections in name order
        yield Registration("toy-second", "Uses what the first made", "toy_plugin:second_demo")
        yield Registration("toy", "Toy section", "toy_plugin:toy_demo")

    @hookimpl
    def register_tasks(self) -> Iterator[Registration]:
        yield Registration("toy-choice", "Toy multiple choice", "toy_plugin:make_choice")
        yield Registration("toy-describe", "Toy captioning", "toy_plugin:make_describe")
        yield Registration("toy-judged", "Toy captioning, judged", "toy_plugin:make_judged")

    @hookimpl
    def register_models(self) -> Iterator[Registration]:
        yield Registration("slow-random", "Random, slowly", "toy_plugin:make_slow")
        yield Registration("matrix-only", "Scores only as a matrix", "toy_plugin:make_matrix_only")
        yield Registration("text-only", "Reads only the context", "toy_plugin:make_text_only")
        yield Registration("echo", "Echoes prompt and context", "toy_plugin:make_echo")
        yield Registration("literal-judge", "Judges by literal comparison", "toy_plugin:make_literal_judge")
