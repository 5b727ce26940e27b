"""Reading a letter from a generated answer, as the authors' 2025 leaderboard script
(``lite_llm_leaderboard/run_leaderboard_inference.py``) reads it, in order:

1. the first ``Final Answer: X`` anywhere;
2. else, in the last paragraph (after the last blank line), a sentence ``Answer: X`` ending it;
3. else, in the last paragraph, a closing sentence ``My final answer is X`` / ``I finally choose
   X`` / ``In conclusion, ... answer is X`` or ``Therefore|Thus|So|Hence|Ultimately, the answer
   is|I choose|I select X``;
4. else the script's fixed default letter: ``E`` (matching) or ``B`` (ranking) — the answer is
   counted in ``unparsed`` and scored with that letter, as the script submits it.

``X`` is one of the task's letters (matching ``A``-``E``, ranking ``A``/``B``), case-sensitive.
"""

from __future__ import annotations

import re

DEFAULT = {"ABCDE": "E", "AB": "B"}


def _patterns(letters: str) -> tuple[re.Pattern[str], re.Pattern[str], tuple[re.Pattern[str], ...]]:
    x = f"([{letters}])"
    end = r"(?:\s*[.!?]?)?$"
    return (re.compile(rf"Final Answer: {x}"),
            re.compile(rf"(?:^|[.!?]\s+)Answer:\s*{x}{end}"),
            (re.compile(rf"(?:^|[.!?]\s+)(?:My final answer is|I finally choose|In conclusion, [^.!?]*answer is)"
                        rf"\s+{x}{end}"),
             re.compile(rf"(?:^|[.!?]\s+)(?:Therefore|Thus|So|Hence|Ultimately),\s+(?:the answer is|I choose|"
                        rf"I select)\s+{x}{end}")))


def extract(text: str, letters: str) -> str | None:
    """The letter read from ``text`` (steps 1-3 of the module docstring); None when none is."""
    final, answer, closing = _patterns(letters)
    found = final.search(text)
    if found:
        return found.group(1)
    last = text.split("\n\n")[-1]
    for pattern in (answer, *closing):
        found = pattern.search(last)
        if found:
            return found.group(1)
    return None


def official_letter(text: str, letters: str) -> tuple[str, bool]:
    """(the letter the official script submits, whether it was read rather than defaulted)."""
    found = extract(text, letters)
    return (found, True) if found is not None else (DEFAULT[letters], False)
