"""A generating model's answer read as BlackSwan's own scripts read it: ``inference/mcq/test.py``
(multiple choice) and ``inference/mcq/testdef.py`` (yes/no) of the official code.

Both scripts read an answer in the same order, and so does ``_cleaned`` here:

1. an answer that starts with ``Answer:`` keeps only ``split("Answer:")[1]``, stripped: the text
   between the first and the second ``Answer:`` ("Answer: maybe Answer: C" keeps "maybe");
   the check is case-sensitive ("answer: C" keeps its prefix);
2. every ``\\n`` and ``\\r`` is removed (not replaced by a space: "B\\r\\n." reads as "B.");
3. then the test of the format.

Multiple choice: the letters are tried in order A, B, C, and the first that matches wins. A
letter X matches when the answer equals X, starts with ``(X)`` or ``X.``, contains ``X.``
anywhere, or contains X's option text (ignoring case). Nothing matching is a failed parse
(counted wrong, and counted). The quirks are kept on purpose: ``contains "A."`` also matches
"the U.S.A. team", and an answer naming two letters gets the first of A, B, C it names, not the
first it says.

Yes/no: lower-cased after steps 1-2; an answer starting with ``yes`` is yes, one starting with
``no`` is no (so "not sure" and "nothing" read as no, as in the official script), anything else
failed. So "Answer: Yes" is yes, and "Answer:\\nno" is no.

Where abduct knowingly differs from the scripts:

- surrounding white space is stripped before step 1 (the scripts read "  A" as failed; every
  model of abduct strips its output already, so this only matters for outside predictions);
- Detective and Reporter are told apart by the record's ``task`` field (``test.py`` counts
  Detective questions of ``hard`` videos in the Reporter tally, a leftover experiment);
- (the generative task) when several one-to-one matchings tie exactly, the authors' ``max``
  is whichever one scipy returns; abduct's is the highest pair of any optimal matching
  (``abduct_metrics.matching``), so it does not depend on the order of the sentences.
"""

from __future__ import annotations

from collections.abc import Sequence

LETTERS = ("A", "B", "C")
_PREFIX = "Answer:"


def _cleaned(output: str) -> str:
    """Steps 1-2 of the module docstring, after stripping surrounding white space."""
    text = output.strip()
    if text.startswith(_PREFIX):
        text = text.split(_PREFIX)[1].strip()
    return text.replace("\n", "").replace("\r", "")


def parse_choice(output: str, options: Sequence[str]) -> int | None:
    """The 0-based index of the option ``output`` names, or None (see the module docstring)."""
    text = _cleaned(output)
    lowered = text.lower()
    for index, (letter, option) in enumerate(zip(LETTERS, options)):
        if (text == letter or text.startswith((f"({letter})", f"{letter}.")) or f"{letter}." in text
                or option.lower() in lowered):
            return index
    return None


def parse_yes_no(output: str) -> bool | None:
    """True for yes, False for no, None when the answer starts with neither."""
    text = _cleaned(output).lower()
    if text.startswith("yes"):
        return True
    if text.startswith("no"):
        return False
    return None


def letter_list(options: Sequence[str]) -> str:
    """The options as the question shows them: ``(A) ...`` one a line."""
    return "\n".join(f"({letter}) {option}" for letter, option in zip(LETTERS, options))
