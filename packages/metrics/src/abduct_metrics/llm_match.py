"""LLM-match: a judge model rates each (gold answer, response) pair from 1 to 5 (BlackSwan's
generative LLM metric). The judge is the run's ``--judge`` (the core's ``Judge`` stage, which
caches, resumes and records the judge's spec, fingerprint and prompt hash in results.json);
this module holds what BlackSwan adds to it: the prompt, how a reply is read and how one
question's ratings become its score.

- **One judge call per gold x response pair**, with ``LLM_MATCH_TEMPLATE`` (``{reference}``:
  the gold answer, ``{candidate}``: the response). The template is written after the gist of
  BlackSwan's kept script (``metric/llm_match_llama.py``): semantic similarity on 1-5, 5 a
  perfect match, 1 entirely different, a short reason line then a score line.
- **Reading a reply** (``parse_score``): the first integer after ``Score:``; a reply without
  one is skipped. One deviation: an integer outside 1-5 is skipped too (the script would
  average it in). ``parse_reason`` is the text between ``Reason:`` and ``Score:``.
- **A question's score** (``question_score``): the **mean** of its parsed ratings (the kept
  script's figure, the default) or their **max** (the earlier GPT-4o script); **2.5** when
  none parsed, as the kept script does. A task's figure is the mean over its questions.
- **The official judge** (``OFFICIAL_JUDGE``): ``meta-llama/Llama-3.1-8B-Instruct``, sampling
  at temperature 0.4, at most 100 new tokens. abduct's judges decode greedily (the same rating
  on every run), so a run with that model differs from the script by the sampling only.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import Literal, get_args

Aggregation = Literal["mean", "max"]
AGGREGATIONS: tuple[str, ...] = get_args(Aggregation)
NO_RATING = 2.5  # a question none of whose replies parsed (the kept script's value)
SCALE = (1, 5)
OFFICIAL_JUDGE = {"model": "meta-llama/Llama-3.1-8B-Instruct", "temperature": 0.4, "max_new_tokens": 100}

LLM_MATCH_TEMPLATE = (
    "You grade how closely a response agrees with a reference answer about what happens in a video.\n"
    "Reference answer: {reference}\n"
    "Response: {candidate}\n"
    "Judge the meaning, not the wording. Rate the agreement with one whole number from 1 to 5: "
    "5 when the response says what the reference says, 1 when it describes something else entirely.\n"
    "Answer in exactly two lines:\n"
    "Reason: <about ten words>\n"
    "Score: <1, 2, 3, 4 or 5>"
)
TEMPLATE_SHA256 = hashlib.sha256(LLM_MATCH_TEMPLATE.encode()).hexdigest()  # as results.json's judge block hashes it

_SCORE = "Score:"
_INTEGER = re.compile(r"\d+")


def parse_score(reply: str) -> int | None:
    """The first integer after the first ``Score:`` of ``reply``, when it is 1 to 5; else None."""
    at = reply.find(_SCORE)
    if at < 0:
        return None
    found = _INTEGER.search(reply, at + len(_SCORE))
    if found is None:
        return None
    value = int(found.group())
    return value if SCALE[0] <= value <= SCALE[1] else None


def parse_reason(reply: str) -> str | None:
    """The text between ``Reason:`` and the ``Score:`` after it, stripped; None without both."""
    start = reply.find("Reason:")
    if start < 0:
        return None
    end = reply.find(_SCORE, start)
    return reply[start + len("Reason:") : end].strip() if end >= 0 else None


def question_score(ratings: Sequence[int | None], aggregation: Aggregation = "mean") -> float:
    """One question's LLM-match from its pairs' ratings (None: not parsed, skipped):
    their mean or max, ``NO_RATING`` when none parsed."""
    if aggregation not in AGGREGATIONS:
        raise ValueError(f"aggregation must be one of {', '.join(AGGREGATIONS)}, got '{aggregation}'")
    parsed = [r for r in ratings if r is not None]
    if not parsed:
        return NO_RATING
    return float(max(parsed)) if aggregation == "max" else sum(parsed) / len(parsed)
