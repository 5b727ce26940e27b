"""Whether two runs of a task gave the same answers: the parity check of a served setup (the same
weights run as ``vlm:DIR`` and served behind ``openai:``), shown by ``abduct compare`` beside the
paired difference of its table.

Each run's ``predictions.jsonl`` is read by ``id``; a record's answer is what the model said in
it (``prediction``, ``outputs``, ``answer``, ``choice``, ``raw``: those the record holds). Two
records answer identically when those fields are equal; records only one run holds are left out.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ANSWER_FIELDS = ("prediction", "outputs", "answer", "choice", "raw")
SHOWN = 5  # differing ids named


def answers(directory: Path) -> dict[str, str]:
    """``id`` -> the record's answer fields as canonical JSON (none for a run without predictions)."""
    path = Path(directory) / "predictions.jsonl"
    out: dict[str, str] = {}
    if not path.is_file():
        return out
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            try:
                record = json.loads(line)
            except ValueError:
                continue  # the pages say what is wrong with a damaged file; parity counts what it can read
            if isinstance(record, dict) and "id" in record:
                fields = {k: record[k] for k in ANSWER_FIELDS if k in record}
                if fields:
                    out[str(record["id"])] = json.dumps(fields, sort_keys=True, ensure_ascii=False)
    return out


def identical(first: Path, other: Path) -> dict[str, Any] | None:
    """``{"same", "both", "share", "differ"}`` (share in percent; ``differ``: the first ids that
    differ) over the records both runs hold; None when they share none."""
    a, b = answers(first), answers(other)
    both = [key for key in a if key in b]
    if not both:
        return None
    differ = [key for key in both if a[key] != b[key]]
    same = len(both) - len(differ)
    return {"same": same, "both": len(both), "share": 100.0 * same / len(both), "differ": differ[:SHOWN]}


def parity_lines(runs: Sequence[tuple[str, Path]]) -> list[str]:
    """The compare text's section: each later run's identical answers against the first run's."""
    if len(runs) < 2:
        return []
    (first_name, first), lines = runs[0], []
    for name, directory in runs[1:]:
        found = identical(first, directory)
        if found is None:
            continue
        text = (f"{name}: {found['same']:,} of {found['both']:,} answers identical to {first_name}'s "
                f"({found['share']:.1f}%)")
        if found["differ"]:
            text += f"; first differing: {', '.join(found['differ'])}"
        lines.append(text)
    if not lines:
        return []
    return ["", "### Same answers (the parity of two setups: Δ above is their paired difference)", *lines]
