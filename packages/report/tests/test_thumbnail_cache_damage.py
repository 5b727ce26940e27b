"""A damaged cached thumbnail (cut short, emptied, another format, garbage, a directory in its
place) is one warning naming it and is made again: what ``samples/`` gets equals a clean run's."""

from __future__ import annotations

import io
import shutil
import warnings
from collections.abc import Callable
from pathlib import Path

import pytest
from PIL import Image

from abduct.kit.cache import CacheWarning
from abduct_report.samples import render_samples
from abduct_testing import make_images


def _png(path: Path) -> None:  # a whole image, in another format than the cache's JPEG
    buffer = io.BytesIO()
    Image.new("RGB", (8, 8)).save(buffer, "PNG")
    path.write_bytes(buffer.getvalue())


def _garbled(path: Path) -> None:  # the JPEG's markers kept, its data between them not a JPEG's
    data = path.read_bytes()
    path.write_bytes(data[:2] + bytes(len(data) - 4) + data[-2:])


def _directory(path: Path) -> None:
    path.unlink()
    path.mkdir()


DAMAGE: dict[str, Callable[[Path], None]] = {
    "truncated": lambda p: p.write_bytes(p.read_bytes()[: p.stat().st_size // 2]),
    "empty": lambda p: p.write_bytes(b""),
    "other format": _png,
    "garbled": _garbled,
    "directory": _directory,
}


@pytest.mark.parametrize("damage", list(DAMAGE))
def test_a_damaged_cached_thumbnail_is_said_once_and_made_again(tmp_path: Path, damage: str) -> None:
    large = make_images(tmp_path / "img", count=1, size=(900, 600))[0]
    cache = tmp_path / "cache"

    def render(out: Path) -> Path:
        out.mkdir()
        _, folder = render_samples("t", [{"id": "a"}], lambda r: {"images": [{"path": str(large)}]}, out,
                                   cache=cache)
        assert folder is not None
        folder.rename(out / "samples")
        [made] = (out / "samples").iterdir()
        return made

    clean = render(tmp_path / "clean").read_bytes()
    [cached] = cache.iterdir()
    data = cached.read_bytes()
    cached.unlink()  # a file of its own: the clean run's samples/ keeps its link
    cached.write_bytes(data)
    DAMAGE[damage](cached)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        again = render(tmp_path / "again")
    said = [str(w.message) for w in caught if issubclass(w.category, CacheWarning)]
    assert len(said) == 1 and str(cached) in said[0], said
    assert again.read_bytes() == clean  # made again, not the damaged file published
    assert cached.is_file() and cached.read_bytes() == clean  # and the cache whole again
    shutil.rmtree(tmp_path / "again")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert render(tmp_path / "again").read_bytes() == clean
