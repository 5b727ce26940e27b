"""``replay:FILE``: a model that answers from a file, so answers that came from elsewhere
(lmms-eval's) go through abduct's ordinary run and its task's official metrics.

FILE is JSON ``{"kind": "generate_until" | "loglikelihood", "answers": {key: text or
log-likelihood}}``, keyed by the request identities of ``docs`` (the same keys an export
writes). A request the file does not answer is a one-line error: export again with the same
data, split and limit as the run that answered.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from abduct import AbductError, DataError, Decoding, GenerationRequest, Settings, Spec, TextPool, VisualInput
from abduct.kit import atomic_write_text, read_json
from abduct_lmms.docs import generation_doc, scoring_doc

ACCEPTS = frozenset({"image", "region", "context", "related"})  # what `lmms:` hands lmms-eval's classes (no video)
DOCUMENT_INPUTS = ACCEPTS | {"video"}  # what an exported document carries: whole video files too, as paths
KINDS = ("generate_until", "loglikelihood")
MISSING = ("{file} does not answer a request this task asks; export the task again with the same data, split "
           "and limit as the run that answered")


@dataclass(frozen=True)
class Source:
    """Which task on which data: what an export writes down and a replay reads back."""

    task: str
    data_dir: Path
    split: str | None = None
    limit: int | None = None
    seed: int = 0


class _Answers:
    accepts = DOCUMENT_INPUTS

    def __init__(self, file: Path, answers: Mapping[str, Any]) -> None:
        self.file = file
        self.answers = answers
        self.fingerprint = "replay-" + hashlib.sha256(file.read_bytes()).hexdigest()[:16]

    def _lookup(self, keys: Sequence[str]) -> list[Any]:
        missing = [k for k in keys if k not in self.answers]
        if missing:
            raise AbductError(MISSING.format(file=self.file))
        return [self.answers[k] for k in keys]


class ReplayGenerator(_Answers):
    """Generates the file's text for each request."""

    def generate(self, requests: Sequence[GenerationRequest], decoding: Decoding, pool: TextPool | None) -> list[str]:
        return [str(a) for a in self._lookup([generation_doc(r)["key"] for r in requests])]


class ReplayScorer(_Answers):
    """Scores each (input, text) with the file's log-likelihood."""

    def score(self, visuals: Sequence[VisualInput], texts: Sequence[str]) -> np.ndarray:
        keys = [scoring_doc(v, t)["key"] for v, t in zip(visuals, texts)]
        return np.array(self._lookup(keys), dtype=np.float64)


def make_replay(spec: Spec, settings: Settings) -> ReplayGenerator | ReplayScorer:
    """``replay:FILE``."""
    if not spec.argument:
        raise AbductError("replay needs the answers file: replay:FILE")
    file = Path(spec.argument)
    saved = read_json(file, "answers file")
    if not isinstance(saved, dict) or saved.get("kind") not in KINDS or not isinstance(saved.get("answers"), dict):
        raise DataError(f"expected {{\"kind\": {' or '.join(KINDS)}, \"answers\": {{key: answer}}}}", file=file)
    return (ReplayGenerator if saved["kind"] == "generate_until" else ReplayScorer)(file, saved["answers"])


def write_answers(path: Path, kind: str, answers: Mapping[str, Any]) -> Path:
    atomic_write_text(path, json.dumps({"kind": kind, "answers": dict(answers)}) + "\n")
    return path


def replay(source: Source, kind: str, answers: Mapping[str, Any]) -> dict[str, Any]:
    """The task's metrics with each request answered from ``answers``: an ordinary ``abduct
    eval`` of ``replay:FILE`` into a scratch folder."""
    from abduct.host import EvalConfig, run_evaluation

    with tempfile.TemporaryDirectory(prefix="abduct-replay-") as scratch:
        file = write_answers(Path(scratch) / "answers.json", kind, answers)
        config = EvalConfig(task=source.task, model=f"replay:{file}", data_dir=source.data_dir,
                            out_dir=Path(scratch) / "run", split=source.split, limit=source.limit, seed=source.seed,
                            quiet=True, use_cache=False, ci_resamples=0)
        return dict(run_evaluation(config)["metrics"])
