"""When a run may stand beside a paper's row: the conditions each number was measured under.

A published row carries its conditions (``abduct.PublishedRow.conditions``, from its package's
``published.json``): ``data`` (``real`` or ``synthetic``) and, for ranks, ``candidates`` (how
many inferences a query is ranked among), beside its ``split``. A run's come from its
results.json (``run_conditions``): its ``split``; ``details["conditions"]`` where the task
states them; ``candidates`` from a declared chance mean rank (``chance_mean_rank``, (n + 1) / 2
averaged over the chunks, as sherlock-retrieval reports it); ``data`` ``synthetic`` for a corpus
folder holding a ``SYNTHETIC`` file (``abduct sherlock synth`` writes one; the folder as the run
named it, so a relative one is looked for from here), or where the caller knows it (the demo:
every corpus of it is synthetic).

A run and a paper row are **not comparable** when their data differ (a synthetic corpus is not
the benchmark), or their candidates by more than ``CANDIDATE_TOLERANCE`` (a mean rank among 146
is not one among 1,000: chance is 73.5 there and 500.5 here). A condition one side does not
state is no conflict: nothing is known against it. A split that differs is shown, not refused
(the papers' tables put val and test side by side); where the paper has rows on the runs' split,
only those are drawn (``chart_papers``). Pages never draw a run and a paper row it is not
comparable with on one bar chart, and say why (``not_comparable_notes``).

Two runs are **not like for like** when what shaped their inputs differs: results.json's
``model.inputs`` (what the model's ``describe_inputs`` said), its ``image`` and ``video`` facts
(resize rule, sizes, frames per clip, sampling, decode backend), compared fact by fact where both
runs state it (``input_differences``; one line each, ``unlike_notes``). Who served the answers
(``served``: reported model id, ``system_fingerprint``, endpoints, concurrency) is shown, not
flagged: it changes no input.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol, TypeVar

SYNTHETIC_MARK = "SYNTHETIC"  # a file in a corpus folder that a synthesiser wrote
CANDIDATE_TOLERANCE = 0.10  # candidate sets within 10% of each other give ranks on one scale
PREPROCESSING = ("image", "video")  # the parts of model.inputs that change what a model is shown


class Conditioned(Protocol):
    """A comparison row: a run or a paper's."""

    split: str | None
    conditions: dict[str, Any]

    @property
    def name(self) -> str: ...


def run_conditions(results: Mapping[str, Any]) -> dict[str, Any]:
    """What results.json says about the conditions of a run (see the module docstring)."""
    found: dict[str, Any] = {}
    details = results.get("details")
    stated = details.get("conditions") if isinstance(details, Mapping) else None
    metrics = results.get("metrics")
    chance = metrics.get("chance_mean_rank") if isinstance(metrics, Mapping) else None
    if isinstance(chance, (int, float)) and not isinstance(chance, bool) and chance >= 1:
        found["candidates"] = round(2 * float(chance) - 1)  # chance mean rank among n is (n + 1) / 2
    data = results.get("data")
    folder = (data.get("resolved") or data.get("dir")) if isinstance(data, Mapping) else None  # dir: as given
    if isinstance(folder, str) and folder and (Path(folder) / SYNTHETIC_MARK).is_file():
        found["data"] = "synthetic"
    if isinstance(stated, Mapping):
        found.update({str(k): v for k, v in stated.items()})
    return found


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def conflicts(run: Mapping[str, Any], paper: Mapping[str, Any]) -> list[str]:
    """Why a run with conditions ``run`` cannot be compared with a paper row with ``paper``
    (empty: nothing known stands against it)."""
    out = []
    if run.get("data") and paper.get("data") and str(run["data"]) != str(paper["data"]):
        out.append(f"data {run['data']}, the paper's {paper['data']}")
    mine, theirs = _number(run.get("candidates")), _number(paper.get("candidates"))
    if mine is not None and theirs is not None and abs(mine - theirs) > CANDIDATE_TOLERANCE * theirs:
        out.append(f"ranked among {mine:,.0f} candidates, the paper's among about {theirs:,.0f}")
    return out


def shown_conditions(row: Conditioned) -> str:
    """The split and the conditions, as a table cell says them: ``val, synthetic data, 146 candidates``."""
    parts = [row.split] if row.split else []
    if row.conditions.get("data"):
        parts.append(f"{row.conditions['data']} data")
    if _number(row.conditions.get("candidates")) is not None:
        parts.append(f"{float(row.conditions['candidates']):,.0f} candidates")
    return ", ".join(parts)


Row = TypeVar("Row", bound=Conditioned)


def chart_papers(runs: Sequence[Conditioned], papers: Sequence[Row]) -> list[Row]:
    """The paper rows a bar chart may draw beside ``runs``: comparable with every one of them
    and, where the paper has rows on the runs' split, on that split."""
    splits = {r.split for r in runs}
    comparable = [p for p in papers if not any(conflicts(r.conditions, p.conditions) for r in runs)]
    same = [p for p in comparable if p.split in splits]
    return same or comparable


def not_comparable_notes(runs: Sequence[Conditioned], papers: Sequence[Conditioned]) -> list[str]:
    """One sentence per group of runs that some paper rows are not comparable with, saying why."""
    by_reason: dict[tuple[str, ...], list[str]] = {}
    counts: dict[tuple[str, ...], int] = {}
    for run in runs:
        found: dict[str, None] = {}
        barred = 0
        for paper in papers:
            reasons = conflicts(run.conditions, paper.conditions)
            found.update(dict.fromkeys(reasons))
            barred += bool(reasons)
        if found:
            key = tuple(found)
            by_reason.setdefault(key, []).append(run.name)
            counts[key] = max(counts.get(key, 0), barred)
    notes = []
    for key, names in by_reason.items():
        which = "the paper's rows" if counts[key] == len(papers) else f"{counts[key]} of the paper's {len(papers)} rows"
        notes.append(f"Not comparable with {which}: {', '.join(names)}: {'; '.join(key)}. "
                     "Those rows are listed for reference and left off the bar charts.")
    return notes


def run_label(results: Mapping[str, Any]) -> str | None:
    """The name results.json gives the run (``model.label``: ``--label``, or the spec without
    URL-valued options); None for a results file written before it had one."""
    model = results.get("model")
    label = model.get("label") if isinstance(model, Mapping) else None
    return label if isinstance(label, str) and label else None


def input_facts(results: Mapping[str, Any], parts: Sequence[str] | None = None) -> dict[str, str]:
    """results.json's ``model.inputs`` (``parts`` of it: all by default) flattened to
    ``{"video.frames_per_clip": "8"}``, each value as text."""
    model = results.get("model")
    inputs = model.get("inputs") if isinstance(model, Mapping) else None
    out: dict[str, str] = {}

    def walk(value: Any, prefix: str) -> None:
        if isinstance(value, Mapping) and value:
            for key, inner in value.items():
                walk(inner, f"{prefix}.{key}" if prefix else str(key))
        else:
            out[prefix] = value if isinstance(value, str) else json.dumps(value)

    if isinstance(inputs, Mapping):
        walk({k: v for k, v in inputs.items() if parts is None or k in parts}, "")
    return out


def input_differences(first: Mapping[str, Any], other: Mapping[str, Any]) -> list[str]:
    """``"video.frames_per_clip 8 vs 16"`` for each preprocessing fact both results state and
    state differently (``first``'s value first)."""
    mine, theirs = input_facts(first, PREPROCESSING), input_facts(other, PREPROCESSING)
    return [f"{key} {mine[key]} vs {theirs[key]}" for key in mine if key in theirs and mine[key] != theirs[key]]


class Recorded(Protocol):
    results: dict[str, Any]

    @property
    def name(self) -> str: ...


def unlike_notes(runs: Sequence[Recorded]) -> list[str]:
    """One line per preprocessing fact in which a run differs from the first of ``runs``."""
    return [f"not like for like: {runs[0].name} vs {run.name}: {difference}"
            for run in runs[1:] for difference in input_differences(runs[0].results, run.results)]


def distinct_names(names: Sequence[str], details: Sequence[Sequence[str]]) -> list[str]:
    """``names`` made distinct: rows that share a name get, in brackets, as few of their
    ``details`` (split, setting, source...) as tell them apart, in that order; a number where
    none do (two runs of one model in the same settings)."""
    out = list(names)
    for name in dict.fromkeys(names):
        same = [i for i, n in enumerate(names) if n == name]
        if len(same) < 2:
            continue

        def part(i: int, k: int) -> str:
            return details[i][k] if k < len(details[i]) else ""

        varying = [k for k in range(max(len(details[i]) for i in same)) if len({part(i, k) for i in same}) > 1]
        chosen: list[int] = []
        told: dict[int, str] = {}
        for k in varying:
            chosen.append(k)
            told = {i: ", ".join(p for c in chosen if (p := part(i, c))) for i in same}
            if len(set(told.values())) == len(same):
                break
        else:
            told = {i: ", ".join(x for x in (told.get(i, ""), f"#{j + 1}") if x) for j, i in enumerate(same)}
        for i in same:
            out[i] = f"{name} [{told[i]}]" if told[i] else name
    return out


def fitted_names(names: Sequence[str], limit: int) -> list[str]:
    """Distinct ``names`` of at most ``limit`` characters (a plot's labels), a long one losing its
    middle so that what tells it apart, its start and its bracketed end, stays."""
    head = (limit - 1) // 2
    out = [n if len(n) <= limit else f"{n[:head]}…{n[len(n) - (limit - 1 - head):]}" for n in names]
    seen: dict[str, int] = {}
    for i, name in enumerate(out):
        if out.count(name) > 1:  # cut to one text: numbered
            seen[name] = seen.get(name, 0) + 1
            mark = f" #{seen[name]}"
            out[i] = name[: limit - len(mark)] + mark
    return out
