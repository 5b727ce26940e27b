"""A model's answer as a set of responses, for metrics that match sets of sentences
(``bertscore-hungarian``; BlackSwan's generative tasks ask for three one-sentence scenarios).

``split_responses(text)`` is deterministic and tries, in order:

1. **a list literal**: the text (code fences removed) holds one ``[...]`` from its first ``[``
   to its last ``]`` that parses as a JSON or Python list (GPT-4o was asked for a Python list):
   each string item is one response; a dict item gives its ``"Explanation"`` value, else its
   first string value (as BlackSwan's traditional-metrics script reads dict responses);
2. **list markers**: lines starting with ``1.``, ``1)``, ``(1)``, ``-``, ``*``, ``•`` or
   ``Scenario 1:`` (also Option, Hypothesis, Outcome) each start a response, without the
   marker; a line without a marker continues the response before it; lines before the
   first marker (an introduction) are dropped; Markdown bold (``**``) is removed first;
3. **lines**: several non-empty lines without markers, one response each;
4. **sentences**: one line is split after ``.``, ``!`` or ``?`` followed by a space and an
   upper-case letter, a digit or an opening quote/bracket (an abbreviation such as "Mr. Smith"
   splits too).

Empty responses are dropped; surrounding whitespace is stripped. ``split_responses(text,
mode="lines")`` keeps one response per non-empty line and ``mode="none"`` the whole text.
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any, Literal, get_args

SplitMode = Literal["items", "lines", "none"]
SPLIT_MODES: tuple[str, ...] = get_args(SplitMode)

_FENCE = re.compile(r"^\s*```[\w-]*\s*\n?|\n?\s*```\s*$")
_MARKER = re.compile(
    r"^\s*(?:[-*•]|\(?\d{1,2}[.):]|\(\d{1,2}\)|(?:scenario|option|hypothesis|outcome)\s*\d{1,2}\s*[:.)-])\s*",
    re.IGNORECASE,
)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[“‘]?[A-Z0-9])")
_MAX_LITERAL = 20_000  # a longer "list" is not parsed as one (literal_eval's cost grows with it)


def split_responses(text: str, mode: SplitMode = "items") -> list[str]:
    """The responses in ``text`` (see the module's rules); ``[]`` for an empty text."""
    if mode not in SPLIT_MODES:
        raise ValueError(f"split mode must be one of {', '.join(SPLIT_MODES)}, got '{mode}'")
    text = text.strip()
    if not text:
        return []
    if mode == "none":
        return [" ".join(text.split())]
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if mode == "lines":
        return lines
    lines = [bare for bare in (line.replace("**", "").strip() for line in lines) if bare]  # Markdown bold
    listed = _list_literal(_FENCE.sub("", text))
    if listed:
        return listed
    if any(_MARKER.match(line) for line in lines):
        return _marked(lines)
    if len(lines) > 1:
        return lines
    return [s.strip() for s in _SENTENCE_END.split(lines[0]) if s.strip()]


def _list_literal(text: str) -> list[str]:
    start, end = text.find("["), text.rfind("]")
    if start < 0 or end <= start or end - start > _MAX_LITERAL:
        return []
    source = text[start : end + 1]
    parsed: Any = None
    try:
        parsed = json.loads(source)
    except ValueError:
        try:
            parsed = ast.literal_eval(source)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            return []
    if not isinstance(parsed, list):
        return []
    out = []
    for item in parsed:
        if isinstance(item, dict):
            value = item.get("Explanation")
            item = value if isinstance(value, str) else next((v for v in item.values() if isinstance(v, str)), "")
        if isinstance(item, str) and item.strip():
            out.append(" ".join(item.split()))
    return out


def _marked(lines: list[str]) -> list[str]:
    items: list[str] = []
    for line in lines:
        found = _MARKER.match(line)
        if found:
            items.append(line[found.end() :].strip())
        elif items:
            items[-1] = f"{items[-1]} {line}".strip()
    return [item for item in items if item]
