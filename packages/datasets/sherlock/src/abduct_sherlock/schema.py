"""Field-by-field validation of Sherlock records; every failure names file, record and field."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from abduct import Box, DataError, Region


class FieldReader:
    """Reads typed fields of one record and raises DataError(file, record, field) on a bad one."""

    def __init__(self, file: Path, record: object) -> None:
        self.file = file
        self.record = record

    def fail(self, field: str, message: str) -> DataError:
        return DataError(message, file=self.file, record=self.record, field=field)

    def get(self, obj: Any, key: str, field: str) -> Any:
        if not isinstance(obj, dict):
            parent = field.rpartition(".")[0] or field
            raise self.fail(parent, f"expected an object, got {type(obj).__name__}")
        if key not in obj:
            raise self.fail(field, "missing")
        return obj[key]

    def obj(self, obj: Any, key: str, field: str) -> dict[str, Any]:
        value = self.get(obj, key, field)
        if not isinstance(value, dict):
            raise self.fail(field, f"expected an object, got {type(value).__name__}")
        return value

    def text(self, obj: Any, key: str, field: str, *, allow_empty: bool = False) -> str:
        value = self.get(obj, key, field)
        if not isinstance(value, str):
            raise self.fail(field, f"expected a string, got {type(value).__name__}")
        if not allow_empty and not value.strip():
            raise self.fail(field, "empty string")
        return value

    def integer(self, obj: Any, key: str, field: str, lo: int | None = None, hi: int | None = None) -> int:
        value = self.get(obj, key, field)
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(field, f"expected an integer, got {type(value).__name__} {value!r}")
        if (lo is not None and value < lo) or (hi is not None and value > hi):
            bounds = f"{lo if lo is not None else '-inf'}..{hi if hi is not None else 'inf'}"
            raise self.fail(field, f"{value} is outside {bounds}")
        return value

    def number(self, obj: Any, key: str, field: str) -> float:
        value = self.get(obj, key, field)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.fail(field, f"expected a number, got {type(value).__name__} {value!r}")
        if value != value or value in (float("inf"), float("-inf")):
            raise self.fail(field, f"not a finite number: {value!r}")
        return float(value)

    def image(self, obj: Any, key: str, field: str) -> tuple[str, int, int]:
        image = self.obj(obj, key, field)
        url = self.text(image, "url", f"{field}.url")
        width = self.integer(image, "width", f"{field}.width", lo=1)
        height = self.integer(image, "height", f"{field}.height", lo=1)
        return url, width, height

    def region(self, obj: Any, key: str, field: str, width: int, height: int) -> Region:
        """A non-empty list of boxes with positive area, inside the image (touching allowed)."""
        boxes = self.get(obj, key, field)
        if not isinstance(boxes, list):
            raise self.fail(field, f"expected a list of boxes, got {type(boxes).__name__}")
        if not boxes:
            raise self.fail(field, "no boxes")
        out = []
        for i, raw in enumerate(boxes):
            where = f"{field}[{i}]"
            if not isinstance(raw, dict):
                raise self.fail(where, f"expected a box object, got {type(raw).__name__}")
            box = Box(*(self.number(raw, k, f"{where}.{k}") for k in ("left", "top", "width", "height")))
            if box.width <= 0 or box.height <= 0:
                raise self.fail(where, f"zero-area box (width {box.width:g}, height {box.height:g})")
            if box.left < 0 or box.top < 0 or box.right > width or box.bottom > height:
                raise self.fail(
                    where,
                    f"box ({box.left:g}, {box.top:g}, {box.right:g}, {box.bottom:g}) lies outside "
                    f"the {width}x{height} image",
                )
            out.append(box)
        return Region(tuple(out))


def box_json(box: Box) -> dict[str, float | int]:
    """A box in the release's JSON form (integers stay integers)."""
    def num(v: float) -> float | int:
        return int(v) if float(v).is_integer() else v

    return {"left": num(box.left), "top": num(box.top), "width": num(box.width), "height": num(box.height)}
