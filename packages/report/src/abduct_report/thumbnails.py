"""The images of ``samples.html``: one file per distinct source image in ``samples/`` beside the page.

A source is known by its absolute path, modification time and size, so a picture that several
samples show (a premise shared by triplets, one image with many clues) costs one file, and a
changed picture a new one. What the folder gets for each source:

- a small original (at most ``SMALL_BYTES``, in a format browsers show) is hard-linked (copied
  across file systems) as it is: decoding and re-encoding it would cost more time than a
  browser saves, and a link no disk;
- any other gets a JPEG thumbnail of at most ``THUMB_SIDE`` px a side: a JPEG is decoded at a
  reduced scale (``draft`` through ``thumbnail``'s ``reducing_gap``) and shrunk with a box
  reduction and a bilinear filter. With a cache directory (the run's, unless ``--no-cache``),
  thumbnails are kept there under the source's key and linked back by later runs, so the
  runs of several models on one dataset decode each picture once;
- past ``MAX_FILES`` distinct sources, or when the file cannot be read, nothing: the page shows
  the original by a path relative to it (bounded time and disk on any run), or says so.

Sources are processed on one thread per CPU: PIL decodes and encodes outside the GIL.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from stat import S_ISREG

from PIL import Image

from abduct.kit.cache import whole_jpeg

THUMB_DIR = "samples"
THUMB_SIDE = 240  # the page shows images at most 240 px: 7-10 KB a photograph, 20,000 in under 200 MB
MAX_FILES = 20_000
SMALL_BYTES = 32_000  # a few thumbnails' worth: linked, it costs no disk and a browser little
BROWSER_SUFFIXES = frozenset({".jpg", ".jpeg", ".png", ".gif", ".webp"})
QUALITY = 75
BATCH = 32
_RECIPE = f"v1 {THUMB_SIDE} q{QUALITY} bilinear"  # in every key: thumbnails made another way never match


def _link_or_copy(source: str | Path, target: Path) -> None:
    try:
        os.link(source, target)
    except OSError:  # another file system, or links not allowed there
        shutil.copyfile(source, target)


def _url_path(path: str) -> str:
    return path.replace(os.sep, "/") if os.sep != "/" else path


class Thumbnails:
    """Source image path -> what the page loads for it (``samples/<key>.jpg``, a relative path to
    the original, or None), written into ``folder`` (a staging folder until published)."""

    def __init__(self, folder: Path, page_dir: Path | None, cache: Path | None = None) -> None:
        self.folder = folder
        self.page_dir = os.path.abspath(page_dir) if page_dir is not None else None
        self.cache = cache
        self.shown: dict[str, str | None] = {}
        self.sizes: dict[str, tuple[int, int]] = {}  # the original's pixels (boxes are measured in them)
        self._todo: dict[str, tuple[str, bool]] = {}  # source -> (file name in the folder, linked as it is)
        self._folders: dict[str, str] = {}  # a source's folder, relative to the page's
        self._files = 0

    def plan(self, paths: Iterable[str]) -> None:
        """Decide, per distinct source, what the folder will hold for it (cheap: one ``stat``)."""
        for path in paths:
            if path in self.shown:
                continue
            try:
                stat = os.stat(path)
            except OSError:
                self.shown[path] = None  # missing: the page shows the path and says so
                continue
            if not S_ISREG(stat.st_mode):  # a FIFO or device would block the writer for ever
                self.shown[path] = None
                continue
            if self._files >= MAX_FILES:
                self.shown[path] = self._relative(path)
                continue
            key = hashlib.sha1(f"{os.path.abspath(path)}\0{stat.st_mtime_ns}\0{stat.st_size}\0{_RECIPE}".encode())
            suffix = os.path.splitext(path)[1].lower()
            small = stat.st_size <= SMALL_BYTES and suffix in BROWSER_SUFFIXES
            name = key.hexdigest()[:24] + (suffix if small else ".jpg")
            self._todo[path] = (name, small)
            self.shown[path] = f"{THUMB_DIR}/{name}"
            self._files += 1

    def _relative(self, path: str) -> str | None:
        """``path`` as the page loads it: relative to the page's folder (``file://`` resolves it).
        String arithmetic on absolute paths, no ``resolve``: a browser resolves ``..`` the same way."""
        if self.page_dir is None:
            return None
        folder, name = os.path.split(os.path.abspath(path))
        if folder not in self._folders:
            try:
                self._folders[folder] = _url_path(os.path.relpath(folder, self.page_dir))
            except ValueError:  # another drive (Windows): an absolute URL
                self._folders[folder] = Path(folder).as_uri()
        return f"{self._folders[folder]}/{name}"

    def shown_path(self, path: str) -> str:
        """What the page calls a source: its path relative to the page's folder (it moves with the
        run folder when the data does), else its last two parts; never a path of this machine."""
        if not path:
            return ""
        relative = self._relative(path)
        return relative if relative is not None and "://" not in relative else "/".join(Path(path).parts[-2:])

    def make_all(self, workers: int | None = None) -> None:
        """Write every planned file, in parallel (PIL releases the GIL while it decodes and
        encodes), in batches: a link takes less time than handing one file to a thread."""
        todo = list(self._todo)
        batches = [todo[i:i + BATCH] for i in range(0, len(todo), BATCH)]
        with ThreadPoolExecutor(workers or os.cpu_count() or 1) as pool:
            list(pool.map(self._make_batch, batches))

    def _make_batch(self, sources: list[str]) -> None:
        for source in sources:
            self._make(source)

    def size(self, path: str) -> tuple[int, int] | None:
        """The original's size in pixels, read from its header when no thumbnail recorded it."""
        if path not in self.sizes and self.shown.get(path) is not None:
            try:
                with Image.open(path) as img:
                    self.sizes[path] = img.size
            except (OSError, ValueError, Image.DecompressionBombError):
                return None
        return self.sizes.get(path)

    def _make(self, source: str) -> None:
        name, small = self._todo[source]
        target = self.folder / name
        try:
            if small:
                _link_or_copy(source, target)
                return
            cached = self.cache / name if self.cache is not None else None
            if cached is not None and whole_jpeg(cached):
                _link_or_copy(cached, target)
                return
            with Image.open(source) as img:
                self.sizes[source] = img.size
                img.thumbnail((THUMB_SIDE, THUMB_SIDE), Image.Resampling.BILINEAR, reducing_gap=1.0)
                img.convert("RGB").save(target, "JPEG", quality=QUALITY)
            if cached is not None:
                self._keep(target, cached)
        except (OSError, ValueError, Image.DecompressionBombError):
            self.shown[source] = None  # unreadable: the page shows the path and says so
            target.unlink(missing_ok=True)

    @staticmethod
    def _keep(made: Path, cached: Path) -> None:
        """Best effort, and never a half-written entry: a cache that cannot be written only
        costs a later run the decoding."""
        try:
            cached.parent.mkdir(parents=True, exist_ok=True)
            try:
                os.link(made, cached)
            except FileExistsError:
                pass
            except OSError:  # another file system: a copy, renamed into place whole
                partial = cached.with_name(f".{cached.name}.{os.getpid()}.tmp")
                shutil.copyfile(made, partial)
                os.replace(partial, cached)
        except OSError:
            pass
