"""What ``abduct compare`` says beyond the values: paired tests of each run against the first
run of its task, and mean ± standard deviation over runs that differ only in ``--seed``.

A paired test uses the units both runs scored (units.json), so it asks whether the two models
differ *on the same items*: stronger than comparing two intervals, which each carry the
items' own spread. Runs on different data (files' hashes) or splits are not paired; the test
is refused with the reason. p-values are Holm-adjusted across the metrics of a task.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from abduct.host import holm, paired_test, read_units

ALPHA = 0.05


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
    interval, raw and Holm-adjusted p-values; or ``refused`` with the reason."""
    out: dict[str, Any] = {"dir": str(first_dir)}
    reason = refusal(first, other)
    if reason is not None:
        out["refused"] = f"no paired test: {reason}"
        return out
    mine, theirs = read_units(other_dir), read_units(first_dir)
    tests = {m: paired_test(theirs[m], mine[m], resamples, seed, m) for m in theirs if m in mine}
    found = {m: t for m, t in tests.items() if t is not None}
    for metric, p_holm in zip(found, holm([t["p_value"] for t in found.values()])):
        found[metric]["p_holm"] = p_holm
    out["metrics"] = found
    return out


def same_but_seed(a: dict[str, Any], b: dict[str, Any]) -> bool:
    keys = ("task", "split", "limit")
    return (all(a.get(k) == b.get(k) for k in keys) and a["model"]["spec"] == b["model"]["spec"]
            and (a.get("data") or {}).get("files") == (b.get("data") or {}).get("files"))


def seed_groups(runs: Sequence[tuple[Path, dict[str, Any], dict[str, float]]]) -> list[dict[str, Any]]:
    """Runs of one model and task that differ only in ``--seed`` (two or more seeds): each
    metric's mean and sample standard deviation across them, as the VAR paper reports."""
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
        out.append({"task": group[0][1]["task"], "model": group[0][1]["model"]["spec"], "seeds": seeds,
                    "dirs": [str(r[0]) for r in group],
                    "metrics": {m: {"mean": statistics.fmean(r[2][m] for r in group),
                                    "std": statistics.stdev(r[2][m] for r in group)} for m in names}})
    return out
