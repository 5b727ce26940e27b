"""Box positions and the three feature-file layouts, with their one-line errors."""

from __future__ import annotations

import base64
from pathlib import Path

import h5py
import numpy as np
import pytest

from abduct import AbductError, DataError
from abduct_regions.feature_files import FeatureFile, image_id, write_tsv_row
from abduct_regions.positions import box_positions, normalise_boxes

BOXES = np.array([[0, 0, 50, 20], [10, 5, 100, 40]], dtype=np.float32)
FEATS = np.arange(2 * 6, dtype=np.float32).reshape(2, 6)


def test_positions_by_hand() -> None:
    norm = normalise_boxes(np.array([[10, 5, 60, 45], [-5, 0, 120, 50]]), 100, 50)
    np.testing.assert_allclose(norm, [[0.1, 0.1, 0.6, 0.9], [0.0, 0.0, 1.0, 1.0]])
    np.testing.assert_allclose(box_positions(norm, "lxmert"), norm)
    np.testing.assert_allclose(box_positions(norm[:1], "uniter"), [[0.1, 0.1, 0.6, 0.9, 0.5, 0.8, 0.4]], rtol=1e-6)


def test_image_id_is_the_file_stem() -> None:
    assert image_id("/data/VG_100K/2370338.jpg") == "2370338"


def write_all_layouts(tmp_path: Path) -> list[Path]:
    tsv = tmp_path / "feats.tsv"
    tsv.write_text(write_tsv_row("img1", 100, 40, BOXES, FEATS))
    lxmert_tsv = tmp_path / "lxmert.tsv"  # img_id, img_h, img_w, objects..., num_boxes, boxes, features
    b64 = [base64.b64encode(a.tobytes()).decode() for a in (BOXES, FEATS)]
    lxmert_tsv.write_text("\t".join(["img1", "40", "100", "x", "x", "x", "x", "2", *b64]) + "\n")
    h5 = tmp_path / "feats.h5"
    with h5py.File(h5, "w") as handle:
        group = handle.create_group("img1")
        group["boxes"], group["features"] = BOXES, FEATS
        group.attrs["image_w"], group.attrs["image_h"] = 100, 40
    npz = tmp_path / "npz"
    npz.mkdir()
    np.savez(npz / "img1.npz", boxes=BOXES, features=FEATS, image_w=100, image_h=40)
    return [tsv, lxmert_tsv, h5, npz]


def test_every_layout_reads_the_same(tmp_path: Path) -> None:
    for path in write_all_layouts(tmp_path):
        got = FeatureFile(path, dim=6).get("img1")
        np.testing.assert_array_equal(got.boxes, BOXES)
        np.testing.assert_array_equal(got.features, FEATS)
        assert (got.width, got.height) == (100, 40), path


def test_missing_image_and_wrong_dimension_name_file_and_image(tmp_path: Path) -> None:
    for path in write_all_layouts(tmp_path):
        with pytest.raises(DataError, match="image img9") as missing:
            FeatureFile(path, dim=6).get("img9")
        assert str(path) in str(missing.value) and "\n" not in str(missing.value)
        with pytest.raises(DataError, match=r"image img1.*6-d, the model takes 2048-d"):
            FeatureFile(path, dim=2048).get("img1")


def test_broken_tsv_rows(tmp_path: Path) -> None:
    path = tmp_path / "bad.tsv"
    row = write_tsv_row("img1", 100, 40, BOXES, FEATS).split("\t")
    path.write_text("\t".join([*row[:3], "3", *row[4:]]))
    with pytest.raises(DataError, match="field 'boxes'.*num_boxes 3"):
        FeatureFile(path).get("img1")
    path.write_text("\t".join([*row[:5], "not base64!"]) + "\n")
    with pytest.raises(DataError, match="field 'features'.*base64"):
        FeatureFile(path).get("img1")
    path.write_text("img1\t1\t2\n")
    with pytest.raises(DataError, match="line 1.*3 tab-separated fields"):
        FeatureFile(path).get("img1")
    with pytest.raises(AbductError, match="does not exist"):
        FeatureFile(tmp_path / "absent.tsv")


def _h5(path: Path, fill: object) -> Path:
    with h5py.File(path, "w") as handle:
        fill(handle)  # type: ignore[operator]
    return path


def _group(handle: h5py.File, **attrs: object) -> h5py.Group:
    group = handle.create_group("img1")
    group["boxes"], group["features"] = BOXES, FEATS
    group.attrs.update(attrs)
    return group


def test_hostile_feature_files_are_one_line_errors_naming_file_and_field(tmp_path: Path) -> None:
    bad_utf8 = tmp_path / "latin1.tsv"
    bad_utf8.write_bytes(b"img\xe9\t1\t2\t3\t4\t5\n")
    npz = tmp_path / "npz"
    npz.mkdir()
    np.savez(npz / "img1.npz", boxes=BOXES, features=FEATS, image_w=np.nan, image_h=40)
    text_boxes = tmp_path / "npz_text"
    text_boxes.mkdir()
    np.savez(text_boxes / "img1.npz", boxes=np.array([["a", "b", "c", "d"]] * 2), features=FEATS)
    cases = [
        (bad_utf8, "not UTF-8"),
        (npz, "field 'image_w'"),
        (text_boxes, "field 'boxes'"),
        (_h5(tmp_path / "dataset.h5", lambda h: h.create_dataset("img1", data=FEATS)), "is a dataset"),
        (_h5(tmp_path / "strings.h5", lambda h: h.create_group("img1").update(
            boxes=np.array([b"a", b"b"]), features=FEATS)), "field 'boxes'"),
        (_h5(tmp_path / "size.h5", lambda h: _group(h, image_w="wide", image_h=40)), "field 'image_w'"),
    ]
    for path, needle in cases:
        with pytest.raises(AbductError, match=needle) as caught:
            FeatureFile(path).get("img1")
        message = str(caught.value)
        assert "\n" not in message and str(path).split("/")[-1] in message, message


@pytest.mark.parametrize(("text", "needle"), [
    ('{"size": "600"}', "field 'size'"), ('{"max_text": 0}', "field 'max_text'"), ('"size"', "a JSON str"),
    ('{"grid": 1e400}', "beyond the range"),
])
def test_checkpoint_region_settings_are_checked_before_use(tmp_path: Path, text: str, needle: str) -> None:
    from abduct_regions.scoring import SETTINGS_FILE, InputSettings

    (tmp_path / SETTINGS_FILE).write_text(text)
    with pytest.raises(AbductError, match=needle) as caught:
        InputSettings.load(tmp_path, InputSettings())
    assert SETTINGS_FILE in str(caught.value) and "\n" not in str(caught.value)
