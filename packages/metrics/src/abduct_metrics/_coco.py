"""COCO caption metrics on pycocoevalcap: BLEU-1..4, METEOR, ROUGE-L and CIDEr-D.

Each sentence is PTB-tokenised exactly once, as COCOEvalCap and the benchmarks' scorers do:
the predictions in one Java call and the references in another (each block in its own call, so
a line's neighbours are those of the official procedure), then the tokens are handed to
pycocoevalcap's own scorers, so the values are theirs. Text that is already tokenizer output
(``PtbTokens``, or every input with ``pretokenized=True``) is scored as given: tokenising twice
changes the text (``:)`` -> ``:-rrb-`` -> ``-rrb-``). A sentence that tokenises to nothing is
scored by pycocoevalcap as an empty text (0, BLEU up to its 1e-9 smoothing), with one warning. Corpus values are what pycocoevalcap reports; per-sample values are its
per-image scores. ``info["mean_per_sample"]`` holds the mean of the per-sample values, the
figure VAR reports for METEOR, ROUGE-L and CIDEr (for ROUGE-L and CIDEr it equals the corpus
value; for METEOR the corpus value is METEOR's own aggregate; BLEU stays corpus-level).
``info["bleu_statistics"]`` holds BLEU's per-sample sufficient statistics (``bleu_statistics``),
from which any subset's corpus BLEU is recomputed exactly (confidence intervals).
"""

from __future__ import annotations

import atexit
import contextlib
import os
import subprocess
import threading
import warnings
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
from pycocoevalcap.bleu.bleu import Bleu  # type: ignore[import-untyped]
from pycocoevalcap.bleu.bleu_scorer import cook_refs, cook_test  # type: ignore[import-untyped]
from pycocoevalcap.cider.cider import Cider  # type: ignore[import-untyped]
from pycocoevalcap.meteor.meteor import Meteor  # type: ignore[import-untyped]
from pycocoevalcap.rouge.rouge import Rouge  # type: ignore[import-untyped]

from abduct import AbductError, MetricResult, Settings, Spec
from abduct.kit import validate_inputs
from abduct_metrics._common import SCALE, no_argument, scaled
from abduct_metrics._ptb import PtbTokens, as_tokens, is_empty, ptb_tokenize
from abduct_metrics._ptb import clean_non_ascii as _clean
from abduct_metrics.java import jvm_said, require_java

COCO_METRICS = ("bleu", "meteor", "rouge-l", "cider")
CIDER_FIXED_DF = "CIDEr-D document frequencies held at the full set's"
"""What an interval over per-sample CIDEr-D scores approximates (a resample would count them anew)."""
Tokenised = dict[str, list[str]]


def tokenize_once(sentences: Sequence[str], clean_non_ascii: bool = False) -> list[PtbTokens]:
    """Every sentence as tokens: ``PtbTokens`` as given, the others through one tokenizer call
    (after ``clean_non_ascii`` when asked), in their order."""
    raw = [i for i, s in enumerate(sentences) if not isinstance(s, PtbTokens)]
    out: list[PtbTokens] = [s if isinstance(s, PtbTokens) else PtbTokens() for s in sentences]
    if raw:
        texts = [sentences[i] for i in raw]
        for i, tokens in zip(raw, ptb_tokenize([_clean(t) for t in texts] if clean_non_ascii else texts)):
            out[i] = tokens
    return out


def tokenize_all(
    predictions: Mapping[str, str], references: Mapping[str, Sequence[str]], clean_non_ascii: bool = False
) -> tuple[Tokenised, Tokenised]:
    """``(gts, res)`` in pycocoevalcap's shape, each sentence tokenised once: the predictions in
    one tokenizer call and the references in another, as COCOEvalCap does."""
    ids = list(predictions)
    tokens = tokenize_once([predictions[k] for k in ids], clean_non_ascii)
    res: Tokenised = {k: [tokens[i]] for i, k in enumerate(ids)}
    flat = tokenize_once([r for k in ids for r in references[k]], clean_non_ascii)
    gts: Tokenised = {}
    cursor = 0
    for k in ids:
        n = len(references[k])
        gts[k] = list(flat[cursor:cursor + n])
        cursor += n
    warn_empty(gts, res)
    return gts, res


def warn_empty(gts: Mapping[str, Sequence[str]], res: Mapping[str, Sequence[str]]) -> list[str]:
    """Ids whose prediction or a reference holds no token after tokenisation, with one warning
    naming the first; the metrics score such text as empty instead of failing."""
    empty = [k for k in res if any(map(is_empty, res[k])) or any(map(is_empty, gts[k]))]
    if empty:
        more = f" (and {len(empty) - 1} more)" if len(empty) > 1 else ""
        warnings.warn(f"record '{empty[0]}'{more}: a prediction or reference holds no token after "
                      "tokenisation (e.g. only punctuation); scored as an empty text", stacklevel=3)
    return empty


def bleu_statistics(gts: Mapping[str, Sequence[str]], res: Mapping[str, Sequence[str]]) -> dict[str, tuple[float, ...]]:
    """Per-example sufficient statistics of pycocoevalcap's corpus BLEU, from the same tokens
    (``tokenize_all``'s ``(gts, res)``): ``(hypothesis length, closest reference length, guessed
    1..4-grams, clipped matched 1..4-grams)``, pycocoevalcap's own n-gram counting. Summed over
    any set of examples they give that set's corpus BLEU-1..4 (``abduct.UnitScores.corpus``'s
    ``"bleu-N"``), so a resample is scored without the scorer."""
    out = {}
    for key, hypotheses in res.items():
        cooked = cook_test(hypotheses[0], cook_refs(list(gts[key])))
        test_len, lengths = cooked["testlen"], cooked["reflen"]
        closest = min((abs(length - test_len), length) for length in lengths)[1]  # BleuScorer's "closest"
        out[key] = (float(test_len), float(closest), *map(float, cooked["guess"]), *map(float, cooked["correct"]))
    return out


def _bleu(gts: Tokenised, res: Tokenised) -> tuple[dict[str, float], list[dict[str, float]]]:
    corpus, per_n = Bleu(4).compute_score(gts, res, verbose=0)
    names = [f"bleu_{n}" for n in range(1, 5)]
    per_sample = [{name: float(per_n[j][i]) for j, name in enumerate(names)} for i in range(len(res))]
    return {name: float(v) for name, v in zip(names, corpus)}, per_sample


# One METEOR JVM per process. Starting one takes seconds (the JVM, then METEOR's paraphrase
# tables); a score on a live one takes milliseconds. Its stdio protocol is stateless (SCORE
# turns one segment into statistics, EVAL aggregates only the statistics it is sent), so a
# reused JVM gives the numbers a fresh one gives. Started on first use and shared under a lock;
# replaced when it has died or was started by the parent of a forked process (its pipes are the
# parent's); killed at exit. pycocoevalcap's ``Meteor.compute_score`` keeps its own lock and
# leaves unread lines on the pipe when an exchange fails, so a JVM that failed is killed, never
# reused. A thread reads its stderr to the end (over a long life, a pipe nobody reads could fill
# and stall the JVM), on the raw descriptor: a buffered reader's lock held by that thread would
# be copied into a forked child, held for ever. (A JVM whose process vanished without atexit
# sees end-of-file on stdin and exits.)
_meteor_lock = threading.Lock()
_meteor_jvm: Any = None  # pycocoevalcap's Meteor, or None
_meteor_owner = 0  # the pid that started it
_meteor_stderr: threading.Thread | None = None  # the thread reading its stderr
_meteor_said = bytearray()  # the end of what it wrote there: its message when it fails
_SAID_KEPT = 16384


def _drain(fd: int, said: bytearray) -> None:
    with contextlib.suppress(OSError):
        while block := os.read(fd, 65536):
            said.extend(block)
            del said[:-_SAID_KEPT]


def _discard_meteor(scorer: Any) -> None:
    """Kill a METEOR JVM (when this process started it; a forked child only lets go of its
    copies of the parent's pipes) and close its pipes. Its own lock is freed, so
    ``Meteor.__del__`` (which takes it) cannot hang after a failed ``compute_score``."""
    if scorer.lock.locked():
        scorer.lock.release()
    process, streams = scorer.meteor_p, [scorer.meteor_p.stdin, scorer.meteor_p.stdout, scorer.meteor_p.stderr]
    if _meteor_owner == os.getpid():
        process.kill()
        process.wait()
        if _meteor_stderr is not None:
            _meteor_stderr.join(timeout=10)  # end-of-file once the JVM is gone
            if _meteor_stderr.is_alive():
                streams.pop()  # still reading: closing could hand its descriptor number to another file
    for stream in streams:
        with contextlib.suppress(OSError):
            stream.close()


def _forget_meteor() -> None:
    global _meteor_jvm
    scorer, _meteor_jvm = _meteor_jvm, None
    if scorer is not None:
        _discard_meteor(scorer)


def _live_meteor() -> Any:
    """This process's METEOR JVM, started now if there is none alive (call under the lock)."""
    global _meteor_jvm, _meteor_owner, _meteor_stderr, _meteor_said
    scorer = _meteor_jvm
    if scorer is not None and (_meteor_owner != os.getpid() or scorer.meteor_p.poll() is not None):
        _forget_meteor()
    if _meteor_jvm is None:
        _meteor_jvm, _meteor_owner = Meteor(), os.getpid()
        _meteor_said = bytearray()
        _meteor_stderr = threading.Thread(target=_drain, args=(_meteor_jvm.meteor_p.stderr.fileno(), _meteor_said),
                                          name="meteor-stderr", daemon=True)
        _meteor_stderr.start()
    return _meteor_jvm


def _after_fork_in_child() -> None:
    global _meteor_lock
    _meteor_lock = threading.Lock()  # another thread of the parent may have held it at the fork


os.register_at_fork(after_in_child=_after_fork_in_child)
atexit.register(_forget_meteor)


def _meteor(gts: Tokenised, res: Tokenised) -> tuple[dict[str, float], list[dict[str, float]]]:
    with _meteor_lock:
        scorer = _live_meteor()
        try:
            corpus, scores = scorer.compute_score(gts, res)
        except (ValueError, OSError) as exc:  # an answer that is not a number, or a JVM that died
            said = _meteor_said
            with contextlib.suppress(subprocess.TimeoutExpired):  # a dying JVM finishes its message
                scorer.meteor_p.wait(timeout=2)
            _forget_meteor()  # its stderr read to the end
            raise AbductError(f"METEOR (Java) failed: {jvm_said(bytes(said)) or exc}") from exc
        except BaseException:  # e.g. an interrupt mid-exchange: lines may be left on the pipe
            _forget_meteor()
            raise
    return {"meteor": float(corpus)}, [{"meteor": float(s)} for s in scores]


def _rouge(gts: Tokenised, res: Tokenised) -> tuple[dict[str, float], list[dict[str, float]]]:
    corpus, scores = Rouge().compute_score(gts, res)
    return {"rouge_l": float(corpus)}, [{"rouge_l": float(s)} for s in scores]


def _cider(gts: Tokenised, res: Tokenised) -> tuple[dict[str, float], list[dict[str, float]]]:
    corpus, scores = Cider().compute_score(gts, res)
    return {"cider": float(corpus)}, [{"cider": float(s)} for s in scores]


_SCORERS = {"bleu": _bleu, "meteor": _meteor, "rouge-l": _rouge, "cider": _cider}


class CocoCaptionMetric:
    """One or more of ``bleu``, ``meteor``, ``rouge-l``, ``cider`` over one tokenisation.

    A task needing several (e.g. BLEU-4 and CIDEr) builds one object with all of them, so the
    tokenizer runs once per evaluation.
    """

    def __init__(self, metrics: Iterable[str] = COCO_METRICS, clean_non_ascii: bool = False,
                 pretokenized: bool = False) -> None:
        self.metrics = tuple(metrics)
        unknown = [m for m in self.metrics if m not in _SCORERS]
        if unknown or not self.metrics:
            raise AbductError(f"unknown COCO metric(s) {unknown}; choose from {', '.join(COCO_METRICS)}")
        if clean_non_ascii and pretokenized:
            raise AbductError("clean_non_ascii applies before tokenisation; with pretokenized=true the text "
                              "is already tokenised")
        self.clean_non_ascii = bool(clean_non_ascii)
        self.pretokenized = bool(pretokenized)

    def compute(
        self,
        predictions: Mapping[str, str],
        references: Mapping[str, Sequence[str]],
        questions: Mapping[str, str] | None = None,
    ) -> MetricResult:
        require_java()
        pred, refs, _ = validate_inputs(predictions, references, questions)
        if self.pretokenized:
            pred = {k: as_tokens(v) for k, v in pred.items()}
            refs = {k: [as_tokens(r) for r in group] for k, group in refs.items()}
        gts, res = tokenize_all(pred, refs, self.clean_non_ascii)
        corpus: dict[str, float] = {}
        per_sample: dict[str, dict[str, float]] = {k: {} for k in pred}
        for name in self.metrics:
            values, rows = _SCORERS[name](gts, res)
            corpus.update(values)
            for key, row in zip(pred, rows):
                per_sample[key].update(row)
        keys = next(iter(per_sample.values())).keys()
        info: dict[str, Any] = {
            "tokenizer": "ptb (pycocoevalcap, stanford-corenlp-3.4.1, once per sentence)",
            "clean_non_ascii": self.clean_non_ascii,
            "pretokenized": self.pretokenized,
            "mean_per_sample": {k: SCALE * float(np.mean([row[k] for row in per_sample.values()])) for k in keys},
        }
        if "bleu" in self.metrics:  # what a confidence interval of the corpus BLEU resamples
            info["bleu_statistics"] = bleu_statistics(gts, res)
        if "cider" in self.metrics:
            info["interval_notes"] = {"cider": CIDER_FIXED_DF}
        return MetricResult(scaled(corpus), {k: scaled(row) for k, row in per_sample.items()}, info)


# The registered factories: ``name[,clean_non_ascii=true][,pretokenized=true]``; pycocoevalcap
# runs on the CPU, so the run's settings (device, batch size) do not apply. ``pretokenized``
# says the input files hold PTB tokenizer output already (scored as given).
def make_bleu(spec: Spec, settings: Settings, *, clean_non_ascii: bool = False,
               pretokenized: bool = False) -> CocoCaptionMetric:
    """BLEU-1..4, pycocoevalcap ("closest" reference length), corpus level."""
    no_argument(spec)
    return CocoCaptionMetric(("bleu",), clean_non_ascii, pretokenized)


def make_meteor(spec: Spec, settings: Settings, *, clean_non_ascii: bool = False,
               pretokenized: bool = False) -> CocoCaptionMetric:
    """METEOR 1.5 (Java), pycocoevalcap."""
    no_argument(spec)
    return CocoCaptionMetric(("meteor",), clean_non_ascii, pretokenized)


def make_rouge_l(spec: Spec, settings: Settings, *, clean_non_ascii: bool = False,
               pretokenized: bool = False) -> CocoCaptionMetric:
    """ROUGE-L (beta 1.2), pycocoevalcap."""
    no_argument(spec)
    return CocoCaptionMetric(("rouge-l",), clean_non_ascii, pretokenized)


def make_cider(spec: Spec, settings: Settings, *, clean_non_ascii: bool = False,
               pretokenized: bool = False) -> CocoCaptionMetric:
    """CIDEr-D (pycocoevalcap's ``Cider``), document frequencies from the given references."""
    no_argument(spec)
    return CocoCaptionMetric(("cider",), clean_non_ascii, pretokenized)
