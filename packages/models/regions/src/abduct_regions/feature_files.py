"""Reading precomputed region features (bottom-up attention and its conversions).

Three layouts, each giving per image: boxes ``(x1, y1, x2, y2)`` in pixels, one feature row
per box, and the image size when the file records it:

- ``.tsv``: one line per image, tab-separated, no header; the bottom-up attention order
  ``image_id, image_w, image_h, num_boxes, boxes, features`` (6 fields) or LXMERT's order
  ``img_id, img_h, img_w, objects_id, objects_conf, attrs_id, attrs_conf, num_boxes, boxes,
  features`` (10 fields); ``boxes`` and ``features`` are base64 float32;
- ``.h5``: one group per image id holding ``boxes`` [N, 4] and ``features`` [N, D], the size
  in the group's attributes ``image_w`` and ``image_h``;
- a directory of ``<image_id>.npz`` files holding ``boxes``, ``features`` and optionally
  ``image_w`` and ``image_h``.

An input's image id is its file name without the extension (``VG_100K/2370338.jpg`` ->
``2370338``). Every problem is one line naming the file and the image (``DataError``).
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import Any

import numpy as np

from abduct import AbductError, DataError

TSV_FIELDS = {6: ("image_id", "image_w", "image_h", "num_boxes", "boxes", "features"),
              10: ("img_id", "img_h", "img_w", "objects_id", "objects_conf", "attrs_id", "attrs_conf",
                   "num_boxes", "boxes", "features")}


@dataclass(frozen=True)
class ImageFeatures:
    """One image's boxes (pixels, ``x1, y1, x2, y2``) and their feature rows."""

    boxes: np.ndarray  # [N, 4] float32
    features: np.ndarray  # [N, D] float32
    width: float | None = None
    height: float | None = None


def image_id(media: str) -> str:
    """The id a features file uses for the image at ``media``: its name without extension."""
    return PurePath(media).stem


def _checked(file: Path, image: str, boxes: Any, features: Any, width: Any, height: Any,
             dim: int | None) -> ImageFeatures:
    arrays = {}
    for name, value in (("boxes", boxes), ("features", features)):
        try:
            if np.asarray(value).dtype.kind not in "iuf":  # complex would lose its imaginary part, text or bools mean nothing
                raise TypeError
            arrays[name] = np.asarray(value, dtype=np.float32)
        except (TypeError, ValueError):
            raise DataError(f"is not numbers (dtype {getattr(value, 'dtype', type(value).__name__)})", file=file,
                            record=f"image {image}", field=name) from None
    boxes, features = arrays["boxes"], arrays["features"]
    if boxes.ndim != 2 or boxes.shape[1] != 4:
        raise DataError(f"boxes have shape {tuple(boxes.shape)}, expected [N, 4]", file=file, record=f"image {image}",
                        field="boxes")
    if features.ndim != 2 or features.shape[0] != boxes.shape[0]:
        raise DataError(f"features have shape {tuple(features.shape)} for {boxes.shape[0]} boxes", file=file,
                        record=f"image {image}", field="features")
    if dim is not None and features.shape[1] != dim:
        raise DataError(f"features are {features.shape[1]}-d, the model takes {dim}-d", file=file,
                        record=f"image {image}", field="features")
    if not (np.isfinite(boxes).all() and np.isfinite(features).all()):
        raise DataError("holds NaN or infinite values", file=file, record=f"image {image}")
    return ImageFeatures(boxes, features, _size(file, image, "image_w", width), _size(file, image, "image_h", height))


def _size(file: Path, image: str, name: str, value: Any) -> float | None:
    """An image width or height: absent, or a finite positive number (text or NaN are refused)."""
    if value is None:
        return None
    try:
        size = float(np.asarray(value).item()) if not isinstance(value, (str, bytes)) else None
    except (TypeError, ValueError):
        size = None
    if size is None or not np.isfinite(size) or size <= 0:
        raise DataError(f"is {str(value)[:30]!r}, not a positive number", file=file, record=f"image {image}",
                        field=name)
    return size


class FeatureFile:
    """Lazy access to one features file or directory; ``get`` checks what it returns."""

    def __init__(self, path: Path, dim: int | None = None) -> None:
        self.path = Path(path)
        self.dim = dim
        if not self.path.exists():
            raise AbductError(f"features file {self.path} does not exist")
        self._tsv: dict[str, list[str]] | None = None

    @property
    def kind(self) -> str:
        if self.path.is_dir():
            return "npz"
        suffix = self.path.suffix.lower()
        if suffix in (".tsv", ".h5", ".hdf5"):
            return "h5" if suffix != ".tsv" else "tsv"
        raise AbductError(f"{self.path}: unknown features format (expected .tsv, .h5 or a directory of .npz files)")

    def get(self, image: str) -> ImageFeatures:
        """The features of ``image`` (an id, see ``image_id``); DataError when it is absent."""
        kind = self.kind
        if kind == "tsv":
            return self._from_tsv(image)
        if kind == "h5":
            return self._from_h5(image)
        return self._from_npz(image)

    # -- the three layouts -----------------------------------------------------------------
    def _index_tsv(self) -> dict[str, list[str]]:
        if self._tsv is None:
            rows: dict[str, list[str]] = {}
            number = 0
            try:
                with open(self.path, encoding="utf-8") as handle:
                    for number, line in enumerate(handle, 1):
                        if not line.strip():
                            continue
                        fields = line.rstrip("\n").split("\t")
                        if len(fields) not in TSV_FIELDS:
                            raise DataError(f"has {len(fields)} tab-separated fields, expected 6 or 10",
                                            file=self.path, record=f"line {number}")
                        rows[fields[0]] = fields
            except UnicodeDecodeError as exc:
                raise DataError(f"is not UTF-8 text ({exc.reason} at byte {exc.start})", file=self.path,
                                record=f"line {number + 1}") from None
            self._tsv = rows
        return self._tsv

    def _from_tsv(self, image: str) -> ImageFeatures:
        fields = self._index_tsv().get(image)
        if fields is None:
            raise DataError("is not in the features file", file=self.path, record=f"image {image}")
        named = dict(zip(TSV_FIELDS[len(fields)], fields))
        where = {"file": self.path, "record": f"image {image}"}
        try:
            count = int(named["num_boxes"])
            width = float(named["image_w"] if "image_w" in named else named["img_w"])  # "" is no width: refused
            height = float(named["image_h"] if "image_h" in named else named["img_h"])
        except ValueError as exc:
            raise DataError(f"a size or box count is not a number ({exc})", **where) from None  # type: ignore[arg-type]
        decoded = {}
        for name in ("boxes", "features"):
            try:
                decoded[name] = np.frombuffer(base64.b64decode(named[name], validate=True), dtype=np.float32)
            except (binascii.Error, ValueError):
                raise DataError("is not base64 float32", field=name, **where) from None  # type: ignore[arg-type]
        if decoded["boxes"].size != 4 * count:
            raise DataError(f"holds {decoded['boxes'].size} numbers for num_boxes {count}", field="boxes", **where)  # type: ignore[arg-type]
        if count == 0 or decoded["features"].size % count:
            raise DataError(f"holds {decoded['features'].size} numbers, not a multiple of num_boxes {count}",
                            field="features", **where)  # type: ignore[arg-type]
        return _checked(self.path, image, decoded["boxes"].reshape(count, 4),
                        decoded["features"].reshape(count, -1), width, height, self.dim)

    def _from_h5(self, image: str) -> ImageFeatures:
        import h5py  # type: ignore[import-untyped]

        try:
            with h5py.File(self.path, "r") as handle:
                if image not in handle:
                    raise DataError("is not in the features file", file=self.path, record=f"image {image}")
                group = handle[image]
                if not isinstance(group, h5py.Group):
                    raise DataError("is a dataset, expected a group holding boxes and features", file=self.path,
                                    record=f"image {image}")
                for name in ("boxes", "features"):
                    if name not in group:
                        raise DataError("missing", file=self.path, record=f"image {image}", field=name)
                return _checked(self.path, image, group["boxes"][()], group["features"][()],
                                group.attrs.get("image_w"), group.attrs.get("image_h"), self.dim)
        except OSError as exc:
            raise AbductError(f"{self.path}: not a readable HDF5 file ({exc})") from None

    def _from_npz(self, image: str) -> ImageFeatures:
        file = self.path / f"{image}.npz"
        if not file.is_file():
            raise DataError("has no features file", file=file, record=f"image {image}")
        try:
            with np.load(file, allow_pickle=False) as data:
                for name in ("boxes", "features"):
                    if name not in data:
                        raise DataError("missing", file=file, record=f"image {image}", field=name)
                width = data["image_w"] if "image_w" in data else None
                height = data["image_h"] if "image_h" in data else None
                return _checked(file, image, data["boxes"], data["features"], width, height, self.dim)
        except (OSError, ValueError) as exc:
            raise AbductError(f"{file}: not a readable .npz file ({exc})") from None


def write_tsv_row(image: str, width: float, height: float, boxes: np.ndarray, features: np.ndarray) -> str:
    """One line in the 6-field bottom-up attention layout (tests and conversions)."""
    b = base64.b64encode(np.asarray(boxes, dtype=np.float32).tobytes()).decode()
    f = base64.b64encode(np.asarray(features, dtype=np.float32).tobytes()).decode()
    return "\t".join([image, str(width), str(height), str(len(boxes)), b, f]) + "\n"
