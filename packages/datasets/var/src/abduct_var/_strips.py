"""Frame strips for ``samples.html``: a few frames of each event's span, side by side, as one JPEG.

A strip is kept in a folder (abduct's cache by default) under a key of the video's absolute
path, modification time and size, the span and how strips are drawn, so later runs on the
same videos reuse it and an edited video gets a new one; a kept strip that is damaged (cut
short, emptied, garbled, a directory in its place) is said in one warning and drawn again. Strips are presentation only: a
missing, empty or undecodable video gets none (``None``), never an error; only the first
``MAX_STRIPS`` distinct events are drawn, so a large run stays bounded in time and disk.
Frames come from ``abduct_video.FrameSampler`` in worker processes under a decode time limit.

What ``samples.html`` shows is found by the task's ``view`` in this process's *page folder*
(``page_folder``: a temporary folder removed when the process exits, which the page's writer
links or copies from): the frames stage (``draw_for_page``, a Custom step of the task's plan)
draws each strip into the run's cache (or straight into the page folder under ``--no-cache``),
links it there, and leaves a ``.none`` mark for a video that gives no frames. Both are named by
the strip's key, so a strip drawn for another run of this process is as good, and the view
needs nothing from the run but the event (``shown``).
"""

from __future__ import annotations

import functools
import hashlib
import io
import os
import re
import secrets
import shutil
import tempfile
import warnings
from collections.abc import Sequence
from pathlib import Path
from stat import S_ISREG
from typing import Any

import numpy as np

from abduct.kit import atomic_write_bytes
from abduct.kit.cache import whole_jpeg

Event = tuple[str, tuple[float, float]]  # (video path, span in seconds)

STRIP_FRAMES = 4
STRIP_HEIGHT = 96
MAX_STRIPS = 2_000
DECODE_TIMEOUT = 30.0  # a picture is not worth the 120 s a model waits for a video
VIDEOS_PER_CALL = 16  # decoded side by side; a failing one costs only its call a retry video by video
QUALITY = 80
_RECIPE = f"v1 {STRIP_FRAMES}x{STRIP_HEIGHT} q{QUALITY}"
# names no other process's page folder: the frames stage's units carry it, so that a resumed
# run draws (or links from the cache) again what a killed process had put in its own folder
PROCESS = secrets.token_hex(6)


def strip_key(path: str, span: tuple[float, float]) -> str | None:
    """The strip's file name stem, or None for a video that is missing, empty or not a regular file."""
    try:
        stat = os.stat(path)
    except OSError:
        return None
    if not S_ISREG(stat.st_mode) or stat.st_size == 0:
        return None
    text = f"{os.path.abspath(path)}\0{stat.st_mtime_ns}\0{stat.st_size}\0{span[0]!r}\0{span[1]!r}\0{_RECIPE}"
    # the video and span first: the page shows this name under the strip
    readable = re.sub(r"[^A-Za-z0-9_.-]", "_", Path(path).stem)[:40]
    return f"{readable}_{span[0]:g}-{span[1]:g}s_{hashlib.sha1(text.encode()).hexdigest()[:16]}"


def frame_strips(events: Sequence[Event], folder: Path) -> dict[Event, Path | None]:
    """The strip of each of the first ``MAX_STRIPS`` distinct events (None where its video gives
    none); events past the cap are left out of the answer."""
    wanted = list(dict.fromkeys(events))[:MAX_STRIPS]
    found: dict[Event, Path | None] = {}
    todo: dict[str, list[tuple[tuple[float, float], Path]]] = {}
    for path, span in wanted:
        key = strip_key(path, span)
        target = folder / f"{key}.jpg"
        found[path, span] = target if key is not None and whole_jpeg(target) else None  # a damaged one drawn again
        if key is not None and found[path, span] is None:
            todo.setdefault(path, []).append((span, target))
    if not todo:
        return found
    try:
        from abduct_video import FrameSampler, SamplingSettings
    except ImportError:  # abduct-var without its models extra: no frames, the page says so
        return found
    settings = SamplingSettings(mode="uniform", frames_per_span=STRIP_FRAMES, size=STRIP_HEIGHT)
    videos = list(todo)
    # the model's own decoding already warned about clipped spans and decoder fallbacks
    with warnings.catch_warnings(), FrameSampler(settings, backend="pyav", timeout=DECODE_TIMEOUT) as sampler:
        warnings.simplefilter("ignore")
        for start in range(0, len(videos), VIDEOS_PER_CALL):
            batch = videos[start:start + VIDEOS_PER_CALL]
            for path, stacks in _decoded(sampler, [(p, [span for span, _ in todo[p]]) for p in batch]):
                for (span, target), frames in zip(todo[path], stacks):
                    found[path, span] = _write(frames, target)
    return found


def _decoded(sampler: Any, requests: list[tuple[str, list[tuple[float, float]]]]) -> list[tuple[str, list[np.ndarray]]]:
    """Each readable video's frame stacks: the batch at once, or video by video when one fails."""
    try:
        return list(zip([p for p, _ in requests], sampler.sample_many(requests)))
    except Exception:  # noqa: BLE001 - a strip is presentation only: a bad video must not cost the run
        pass
    out = []
    for path, spans in requests:
        try:
            out.append((path, sampler.sample(path, spans)))
        except Exception:  # noqa: BLE001 - as above: that video gets no strip
            continue
    return out


def _write(frames: np.ndarray, target: Path) -> Path | None:
    """Frames side by side, each ``STRIP_HEIGHT`` px high, as a JPEG written whole (None if it cannot be)."""
    from PIL import Image

    if len(frames) == 0:
        return None
    tiles = [Image.fromarray(f) for f in frames]
    tiles = [t if t.height == STRIP_HEIGHT else t.resize((max(1, round(t.width * STRIP_HEIGHT / t.height)), STRIP_HEIGHT),
                                                        Image.Resampling.BILINEAR) for t in tiles]
    strip = Image.new("RGB", (sum(t.width for t in tiles), STRIP_HEIGHT))
    left = 0
    for tile in tiles:
        strip.paste(tile.convert("RGB"), (left, 0))
        left += tile.width
    buffer = io.BytesIO()
    strip.save(buffer, "JPEG", quality=QUALITY)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(target, buffer.getvalue())
    except OSError:
        return None
    return target


@functools.cache
def _page() -> tempfile.TemporaryDirectory[str]:
    return tempfile.TemporaryDirectory(prefix="abduct-var-frames-")


def page_folder() -> Path:
    """This process's folder of the strips the sample page shows (removed when it exits)."""
    return Path(_page().name)


def _link_or_copy(source: Path, target: Path) -> None:
    try:
        os.link(source, target)
    except FileExistsError:  # linked for an earlier run of this process: the same key, the same strip
        pass
    except OSError:  # another file system, or links not allowed there
        shutil.copyfile(source, target)


def draw_for_page(events: Sequence[Event], cache: Path | None) -> int:
    """Draw the strips of ``events`` (found in ``cache`` when there, kept there when drawn) and
    put them in the page folder, a ``.none`` mark for each event whose video gives none; how
    many strips there are."""
    page = page_folder()
    made = frame_strips(events, cache if cache is not None else page)
    for (path, span), strip in made.items():
        key = strip_key(path, span)
        if key is None:  # missing, empty or not a regular file: ``shown`` sees that itself
            continue
        if strip is None:
            (page / f"{key}.none").touch()
        elif strip.parent != page:
            _link_or_copy(strip, page / f"{key}.jpg")
    return sum(strip is not None for strip in made.values())


def shown(path: str, span: tuple[float, float]) -> tuple[str, Path | None] | None:
    """What the page shows of an event: ``(video, strip)``; ``(video, None)`` when the video
    gives no frames; None when no strip was drawn for it (past ``MAX_STRIPS``, or not in this
    process)."""
    key = strip_key(path, span)
    if key is None:
        return (path, None)
    strip = page_folder() / f"{key}.jpg"
    if strip.is_file():
        return (path, strip)
    if (page_folder() / f"{key}.none").is_file():
        return (path, None)
    return None
