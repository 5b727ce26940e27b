"""The core tests' plugin: a multiple-choice task, a generation task and a judged generation
task over generated images, a slow random model (to kill runs in the middle), a matrix-only
scorer, a text-only scorer, an echoing generator that counts its calls and a judge that
compares texts literally."""

from __future__ import annotations

import multiprocessing
import os
import signal
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from abduct import GenerationRequest, Registration, Settings, Spec, TextPool, VisualInput, hookimpl
from abduct._builtins.baselines import RandomModel
from abduct.contract.metric_info import COUNT, TEXT_METRICS, percent
from abduct.contract.protocols import Decoding
from abduct.contract.stages import Generate, GenerationItem, Judge, JudgeItem, Records, RunInfo, Stage
from abduct.contract.task import Evaluation
from abduct.kit.shapes import score_generations

# the toy benchmark itself comes from the test kit; the registrations below and other tests name it from here
from abduct_testing.toy import ToyChoice, ToyDataset, make_choice, make_dataset, write_toy_data  # noqa: F401


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


def _captions(examples: Sequence[dict[str, Any]]) -> list[GenerationItem]:
    return [GenerationItem(it["id"], GenerationRequest(VisualInput(it["image"]), "Describe."), (it["caption"],))
            for it in examples]


class ToyDescribe:
    """Generate each image's caption; exact match against it. The pool: every caption."""

    default_split = "val"
    dataset = "toy"
    metric_info = {"exact-match": TEXT_METRICS["exact_match"], "n": COUNT}

    def plan(self, examples: Sequence[dict[str, Any]], run: RunInfo) -> list[Stage]:
        pool = TextPool.of([it["caption"] for it in run.corpus])
        return [Stage("describe", Generate(_captions(examples), pool, per_unit=2))]

    def finish(self, examples: Sequence[dict[str, Any]], records: Mapping[str, Records], run: RunInfo) -> Evaluation:
        described = records["describe"]
        metrics = score_generations(run, described, {"exact-match": {}})
        return Evaluation({**metrics, "n": len(described)}, described)


JUDGE_TEMPLATE = "Item: {question}\nCandidate: {candidate}\nReferences:\n{references}\nThe same? Answer yes or no."


class ToyJudged:
    """Pick a caption from the pool, then ask the judge whether it is the image's caption."""

    default_split = "val"
    dataset = "toy"
    metric_info = {"judged_accuracy": percent(), "n": COUNT}

    def plan(self, examples: Sequence[dict[str, Any]], run: RunInfo) -> list[Stage]:
        pool = TextPool.of([it["caption"] for it in run.corpus])
        questions = {it["id"]: it["question"] for it in examples}

        def verdicts(done: Mapping[str, Records]) -> Judge:
            return Judge([JudgeItem(r.id, r.prediction, tuple(r.references), question=questions[r.id])
                          for r in done["describe"]], JUDGE_TEMPLATE, per_unit=2)

        return [Stage("describe", Generate(_captions(examples), pool, per_unit=4)), Stage("judge", after=verdicts)]

    def finish(self, examples: Sequence[dict[str, Any]], records: Mapping[str, Records], run: RunInfo) -> Evaluation:
        verdicts = {v.id: v.equivalent for v in records["judge"]}
        described = [{**asdict(r), "judged": verdicts[r.id]} for r in records["describe"]]
        judged = [v for v in verdicts.values() if v is not None]
        metrics = {"judged_accuracy": 100.0 * float(np.mean(judged)) if judged else 0.0, "n": len(described)}
        return Evaluation(metrics, described)


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


class ToyPlugin:
    @hookimpl
    def register_datasets(self) -> Iterator[Registration]:
        yield Registration("toy", "Toy questions over generated images", "toy_plugin:make_dataset")

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
