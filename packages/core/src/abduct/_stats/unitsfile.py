"""``units.json`` beside results.json: each metric's per-unit data, which ``abduct compare``
pairs across runs. Written by the runner, read back with errors naming the file."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from abduct._declare.units import check_units
from abduct._stats.aggregates import value
from abduct.contract.errors import DataError, PluginError
from abduct.contract.units import UnitScores
from abduct.kit.io import read_json

UNITS_FILE = "units.json"


def checked(units: dict[str, UnitScores], metrics: dict[str, float], owner: str) -> dict[str, UnitScores]:
    """``units`` whose metric is reported and is what the units recompute (a declaration that
    disagrees with the figure it would bracket is a plugin bug, named here)."""
    for metric, scores in check_units(units, owner).items():
        if metric not in metrics:
            raise PluginError(f"{owner}: units given for '{metric}', which is not a reported metric")
        again = value(scores)
        if not math.isclose(again, metrics[metric], rel_tol=1e-6, abs_tol=1e-9):
            raise PluginError(f"{owner}: the units of '{metric}' give {again:.6g}, not the reported "
                              f"{metrics[metric]:.6g}")
    return units


def encode(units: dict[str, UnitScores]) -> dict[str, Any]:
    """The JSON form written to units.json (and read back by ``abduct compare``)."""
    return {metric: _described(scores) for metric, scores in units.items()}


def _described(scores: UnitScores) -> dict[str, Any]:
    out = {"unit": scores.unit, "aggregate": scores.aggregate, "scale": scores.scale, "ids": list(scores.ids),
           "values": [list(v) if isinstance(v, tuple) else v for v in scores.values]}
    out = {**out, "note": scores.note} if scores.note else out
    return {**out, "cluster": scores.cluster, "clusters": list(scores.clusters)} if scores.cluster else out


def read_units(run_dir: Path) -> dict[str, UnitScores]:
    """A finished run's per-unit data; none for a run written before units.json existed."""
    path = run_dir / UNITS_FILE
    return decode(read_json(path, "units file"), path) if path.is_file() else {}


def decode(content: Any, path: Path) -> dict[str, UnitScores]:
    if not isinstance(content, dict):
        raise DataError("expected an object of metrics", file=path)
    out = {}
    for metric, entry in content.items():
        try:
            values = tuple(tuple(v) if isinstance(v, list) else float(v) for v in entry["values"])
            out[metric] = UnitScores(str(entry["unit"]), tuple(str(i) for i in entry["ids"]), values,
                                     str(entry["aggregate"]), float(entry["scale"]), str(entry.get("note", "")),
                                     str(entry.get("cluster", "")), tuple(str(c) for c in entry.get("clusters", ())))
        except (KeyError, TypeError, ValueError) as exc:
            raise DataError(f"malformed units ({exc})", file=path, record=metric) from None
    try:
        return check_units(out, str(path))
    except PluginError as exc:
        raise DataError(str(exc), file=path) from None
