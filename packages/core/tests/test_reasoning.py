"""reasoning=: the answer split from the reasoning in one place (abduct.kit.reasoning), applied
by the generation engine on what its cache keeps raw."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from abduct import Decoding, GenerationRequest, TextPool, VisualInput
from abduct._engine.generation import GenerationEngine
from abduct.contract.errors import AbductError
from abduct.kit.reasoning import Reasoning, Reply, ServedReply

THOUGHT = "Maybe C? Answer: C. No."


@pytest.mark.parametrize(("option", "raw", "answer", "reasoning", "finished"), [
    ("auto", f"<think>{THOUGHT}</think> B", "B", THOUGHT, True),
    ("auto", f"  <think>{THOUGHT} Answer: C", "", f"{THOUGHT} Answer: C", False),  # cut at the token limit
    ("auto", f"{THOUGHT}</think>B", "B", THOUGHT, True),  # the chat template opened the block
    ("auto", "B", "B", None, True),
    ("auto", ServedReply("B", THOUGHT), "B", THOUGHT, True),
    ("auto", ServedReply("", THOUGHT, truncated=True), "", THOUGHT, False),
    ("none", f"<think>{THOUGHT}</think>B", f"<think>{THOUGHT}</think>B", None, True),
    ("none", ServedReply("B", THOUGHT), "B", None, True),
    ("reason", f"<reason>{THOUGHT}</reason>B", "B", THOUGHT, True),
    ("reason", f"<think>{THOUGHT}</think>B", f"<think>{THOUGHT}</think>B", None, True),
    (r"^.*?FINAL:", f"{THOUGHT} FINAL: B", "B", f"{THOUGHT} FINAL:", True),
    (r"\[(?P<reasoning>[^]]*)\]", f"[{THOUGHT}] B", "B", THOUGHT, True),
    (r"\((.*)\)", "no brackets: B", "no brackets: B", None, True),
])
def test_each_mode_splits_as_documented(option: str, raw: str, answer: str, reasoning: str | None,
                                        finished: bool) -> None:
    split = Reasoning.parse(option).split(raw)
    assert (str(split), split.reasoning, split.finished) == (answer, reasoning, finished)


def test_a_bad_pattern_is_one_line_naming_the_model() -> None:
    with pytest.raises(AbductError, match=r"^openai:m: reasoning='\(' is neither auto, none, a tag name nor"):
        Reasoning.parse("(", "openai:m")


class Served:
    """Returns a served reply with its reasoning_content, counting its calls."""

    fingerprint = "served-v1"
    accepts = frozenset({"image"})

    def __init__(self, reasoning: str = "auto") -> None:
        self.calls = 0
        self.reasoning = Reasoning.parse(reasoning)

    def generate(self, requests: Sequence[GenerationRequest], decoding: Decoding, pool: TextPool | None) -> list[str]:
        self.calls += 1
        return [ServedReply(f"<think>inner</think>{r.prompt}", THOUGHT) for r in requests]


def test_the_cache_keeps_the_raw_reply_and_another_split_reuses_it(tmp_path: Path) -> None:
    requests = [GenerationRequest(VisualInput(), "B")]
    first = Served()
    made = GenerationEngine(first, cache_dir=tmp_path, fingerprint=first.fingerprint, quiet=True).generate(requests)
    assert isinstance(made[0], Reply) and (made[0], made[0].reasoning) == ("<think>inner</think>B", THOUGHT)
    again = Served("think")  # another reasoning=: the cached raw reply, split anew, no model call
    made = GenerationEngine(again, cache_dir=tmp_path, fingerprint=again.fingerprint, quiet=True).generate(requests)
    assert again.calls == 0 and (made[0], made[0].reasoning) == ("B", "inner")


def test_replies_cross_a_process_boundary_whole() -> None:
    """Under torchrun the ranks' answers are pickled to rank 0: a reply keeps its reasoning."""
    import pickle

    served = pickle.loads(pickle.dumps(ServedReply("B", "Answer: C? No.", truncated=True)))
    assert (type(served), str(served), served.reasoning_content, served.truncated) == \
        (ServedReply, "B", "Answer: C? No.", True)
    reply = pickle.loads(pickle.dumps(Reply("", "cut off", finished=False)))
    assert (type(reply), str(reply), reply.reasoning, reply.finished) == (Reply, "", "cut off", False)


class _RecordsOrder:
    """A generator that asks for media grouping and records the order it is asked in."""

    group_media = True
    accepts = frozenset({"image", "context"})

    def __init__(self) -> None:
        self.seen: list[str] = []

    def generate(self, requests: Sequence[GenerationRequest], decoding: Decoding, pool: TextPool | None) -> list[str]:
        self.seen += [f"{r.visual.media}:{r.visual.context}" for r in requests]
        return [f"{r.visual.media}/{r.visual.context}" for r in requests]


def test_a_model_asking_for_media_grouping_gets_requests_sharing_an_image_together_across_batches() -> None:
    requests = [GenerationRequest(VisualInput(media=m, context=str(i)), "p") for i, m in enumerate("abab" "cab")]
    model = _RecordsOrder()
    made = GenerationEngine(model, batch_size=2, quiet=True).generate(requests)
    assert made == [f"{r.visual.media}/{r.visual.context}" for r in requests]  # answers keep the run's order
    assert model.seen == ["a:0", "a:2", "a:5", "b:1", "b:3", "b:6", "c:4"]  # groups by first appearance, stable
    model.group_media = False  # type: ignore[misc]
    model.seen = []
    GenerationEngine(model, batch_size=2, quiet=True).generate(requests)
    assert model.seen == [f"{r.visual.media}:{r.visual.context}" for r in requests]
