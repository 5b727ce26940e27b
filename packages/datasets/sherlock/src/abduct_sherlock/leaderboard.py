"""Leaderboard instance files: ``[{image, region, inference, test_id, extra_info}]``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from abduct import DataError, Region, VisualInput
from abduct.kit import read_json
from abduct_sherlock.layout import ImageRoots
from abduct_sherlock.schema import FieldReader


@dataclass(frozen=True)
class LeaderboardRow:
    """One (image, region, inference) triple wanting a score."""

    test_id: str
    image_url: str
    visual: VisualInput
    inference: str


def read_instances(path: Path, roots: ImageRoots) -> list[LeaderboardRow]:
    """Validated rows of an instance file; duplicate test ids are an error."""
    path = Path(path)
    data = read_json(path, "leaderboard instance file")
    if not isinstance(data, list):
        raise DataError(f"expected a JSON list of instances, got {type(data).__name__}", file=path)
    rows: list[LeaderboardRow] = []
    seen: set[str] = set()
    for index, raw in enumerate(data):
        r = FieldReader(path, index)
        if not isinstance(raw, dict):
            raise r.fail("(record)", f"expected an object, got {type(raw).__name__}")
        tid = r.text(raw, "test_id", "test_id")
        if tid in seen:
            raise r.fail("test_id", f"duplicate test id {tid}")
        seen.add(tid)
        url, width, height = r.image(raw, "image", "image")
        region: Region = r.region(raw, "region", "region", width, height)
        inference = r.text(raw, "inference", "inference")
        rows.append(LeaderboardRow(tid, url, VisualInput(str(roots.resolve(url)), region), inference))
    return rows
