"""The official accuracy and its breakdowns, from per-record choices.

- ``accuracy``: 100 x the share of records whose chosen index (argmax of the four scores,
  ties to the first maximal index) equals ``answer_label``. Index-based: a distractor whose
  text equals the gold text is still wrong.
- ``by_type``: per value of the record's ``type`` (``normal`` in train, ``hamlet`` in val:
  how the distractors were written, not a scene-change type).
- ``by_change_sentences``: per number of sentences in the change, ``1``, ``2``, ``3``,
  ``4+`` (see ``count_sentences``).
- ``by_question``: ``yes_no`` or ``other`` (see ``is_yes_no``).

Each group is ``{"accuracy": x, "n": count}``; groups without records are left out.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from abduct_cosim.records import CosimRecord

_SENTENCE_END = re.compile(r"[.!?]+(?=\s|$)")
_WORD = re.compile(r"\w")
AUXILIARIES = frozenset(
    "is are was were am do does did can could will would shall should may might must has have had "
    "isn't aren't wasn't weren't don't doesn't didn't can't couldn't won't wouldn't shouldn't hasn't "
    "haven't hadn't".split()
)


def count_sentences(text: str) -> int:
    """Sentences in ``text``: pieces ended by one or more of ``.!?`` followed by whitespace
    or the end of the text (so ``3.5`` or ``e.g.x`` do not split), counting only pieces that
    hold a letter or digit (a stray ``" ."`` adds none); at least 1."""
    pieces = _SENTENCE_END.split(text)
    return max(1, sum(1 for piece in pieces if _WORD.search(piece)))


def sentence_bucket(text: str) -> str:
    n = count_sentences(text)
    return str(n) if n < 4 else "4+"


def _first_word(text: str) -> str:
    words = re.findall(r"[A-Za-z']+", text.lower())
    return words[0].strip("'") if words else ""


def is_yes_no(question: str) -> bool:
    """A question is yes/no when its first word (lower-cased, quotes stripped) is an
    auxiliary verb (``is``, ``are``, ``can``, ``would``, ``does``, ... and their negations);
    when it starts with ``if``, the first word after its first comma decides
    (``If it rained, would ...``)."""
    first = _first_word(question)
    if first == "if" and "," in question:
        first = _first_word(question.split(",", 1)[1])
    return first in AUXILIARIES


def _groups(rows: Sequence[tuple[str, bool]], order: Sequence[str] | None = None) -> dict[str, dict[str, Any]]:
    found: dict[str, list[bool]] = {}
    for key, correct in rows:
        found.setdefault(key, []).append(correct)
    keys = [k for k in order if k in found] if order is not None else sorted(found)
    return {k: {"accuracy": 100.0 * sum(found[k]) / len(found[k]), "n": len(found[k])} for k in keys}


def breakdowns(records: Sequence[CosimRecord], correct: Mapping[int, bool]) -> dict[str, Any]:
    """``accuracy``, ``n`` and the three breakdowns over ``records`` (``correct`` by index)."""
    def rows(key: Callable[[CosimRecord], str]) -> list[tuple[str, bool]]:
        return [(key(r), correct[r.index]) for r in records]

    hits = [correct[r.index] for r in records]
    return {
        "accuracy": 100.0 * sum(hits) / len(hits) if hits else 0.0,
        "n": len(hits),
        "by_type": _groups(rows(lambda r: r.type)),
        "by_change_sentences": _groups(rows(lambda r: sentence_bucket(r.change)), ("1", "2", "3", "4+")),
        "by_question": _groups(rows(lambda r: "yes_no" if is_yes_no(r.question) else "other"), ("yes_no", "other")),
    }
