"""Image checks a dataset's ``check`` command reports (drawing regions is abduct_modelkit's)."""

from __future__ import annotations

from pathlib import Path

from PIL import Image

from abduct.kit import image_problem


def test_image_problem_names_missing_unreadable_and_wrong_size(tmp_path: Path) -> None:
    good = tmp_path / "good.png"
    Image.new("RGB", (30, 20), (10, 20, 30)).save(good)
    (tmp_path / "bad.png").write_bytes(b"not an image")
    assert image_problem(good) is None and image_problem(good, (30, 20)) is None
    assert image_problem(good, (20, 30)) == f"image {good} is 30x20, the annotation says 20x30"
    assert image_problem(tmp_path / "none.png") == f"image missing: {tmp_path / 'none.png'}"
    assert (image_problem(tmp_path / "bad.png") or "").startswith(f"image unreadable: {tmp_path / 'bad.png'} (")
