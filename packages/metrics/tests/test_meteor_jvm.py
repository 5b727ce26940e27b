"""One METEOR JVM per process: reused, it scores as a fresh pycocoevalcap ``Meteor()``; a dead
one is replaced; a failed exchange is an error and never reaches the next call; a forked child
starts its own and leaves its parent's alone. Real Java, real pycocoevalcap throughout."""

from __future__ import annotations

import json
import os
import select
import signal

import pytest

from abduct import AbductError
from abduct_metrics import _coco
from abduct_metrics._coco import CocoCaptionMetric
from abduct_metrics._common import SCALE

Data = tuple[dict[str, str], dict[str, list[str]]]


def _meteor() -> CocoCaptionMetric:
    return CocoCaptionMetric(("meteor",), pretokenized=True)  # scored as given: no tokenizer call


def _values(data: Data) -> tuple[float, list[float]]:
    result = _meteor().compute(*data)
    return result.corpus["meteor"], [result.per_sample[k]["meteor"] for k in data[0]]


def test_the_shared_jvm_scores_as_a_fresh_pycocoevalcap_meteor(reference_meteor, meteor_probe: Data,
                                                               caption_data: Data) -> None:
    _values(caption_data)  # other scoring first: the shared JVM is not fresh
    jvm = _coco._meteor_jvm
    assert jvm is not None and jvm.meteor_p.poll() is None
    corpus, each = reference_meteor.fresh_probe
    assert _values(meteor_probe) == (SCALE * corpus, [SCALE * s for s in each])  # identical, not close
    assert _coco._meteor_jvm is jvm  # the same JVM answered both


def test_a_killed_jvm_is_replaced(meteor_probe: Data) -> None:
    expected = _values(meteor_probe)
    old = _coco._meteor_jvm
    old.meteor_p.kill()
    old.meteor_p.wait()
    assert _values(meteor_probe) == expected
    assert _coco._meteor_jvm is not old and _coco._meteor_jvm.meteor_p.poll() is None


def test_a_failed_exchange_is_an_error_and_does_not_poison_the_next_call(meteor_probe: Data) -> None:
    expected = _values(meteor_probe)
    old = _coco._meteor_jvm
    # a line break in text scored as given: the jar reads two lines, answers the second with an
    # error message where pycocoevalcap expects a number, and a number stays unread on the pipe
    with pytest.raises(AbductError, match=r"^METEOR \(Java\) failed: .*SCORE or EVAL"):
        _meteor().compute({"a": "a dog\nruns"}, {"a": ["a dog runs"]})
    assert old.meteor_p.poll() is not None  # killed, never reused
    assert not old.lock.locked()  # so pycocoevalcap's Meteor.__del__ (which takes it) cannot hang
    assert _values(meteor_probe) == expected
    assert _coco._meteor_jvm is not old


def test_a_forked_child_starts_its_own_jvm_and_spares_the_parents(meteor_probe: Data) -> None:
    expected = _values(meteor_probe)
    parent = _coco._meteor_jvm
    read_end, write_end = os.pipe()
    child = os.fork()
    if child == 0:  # the child: take the JVM scoring would use, run the exit handler, leave without pytest's teardown
        code = 1
        try:
            os.close(read_end)
            with _coco._meteor_lock:
                jvm = _coco._live_meteor().meteor_p  # started here (scoring on it is the parent's code path)
            _coco._forget_meteor()  # what atexit runs
            os.write(write_end, json.dumps([jvm.pid, jvm.poll()]).encode())
            code = 0
        finally:
            os._exit(code)
    os.close(write_end)
    if not select.select([read_end], [], [], 120)[0]:  # a child stuck on a lock copied at the fork
        os.kill(child, signal.SIGKILL)
    with os.fdopen(read_end, "rb") as pipe:
        answer = pipe.read()
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0 and answer, "the forked child did not finish"
    child_jvm, child_jvm_code = json.loads(answer)
    assert child_jvm != parent.meteor_p.pid and child_jvm_code is not None  # its own, killed at its exit
    assert _coco._meteor_jvm is parent and parent.meteor_p.poll() is None  # the parent's is alive
    assert _values(meteor_probe) == expected  # and answers as before
