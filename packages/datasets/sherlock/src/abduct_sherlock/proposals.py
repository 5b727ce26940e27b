"""Auto-box proposals: ``{image_url: [{"left", "top", "width", "height"}, ...]}`` in detector
order (extra keys such as ``score`` are ignored). The IoU of a proposal with a multi-box
region is its best IoU over the region's boxes."""

from __future__ import annotations

from pathlib import Path

from abduct import Box, DataError
from abduct.kit import read_json
from abduct_sherlock.schema import FieldReader


def read_proposals(path: Path) -> dict[str, list[Box]]:
    path = Path(path)
    data = read_json(path, "auto-box proposals")
    if not isinstance(data, dict):
        raise DataError(f"expected a JSON object {{image_url: [boxes]}}, got {type(data).__name__}", file=path)
    out: dict[str, list[Box]] = {}
    for url, boxes in data.items():
        r = FieldReader(path, url)
        if not isinstance(boxes, list):
            raise r.fail("(proposals)", f"expected a list of boxes, got {type(boxes).__name__}")
        out[url] = []
        for i, raw in enumerate(boxes):
            box = Box(*(r.number(raw, k, f"[{i}].{k}") for k in ("left", "top", "width", "height")))
            if box.width <= 0 or box.height <= 0:
                raise r.fail(f"[{i}]", "zero-area proposal")
            out[url].append(box)
    return out
