"""A judge's agreement, as report.html and ``abduct compare`` show it: results.json's
``details.judge_agreement`` (written by a task through ``abduct_modelkit.agreement.judge_agreement``)
and the ``judge`` block's further judges (``--judge`` given more than once).

Per judge: items read, its score (percent of yes for a yes/no judge), and against people's labels
its accuracy and Cohen's κ; between judges: Krippendorff's α and, for each further judge against
the first, the share of equal verdicts, κ and the paired difference of their scores with its 95%
interval. docs/reading-the-numbers.md says how to read them.

**Across runs** (``abduct compare`` of runs whose model is the judge, one judge a run, e.g. several
``visualriddles-judge`` runs): a task declares, in its block's ``across_runs``, which field of each
``predictions.jsonl`` record holds the run's verdict (``label``; null: no verdict, left out),
which holds people's label (``people``, optional), what each verdict scores (``scores``, optional:
``{label as text: number}``) and what was judged (``judged``: conditions; runs that differ from the
first's are left out and named). The runs' verdicts on the items every run scored (by ``id``) go
through ``abduct_modelkit.agreement.judge_agreement``, the first run as the first judge: α across
the runs' models, with people as one more rater, and each run against the first (κ, equal labels,
the paired difference of their scores).
"""

from __future__ import annotations

import html
import json
import textwrap
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from abduct import DataError
from abduct_modelkit.agreement import judge_agreement

ACROSS = "across_runs"  # the block's declaration of a per-item verdict comparable across runs


def block_of(results: Mapping[str, Any]) -> dict[str, Any] | None:
    """The run's judge-agreement block, or None when its task reports none."""
    block = (results.get("details") or {}).get("judge_agreement")
    return block if isinstance(block, dict) and isinstance(block.get("judges"), list) else None


def _figure(value: Any, digits: int = 3) -> str:
    return "—" if not isinstance(value, (int, float)) or isinstance(value, bool) else f"{value:.{digits}f}"


def _judge_name(name: str, results: Mapping[str, Any]) -> str:
    """``judge`` (the first ``--judge``) by its spec, where results.json names it."""
    spec = (results.get("judge") or {}).get("spec")
    return f"{name} ({spec})" if name == "judge" and spec else name


def judge_rows(results: Mapping[str, Any]) -> tuple[list[str], list[list[str]]]:
    """The per-judge table: header and rows (text, unescaped)."""
    block = block_of(results) or {"judges": []}
    header = ["judge", "read", "unread", "score", "accuracy vs people", "κ vs people", "people's labels"]
    rows = []
    for judge in block["judges"]:
        people = judge.get("human") or {}
        kappa = _figure(people.get("kappa")) if people else "—"
        if people.get("kappa_undefined"):
            kappa = f"undefined ({people['kappa_undefined']})"
        rows.append([_judge_name(str(judge["judge"]), results), str(judge["read"]), str(judge["unread"]),
                     _figure(judge.get("score"), 1), _figure(people.get("accuracy"), 1) if people else "—",
                     kappa, str(people.get("n", "—")) if people else "—"])
    return header, rows


def pair_rows(results: Mapping[str, Any]) -> tuple[list[str], list[list[str]]]:
    """Each further judge against the first: header and rows (text, unescaped)."""
    block = block_of(results) or {}
    header = ["judge vs first", "both read", "same label %", "κ", "score difference [95% CI]"]
    rows = []
    for pair in block.get("pairs") or []:
        difference = _figure(pair.get("difference"), 1)
        if isinstance(pair.get("low"), (int, float)):
            difference += f" [{pair['low']:.1f}, {pair['high']:.1f}]"
        rows.append([str(pair["other"]), str(pair["both_read"]), _figure(pair.get("agreement"), 1),
                     _figure(pair.get("kappa")), difference])
    return header, rows


def summary_line(results: Mapping[str, Any]) -> str | None:
    """α across the judges (and with people as one more rater), in one line; None without them."""
    block = block_of(results) or {}
    if "alpha" not in block:
        return None
    line = f"Krippendorff's α (nominal) across the {len(block['judges'])} judges: {_figure(block['alpha'])}"
    if "alpha_with_people" in block:
        line += f"; with people as one more rater: {_figure(block['alpha_with_people'])}"
    return line


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f"<div class=\"scroll\"><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>"


def further_judges_html(results: Mapping[str, Any]) -> list[str]:
    """The further ``--judge`` specs of a task that reports no agreement block: equal verdicts only."""
    others = (results.get("judge") or {}).get("others") or []
    if not others:
        return []
    rows = [[str(o["spec"]), str(o["judged"]), str(o["parse_failures"]), f"{o['same_verdicts']} of {o['both_read']}"]
            for o in others]
    return [_table(["further judge", "judged", "unparsed", "verdicts as the first judge's"], rows)]


def agreement_html(results: Mapping[str, Any]) -> list[str]:
    """report.html's "Judge agreement" section; nothing for a run without judges to compare."""
    if block_of(results) is None:
        further = further_judges_html(results)
        return ["<h2>Judge agreement</h2>", *further] if further else []
    body = ["<h2>Judge agreement</h2>", _table(*judge_rows(results))]
    header, rows = pair_rows(results)
    if rows:
        body.append(_table(header, rows))
    if (line := summary_line(results)) is not None:
        body.append(f"<p class=\"note\">{html.escape(line)}</p>")
    body.append("<p class=\"note\">Score: the mean a judge gives the items it read (a yes/no judge: its percent "
                "of yes). κ is Cohen's (chance-corrected; 1 full agreement, 0 chance level); see the docs' "
                "“Reading the numbers” on its limits. The difference is the further judge's score minus the "
                "first's on the items both read, with a paired bootstrap interval.</p>")
    return body


def compare_rows(results_by_run: Sequence[tuple[str, Mapping[str, Any]]]) -> tuple[list[str], list[list[str]]]:
    """``abduct compare``'s judge-agreement table: a row per (run, judge) of the runs that report one."""
    header = ["run", "judge", "score", "accuracy vs people", "κ vs people", "κ vs first judge", "α"]
    rows = []
    for name, results in results_by_run:
        block = block_of(results)
        if block is None:
            continue
        pairs = {str(p["other"]): p for p in block.get("pairs") or []}
        for k, judge in enumerate(block["judges"]):
            people = judge.get("human") or {}
            pair = pairs.get(str(judge["judge"]))
            rows.append([name, _judge_name(str(judge["judge"]), results), _figure(judge.get("score"), 1),
                         _figure(people.get("accuracy"), 1), _figure(people.get("kappa")),
                         _figure(pair.get("kappa")) if pair else "—",
                         _figure(block.get("alpha")) if k == 0 else ""])
    return header, rows


def compare_html(results_by_run: Sequence[tuple[str, Mapping[str, Any]]]) -> list[str]:
    """The compare page's "Judge agreement" part; nothing when no run reports one."""
    header, rows = compare_rows(results_by_run)
    return ["<h3>Judge agreement</h3>", _table(header, rows)] if rows else []


@dataclass(frozen=True)
class _Rated:
    """A run's verdict on an item, as ``judge_agreement`` reads a judge's record (``others``: the
    further runs' verdicts on it, by run name)."""

    id: str
    label: Hashable | None
    others: dict[str, _Rated] = field(default_factory=dict)


def _declaration(results: Mapping[str, Any]) -> dict[str, Any] | None:
    found = (block_of(results) or {}).get(ACROSS)
    return found if isinstance(found, dict) and isinstance(found.get("label"), str) else None


def _records(directory: Path, declared: Mapping[str, Any]) -> dict[str, dict[str, Hashable | None]]:
    """``id`` -> ``{"label", "people"}`` read from the run's ``predictions.jsonl``."""
    path = Path(directory) / "predictions.jsonl"
    if not path.is_file():
        raise DataError("no predictions.jsonl: the run's verdicts cannot be compared across runs", file=path)
    out: dict[str, dict[str, Hashable | None]] = {}
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            try:
                record = json.loads(line)
            except ValueError:
                raise DataError("not a JSON line", file=path, record=f"line {number}") from None
            if not isinstance(record, dict) or "id" not in record:
                raise DataError("not a record with an id", file=path, record=f"line {number}")
            mine: dict[str, Hashable | None] = {}
            for role in ("label", "people"):
                name = declared.get(role)
                value = record.get(name) if isinstance(name, str) else None
                if not (value is None or isinstance(value, (str, int, float, bool))):
                    raise DataError(f"a verdict is a text, a number, true/false or null, not {type(value).__name__}",
                                    file=path, record=record["id"], field=str(name))
                mine[role] = value
            out[str(record["id"])] = mine
    return out


def across_runs(runs: Sequence[tuple[str, Mapping[str, Any], Path]], resamples: int = 1000,
                seed: int = 0) -> dict[str, Any] | None:
    """The judge-agreement block of runs whose model is the judge (module docstring), with
    ``runs`` (their names, the first the first judge), ``left_out`` (runs judged under other
    conditions) and ``not_in_every_run`` (items some run did not score); None below two runs."""
    declared = [(name, directory, found) for name, results, directory in runs
                if (found := _declaration(results)) is not None]
    if len(declared) < 2:
        return None
    first = declared[0][2]
    pooled = [(name, directory) for name, directory, found in declared if found == first]
    left_out = [name for name, _, found in declared if found != first]
    if len(pooled) < 2:
        return None
    names: list[str] = []
    for name, _ in pooled:  # judge_agreement keys the judges by name: two runs of one name get a number
        names.append(name if name not in names else f"{name} #{len(names) + 1}")
    tables = [_records(directory, first) for _, directory in pooled]
    every = [i for i in tables[0] if all(i in table for table in tables[1:])]
    rated = [_Rated(i, tables[0][i]["label"], {n: _Rated(i, t[i]["label"]) for n, t in zip(names[1:], tables[1:])})
             for i in every]
    people = None
    if isinstance(first.get("people"), str):  # people's label where every run records the same one
        people = {i: tables[0][i]["people"] for i in every if all(t[i]["people"] == tables[0][i]["people"] for t in tables)}
    scores = first.get("scores")

    def score(label: Hashable) -> float:
        assert isinstance(scores, dict)
        if str(label) not in scores:
            raise DataError(f"verdict {label!r} has no score in the declaration ({', '.join(map(str, scores))})",
                            file=Path(pooled[0][1]) / "results.json", field=f"details.judge_agreement.{ACROSS}.scores")
        return float(scores[str(label)])

    block = judge_agreement(rated, people, label=lambda r: r.label, score=score if isinstance(scores, dict) else None,
                            first=names[0], resamples=resamples, seed=seed)
    block.update(runs=names, left_out=left_out,
                 not_in_every_run=len(set().union(*tables)) - len(every))
    return block


def across_runs_lines(runs: Sequence[tuple[str, Mapping[str, Any], Path]], width: int = 100) -> list[str]:
    """``abduct compare``'s text: α across the runs' models (and with people), each run against the
    first; lines of at most ``width`` characters."""
    block = across_runs(runs)
    if block is None:
        return []
    runs_n, items = len(block["runs"]), block["items"]
    lines = ["", f"### Judge agreement across runs (each run's model one judge; {items} items every run scored)"]
    line = f"Krippendorff's α (nominal) across the {runs_n} runs: {_figure(block.get('alpha'))}"
    if "alpha_with_people" in block:
        line += f"; with people as one more rater: {_figure(block['alpha_with_people'])}"
    lines.append(line)
    for pair in block["pairs"]:
        text = (f"{pair['other']} vs {pair['first']}: {pair['both_read']} items both judged, "
                f"{_figure(pair.get('agreement'), 1)}% same verdict, κ {_figure(pair.get('kappa'))}")
        if isinstance(pair.get("difference"), (int, float)):
            text += f", score difference {pair['difference']:+.1f}"
            if isinstance(pair.get("low"), (int, float)):
                text += f" [{pair['low']:.1f}, {pair['high']:.1f}]"
        lines.append(text)
    wrapped = [part for line in [*lines[2:], *_left_out(block)]
               for part in textwrap.wrap(line, width, initial_indent="  ", subsequent_indent="    ")]
    return ["", *textwrap.wrap(lines[1], width), *wrapped]


def _left_out(block: Mapping[str, Any]) -> list[str]:
    lines = []
    if block["not_in_every_run"]:
        lines.append(f"{block['not_in_every_run']} items not scored by every run are left out")
    if block["left_out"]:
        lines.append(f"left out, judged under other conditions than {block['runs'][0]}'s: {', '.join(block['left_out'])}")
    return lines


def across_runs_html(runs: Sequence[tuple[str, Mapping[str, Any], Path]]) -> list[str]:
    """The compare page's "Judge agreement across runs": each run's model as a judge, the pairs, α."""
    block = across_runs(runs)
    if block is None:
        return []
    as_results = {"details": {"judge_agreement": block}}
    body = ["<h3>Judge agreement across runs</h3>",
            f"<p class=\"note\">Each run's model is one judge, on the {block['items']} items every run scored.</p>",
            _table(*judge_rows(as_results))]
    header, rows = pair_rows(as_results)
    if rows:
        body.append(_table(header, rows))
    notes = [line for line in [summary_line(as_results)] if line]
    notes += _left_out(block)
    body += [f"<p class=\"note\">{html.escape(note)}</p>" for note in notes]
    return body
