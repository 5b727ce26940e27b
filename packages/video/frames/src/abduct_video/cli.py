"""``abduct video probe`` and ``abduct video frames``: look at videos the way the sampler sees them."""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path
from typing import TYPE_CHECKING

import click

from abduct.kit import POSITIVE, require_new_or_regular

FRAMES = click.IntRange(1, 1000)  # a sheet row of 10**8 frames decodes for ever

if TYPE_CHECKING:
    from abduct_video._probe import VideoInfo


def _parse_span(text: str) -> tuple[float, float]:
    try:
        start, end = (float(part) for part in text.split(","))
    except ValueError:
        raise click.BadParameter(f"{text!r}: expected START,END in seconds, e.g. 1.5,4") from None
    if not 0 <= start <= end < math.inf:  # "inf,inf" and 1e400 are no time in a video
        raise click.BadParameter(f"{text!r}: need 0 <= START <= END, both finite")
    return start, end


@click.command("probe")
@click.argument("videos", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="One JSON object per video.")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=60.0, show_default=True,
              help="Seconds before a stuck probe counts as a damaged file.")
def probe(videos: tuple[Path, ...], as_json: bool, timeout: float) -> None:
    """Frames, duration, average rate and size of each VIDEO, from its packets."""
    from abduct_video._sampler import FrameSampler

    with FrameSampler(backend="pyav", workers=1, timeout=timeout) as sampler:
        for video in videos:
            _print_probe(video, sampler.probe(video), as_json)


def _print_probe(video: Path, info: VideoInfo, as_json: bool) -> None:
    facts = {"video": str(video), "frames": info.frame_count, "duration": round(info.duration, 4),
             "fps": round(info.frame_count / info.duration, 3) if info.duration else None,
             "width": info.width, "height": info.height}
    click.echo(json.dumps(facts) if as_json else
               f"{video}: {facts['frames']} frames, {facts['duration']} s, {facts['fps']} fps, "
               f"{info.width}x{info.height}")


@click.command("frames")
@click.argument("video", type=click.Path(path_type=Path))
@click.option("--span", "spans", multiple=True, required=True, help="START,END in seconds (repeatable).")
@click.option("--mode", type=click.Choice(["uniform", "rate"]), default="uniform", show_default=True)
@click.option("--frames", "frames_per_span", type=FRAMES, default=8, show_default=True,
              help="Frames per span (uniform mode).")
@click.option("--fps", type=POSITIVE, default=2.0, show_default=True,
              help="Frames per second (rate mode).")
@click.option("--max-frames", type=FRAMES, default=48, show_default=True,
              help="At most this many frames per span (rate mode).")
@click.option("--size", type=click.IntRange(min=2), default=96, show_default=True, help="Shorter side of each frame.")
@click.option("--backend", type=click.Choice(["decord", "pyav"]), default="decord", show_default=True)
@click.option("--timeout", type=POSITIVE, default=120.0, show_default=True,
              help="Seconds before a stuck decode counts as a damaged file.")
@click.option("--out", "out_path", required=True, type=click.Path(path_type=Path), help="Contact sheet (PNG).")
def frames(video: Path, spans: tuple[str, ...], mode: str, frames_per_span: int, fps: float, max_frames: int,
           size: int, backend: str, timeout: float, out_path: Path) -> None:
    """Write the frames the sampler takes from VIDEO's spans as a contact sheet, one row per span."""
    from abduct_video._sampler import FrameSampler
    from abduct_video._settings import SamplingSettings
    from abduct_video.sheet import write_contact_sheet

    require_new_or_regular(out_path, "--out")  # before any decoding
    settings = SamplingSettings(mode="rate" if mode == "rate" else "uniform", frames_per_span=frames_per_span,
                                fps=fps, max_frames_per_span=max_frames, size=size)
    with warnings.catch_warnings(record=True) as caught, \
            FrameSampler(settings, backend=backend, workers=1, timeout=timeout) as sampler:
        warnings.simplefilter("always")
        rows = sampler.sample(video, [_parse_span(s) for s in spans])
    for warning in caught:
        click.echo(f"warning: {warning.message}", err=True)
    write_contact_sheet(out_path, rows)
    click.echo(f"wrote {sum(len(r) for r in rows)} frames of {len(rows)} span(s) to {out_path}")
