"""What ``abduct compare`` says beyond the values: paired tests of each run against the first
run of its task, and mean ± standard deviation over runs that differ only in ``--seed``.

A paired test uses the units both runs scored (units.json), so it asks whether the two models
differ *on the same items*: stronger than comparing two intervals, which each carry the
items' own spread. Runs on different data (files' hashes) or splits are not paired; the test
is refused with the reason.

Families of the Holm correction. The headline metrics of a task are one family; each breakdown
is a family of its own. The rule (no declaration needed from the task, for now): a metric is a
breakdown cell when its flattened name has a ``by_<field>.`` or ``per_<name>.`` component (the
report's shapes: ``by_category.physical.accuracy``, ``per_chunk.3.p_at_1``), and the breakdown
(``by_category``, ``per_chunk``; with what precedes it, for nested tables) is its family; counts
and reference figures (``metric_info`` ``better`` null: ``n``, ``chunks``, ``instances``, a human
score) are in no family and not tested; every other metric of results.json is a headline metric.
So a headline difference is corrected only for the other headline metrics, never for the dozens
of exploratory breakdown cells. A task may later declare its headline metrics explicitly.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from abduct import DataError
from abduct.host import read_units
from abduct_report.metric_names import breakdown_of as breakdown_of  # re-exported: compare's rule
from abduct_report.metric_names import is_count as is_count
from abduct_report.paired_tests import holm, paired_test

ALPHA = 0.05
HEADLINE = "headline"


def family_of(metric: str, metric_info: Mapping[str, Any] | None) -> str | None:
    """The Holm family of ``metric``: ``"headline"``, its breakdown (``"by_category"``), or
    None for a count or reference figure (not tested)."""
    if is_count(metric, metric_info):
        return None
    found = breakdown_of(metric)
    return HEADLINE if found is None else found[0]


def refusal(first: dict[str, Any], other: dict[str, Any]) -> str | None:
    """Why two runs (their results.json) cannot be paired, or None."""
    if first.get("split") != other.get("split"):
        return f"split '{other.get('split')}' is not the first run's '{first.get('split')}'"
    if (first.get("data") or {}).get("files") != (other.get("data") or {}).get("files"):
        return "its data files differ from the first run's (their sha256 in results.json)"
    return None


def versus(first_dir: Path, first: dict[str, Any], other_dir: Path, other: dict[str, Any],
           resamples: int, seed: int) -> dict[str, Any]:
    """``runs[i]["versus"]``: each shared metric's difference (this run minus the first), its
    interval, raw and Holm-adjusted p-values, the Holm family it was corrected in (``family``)
    and the families (``families``: ``{family: [metric, ...]}``); or ``refused`` with the reason."""
    out: dict[str, Any] = {"dir": str(first_dir)}
    reason = refusal(first, other)
    if reason is not None:
        out["refused"] = f"no paired test: {reason}"
        return out
    info = {**(other.get("metric_info") or {}), **(first.get("metric_info") or {})}
    mine, theirs = read_units(other_dir), read_units(first_dir)
    try:  # units that the two runs group into different clusters (another version of the task) are not paired
        tests = {m: paired_test(theirs[m], mine[m], resamples, seed, m) for m in theirs
                 if m in mine and family_of(m, info) is not None}
    except DataError as exc:
        out["refused"] = f"no paired test: {exc}"
        return out
    found = {m: t for m, t in tests.items() if t is not None}
    families: dict[str, list[str]] = {}
    for metric in found:
        families.setdefault(str(family_of(metric, info)), []).append(metric)
    for name, members in families.items():
        for metric, p_holm in zip(members, holm([found[m]["p_value"] for m in members])):
            found[metric].update(p_holm=p_holm, family=name)
    out["metrics"] = found
    out["families"] = families
    return out


def test_units(test: Mapping[str, Any]) -> str:
    """What a paired test resampled: ``sign-flip permutation, 400 question in 100 video clusters``."""
    clusters = f" in {test['clusters']} {test['clustered_by']} clusters" if test.get("clustered_by") else ""
    return f"{test['test']}, {test['units']} {test['unit']}{clusters}"


def same_but_seed(a: dict[str, Any], b: dict[str, Any]) -> bool:
    keys = ("task", "split", "limit")
    return (all(a.get(k) == b.get(k) for k in keys) and a["model"]["spec"] == b["model"]["spec"]
            and (a.get("data") or {}).get("files") == (b.get("data") or {}).get("files"))


def seed_groups(runs: Sequence[tuple[Path, dict[str, Any], dict[str, float]]]) -> list[dict[str, Any]]:
    """Runs of one model and task that differ only in ``--seed`` (two or more seeds): each
    metric's mean and sample standard deviation across them, as the VAR paper reports; and
    ``counts``: each count or reference figure (``is_count``) as it is, one value when the runs
    agree (they share data and limit), else the list, in the runs' order."""
    groups: list[list[tuple[Path, dict[str, Any], dict[str, float]]]] = []
    for run in runs:
        home = next((g for g in groups if same_but_seed(g[0][1], run[1])), None)
        if home is None:
            groups.append([run])
        else:
            home.append(run)
    out = []
    for group in groups:
        seeds = [r[1].get("seed") for r in group]
        if len(group) < 2 or len(set(seeds)) != len(seeds):
            continue
        names = [m for m in group[0][2] if all(m in r[2] for r in group)]
        info = group[0][1].get("metric_info") or {}
        counts: dict[str, Any] = {}
        for m in [m for m in names if is_count(m, info)]:
            values = [r[2][m] for r in group]
            counts[m] = values[0] if len(set(values)) == 1 else values
        out.append({"task": group[0][1]["task"], "model": group[0][1]["model"]["spec"], "seeds": seeds,
                    "dirs": [str(r[0]) for r in group],
                    "metrics": {m: {"mean": statistics.fmean(r[2][m] for r in group),
                                    "std": statistics.stdev(r[2][m] for r in group)} for m in names},
                    "counts": counts})
    return out
