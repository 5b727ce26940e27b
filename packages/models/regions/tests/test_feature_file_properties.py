"""Property: whatever one image's features hold (``region_feature_records``, below:
wrong dtypes and shapes, NaN, text sizes, missing arrays), written into each layout (tsv, h5,
npz), or a tsv line mutated byte by byte, the reader either returns finite float32 ``[N, 4]`` boxes with ``[N, D]`` features and a
positive size, or refuses in one line naming the file and the image (or line)."""

from __future__ import annotations

import base64
import itertools
import math
from datetime import timedelta
from pathlib import Path
from typing import Any

import h5py
import numpy as np
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from abduct import AbductError
from abduct_regions.feature_files import FeatureFile, write_tsv_row
from abduct_testing.fuzzing import mutated_text
from abduct_testing.profiles import examples

DIM = 6
FAST = settings(max_examples=examples(40), deadline=timedelta(seconds=5), database=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


# -- one image's region features, hostile ----------------------------------------------------
def hostile_arrays(shape: tuple[int, ...]) -> Any:
    """A hypothesis strategy of numpy arrays around ``shape``: the right shape or another
    (transposed, flat, empty, an extra axis), a float, integer, boolean, complex or text dtype,
    NaN and infinities here and there; or a plain scalar."""

    shapes = st.sampled_from([shape, shape, shape, shape[::-1], (int(np.prod(shape)),), (0, *shape[1:]),
                              (*shape, 1), ()])
    dtypes = st.sampled_from([np.dtype("float32")] * 4 + [np.dtype(t) for t in ("float64", "float16", "int64", "uint8",
                                                                                 "bool", "complex64", "<U3", "S3")])

    @st.composite
    def array(draw: Any) -> Any:
        dtype, dims = draw(dtypes), draw(shapes)
        if dtype.kind in "US":
            return draw(hnp.arrays(dtype, dims, elements=st.sampled_from(["a", "1", "nan", ""]).map(
                lambda s: s.encode() if dtype.kind == "S" else s)))
        return draw(hnp.arrays(dtype, dims))  # floats: NaN and infinities included

    return st.one_of(array(), array(), array(), st.sampled_from([0, 1.5, float("nan"), "x"]))


def region_feature_records(boxes: int = 2, dim: int = 6) -> Any:
    """A hypothesis strategy of one image's region features as a dict ``boxes``, ``features``,
    ``image_w``, ``image_h`` (``hostile_arrays`` and hostile sizes; any key may be absent): what a
    test writes into each features layout (tsv, h5, npz) to check that its reader loads it
    correctly or refuses it in one line."""

    sizes = st.sampled_from([100, 40.0, 0, -1, float("nan"), float("inf"), "wide", "100", b"7", 1e300])
    return st.fixed_dictionaries({}, optional={"boxes": hostile_arrays((boxes, 4)),
                                               "features": hostile_arrays((boxes, dim)),
                                               "image_w": sizes, "image_h": sizes})


def _raw(value: Any) -> bytes:
    return value.encode() if isinstance(value, str) else value if isinstance(value, bytes) else np.asarray(value).tobytes()


def write(layout: str, record: dict[str, Any], count: object, directory: Path) -> Path:
    if layout == "npz":
        folder = directory / "npz"
        folder.mkdir()
        np.savez(folder / "img1.npz", **record)
        return folder
    if layout == "h5":
        path = directory / "f.h5"
        with h5py.File(path, "w") as handle:
            group = handle.create_group("img1")
            for key, value in record.items():
                target = group if key in ("boxes", "features") else group.attrs
                value = np.char.encode(value) if isinstance(value, np.ndarray) and value.dtype.kind == "U" else value
                target[key] = value
        return path
    fields = ["img1", str(record.get("image_w", "")), str(record.get("image_h", "")), str(count),
              base64.b64encode(_raw(record.get("boxes", b""))).decode(),
              base64.b64encode(_raw(record.get("features", b""))).decode()]
    path = directory / "f.tsv"
    path.write_text("\t".join(fields) + "\n")
    return path


def check_loads_right_or_one_line(path: Path) -> None:
    try:
        got = FeatureFile(path, dim=DIM).get("img1")
    except AbductError as exc:
        message = str(exc)
        where = "img1" in message or "line " in message  # the image, or the tsv line that holds no image
        assert "\n" not in message and path.name in message and where, message
        return
    assert got.boxes.dtype == np.float32 and got.boxes.ndim == 2 and got.boxes.shape[1] == 4
    assert got.features.dtype == np.float32 and got.features.shape == (got.boxes.shape[0], DIM)
    assert np.isfinite(got.boxes).all() and np.isfinite(got.features).all()
    for size in (got.width, got.height):
        assert size is None or (math.isfinite(size) and size > 0)


def test_any_features_load_correctly_or_fail_in_one_line(tmp_path: Path) -> None:
    numbers = itertools.count()

    @FAST
    @given(st.sampled_from(["tsv", "h5", "npz"]), region_feature_records(dim=DIM), st.sampled_from([2, 0, -1, 3, "x"]))
    def check(layout: str, record: dict[str, Any], count: object) -> None:
        directory = tmp_path / str(next(numbers))
        directory.mkdir()
        try:
            path = write(layout, record, count, directory)
        except (TypeError, ValueError):  # h5py cannot store this dtype at all: nothing to read
            assume(False)
        check_loads_right_or_one_line(path)

    check()


def test_any_tsv_bytes_load_correctly_or_fail_in_one_line(tmp_path: Path) -> None:
    boxes = np.array([[0, 0, 50, 20], [10, 5, 100, 40]], dtype=np.float32)
    valid = write_tsv_row("img1", 100, 40, boxes, np.ones((2, DIM), dtype=np.float32))
    path = tmp_path / "f.tsv"

    @FAST
    @given(mutated_text(valid.replace("\t", ",")))  # the mutations split fields at commas
    def check(content: bytes) -> None:
        path.write_bytes(content.replace(b",", b"\t"))
        check_loads_right_or_one_line(path)

    check()
