"""A generating model's reasoning kept apart from its answer: the model option ``reasoning=``.

Every generating model (``openai:``, ``vlm:``, ``lmms:``) declares ``reasoning=auto|none|TAG|REGEX``
(default ``auto``) and hands its parsed value to the generation engine as its ``reasoning``
attribute. The model returns its raw text (a served model: the reply's ``content``, with the
server's ``reasoning_content`` beside it as a ``ServedReply``); the engine caches that raw text and
splits it here on read, so the split is made in one place for every model, and changing
``reasoning=`` re-splits cached replies without a model call.

- ``auto``: the server's ``reasoning_content`` when it gave one (vLLM's and SGLang's reasoning
  parsers), else a ``<think>...</think>`` block as ``think`` below;
- ``none``: no split; the whole text is the answer (``reasoning_content`` is dropped);
- ``TAG`` (letters, digits, ``_ . : -``, starting with a letter): the text starts, after
  whitespace, with ``<TAG>``; what lies up to ``</TAG>`` is the reasoning, what follows it the
  answer. A text with ``</TAG>`` but no opening tag (the chat template opened it, as Qwen3's and
  DeepSeek-R1's do) is split at ``</TAG>``. A ``<TAG>`` never closed is **reasoning not
  finished** (the model stopped at the token limit inside it): the answer is empty and the
  record says so, so no parser reads an answer from inside the reasoning;
- ``REGEX`` (any other value): a Python regular expression searched (``re.DOTALL``) in the text;
  its group named ``reasoning``, else its first group, else the whole match is the reasoning,
  and the text after the match is the answer; no match: no reasoning, the whole text is the
  answer (a regular expression cannot tell an unfinished block). ``reasoning=`` values with
  ``,`` or ``=`` cannot be written in a model spec: use ``\\x2c`` or a character class.

The answer is stripped of surrounding whitespace. Other models (baselines, retrieval) have no
``reasoning`` attribute: their texts are answers as they are.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from abduct.contract.errors import AbductError

NOT_FINISHED = "reasoning not finished"  # the unparsed reason for an answer cut off inside its reasoning
_TAG = re.compile(r"[A-Za-z][\w.:-]*")


class ServedReply(str):
    """A served reply's ``content``, with the ``reasoning_content`` the server gave beside it and
    whether it stopped at the token limit (``finish_reason: length``)."""

    reasoning_content: str
    truncated: bool

    def __new__(cls, content: str, reasoning_content: str, truncated: bool = False) -> ServedReply:
        made = super().__new__(cls, content)
        made.reasoning_content = reasoning_content
        made.truncated = truncated
        return made

    def __reduce__(self) -> tuple[Any, ...]:  # pickled whole (torchrun's gather, worker processes)
        return (ServedReply, (str(self), self.reasoning_content, self.truncated))

    def raw(self) -> dict[str, Any]:
        """What the generation cache keeps for it (a plain text is kept as the text)."""
        return {"content": str(self), "reasoning_content": self.reasoning_content, "truncated": self.truncated}


class Reply(str):
    """An answer (the text tasks parse), with the ``reasoning`` split off it (None: there was
    none) and ``finished`` False when the reasoning never closed (the answer is then empty)."""

    reasoning: str | None
    finished: bool

    def __new__(cls, answer: str, reasoning: str | None = None, finished: bool = True) -> Reply:
        made = super().__new__(cls, answer)
        made.reasoning = reasoning
        made.finished = finished
        return made

    def __reduce__(self) -> tuple[Any, ...]:  # pickled whole (torchrun's gather, worker processes)
        return (Reply, (str(self), self.reasoning, self.finished))


@dataclass(frozen=True)
class Reasoning:
    """The parsed ``reasoning=`` option (see the module docstring)."""

    mode: str  # "auto", "none", "tag" or "regex"
    value: str = ""

    @classmethod
    def parse(cls, value: str, model: str = "model") -> Reasoning:
        """``reasoning=VALUE`` of ``model``; a bad regular expression is one line naming both."""
        if value in ("auto", "none"):
            return cls(value)
        if _TAG.fullmatch(value):
            return cls("tag", value)
        try:
            re.compile(value)
        except re.error as exc:
            raise AbductError(f"{model}: reasoning='{value}' is neither auto, none, a tag name nor a valid "
                              f"regular expression ({exc})") from None
        return cls("regex", value)

    def __str__(self) -> str:
        return self.value or self.mode

    def split(self, raw: str) -> Reply:
        """The answer and the reasoning in ``raw`` (a text, or a ``ServedReply``)."""
        if self.mode == "none":
            return Reply(str(raw).strip())
        if isinstance(raw, ServedReply) and raw.reasoning_content and self.mode == "auto":
            if raw.truncated and not raw.strip():  # cut off before the answer began
                return Reply("", raw.reasoning_content.strip(), finished=False)
            return Reply(str(raw).strip(), raw.reasoning_content.strip())
        text = str(raw)
        if self.mode == "regex":
            found = re.search(self.value, text, re.DOTALL)
            if found is None:
                return Reply(text.strip())
            group = "reasoning" if "reasoning" in found.re.groupindex else (1 if found.re.groups else 0)
            return Reply(text[found.end():].strip(), (found.group(group) or "").strip())
        return _split_tag(text, "think" if self.mode == "auto" else self.value)


def _split_tag(text: str, tag: str) -> Reply:
    opening, closing = f"<{tag}>", f"</{tag}>"
    body = text.lstrip()
    if body.startswith(opening):
        inside, closed, after = body[len(opening):].partition(closing)
        if not closed:
            return Reply("", inside.strip(), finished=False)
        return Reply(after.strip(), inside.strip())
    if closing in text:  # opened by the chat template, not by the model
        inside, _, after = text.partition(closing)
        return Reply(after.strip(), inside.strip())
    return Reply(text.strip())


def reasoning_fields(text: str) -> dict[str, Any]:
    """A record's ``reasoning`` (and ``reasoning_finished: false``) for a generated ``text``, where
    it had one: what a task's own records keep (Generate stages' records get them by themselves)."""
    if not isinstance(text, Reply) or text.reasoning is None:
        return {}
    return {"reasoning": text.reasoning, **({} if text.finished else {"reasoning_finished": False})}
