"""A generating model's answer read as BlackSwan's own scripts read it (``inference/mcq/test.py``
and ``testdef.py`` of the official code, as REFERENCE-blackswan §2.1 describes them).

Multiple choice: a leading ``Answer:`` is dropped and newlines are removed; then the letters are
tried in order A, B, C, and the first that matches wins. A letter X matches when the answer
equals X, starts with ``(X)`` or ``X.``, contains ``X.`` anywhere, or contains X's option text
(ignoring case). Nothing matching is a failed parse (counted wrong, and counted). The quirks
are kept on purpose: ``contains "A."`` also matches "the U.S.A. team", and an answer naming two
letters gets the first of A, B, C it names, not the first it says.

Yes/no: lower-cased, an answer starting with ``yes`` is yes, one starting with ``no`` is no
(so "not sure" and "nothing" read as no, as in the official script), anything else failed.

One choice of ours, where the description is silent: surrounding white space is stripped
before the tests (every model of abduct strips its output already).
"""

from __future__ import annotations

from collections.abc import Sequence

LETTERS = ("A", "B", "C")


def parse_choice(output: str, options: Sequence[str]) -> int | None:
    """The 0-based index of the option ``output`` names, or None (see the module docstring)."""
    text = output.strip()
    if text.startswith("Answer:"):
        text = text[len("Answer:"):]
    text = text.replace("\n", "").strip()
    lowered = text.lower()
    for index, (letter, option) in enumerate(zip(LETTERS, options)):
        if (text == letter or text.startswith((f"({letter})", f"{letter}.")) or f"{letter}." in text
                or option.lower() in lowered):
            return index
    return None


def parse_yes_no(output: str) -> bool | None:
    """True for yes, False for no, None when the answer starts with neither."""
    text = output.strip().lower()
    if text.startswith("yes"):
        return True
    if text.startswith("no"):
        return False
    return None


def letter_list(options: Sequence[str]) -> str:
    """The options as the question shows them: ``(A) ...`` one a line."""
    return "\n".join(f"({letter}) {option}" for letter, option in zip(LETTERS, options))
