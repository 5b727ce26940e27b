"""A synthetic VAR corpus: short mp4 videos of a coloured shape and annotation files in the
release's exact schema (``var_{train,val,test}_v1.0.json``, videos in ``videos/``).

Each example is a story of 3 or 4 events, two seconds each, in one video: a {colour} {shape}
appears at the left (or the top), moves to the right (or down), stops there, and (in stories of
four) fades away. Every event's content is visible in its frames (colour, shape, position,
motion, brightness), and the masked hypothesis follows from its premises: the neighbouring
events show the shape, its colour and the direction, and the slot says which step is missing.
A model that reads the premises can get it right; the random and retrieval rows cannot do so
reliably, which the demo shows.

The release's quirks are reproduced on a few examples: leading spaces, a non-ASCII character,
an end past the video's duration, overlapping events, a chain over two videos, and two
examples sharing one chain that differ only in ``hypothesis``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from abduct.kit import atomic_write_text, building_folder

COLOURS: dict[str, tuple[int, int, int]] = {
    "red": (220, 40, 40), "green": (40, 190, 60), "blue": (50, 80, 230), "yellow": (235, 215, 40),
    "purple": (150, 60, 190),
}
SHAPES = ("square", "circle", "triangle")
DIRECTIONS = {"right": ("left", "right"), "down": ("top", "bottom")}
DEFAULT_EXAMPLES = 96
SIZE = 64  # frame side in pixels (even: yuv420p)
FPS = 4.0
EVENT_SECONDS = 2.0
SHAPE_RADIUS = 9


def sentences(colour: str, shape: str, direction: str, events: int) -> list[str]:
    start, end = DIRECTIONS[direction]
    told = [f"A {colour} {shape} appears at the {start}.", f"The {colour} {shape} moves to the {end}.",
            f"The {colour} {shape} stops at the {end}.", f"The {colour} {shape} fades away."]
    return told[:events]


def _mask(shape: str, cx: float, cy: float) -> np.ndarray:
    yy, xx = np.mgrid[0:SIZE, 0:SIZE].astype(np.float64)
    r = SHAPE_RADIUS
    inside: np.ndarray
    if shape == "square":
        inside = (np.abs(xx - cx) <= r) & (np.abs(yy - cy) <= r)
    elif shape == "circle":
        inside = (xx - cx) ** 2 + (yy - cy) ** 2 <= r * r
    else:  # triangle, apex up
        inside = (yy - cy <= r) & (yy - cy >= -r) & (np.abs(xx - cx) <= (yy - cy + r) / 2)
    return inside


def _position(direction: str, t: float) -> tuple[float, float]:
    """Centre at progress ``t`` in [0, 1] from the start side to the end side."""
    low, high = SHAPE_RADIUS + 4, SIZE - SHAPE_RADIUS - 4
    along = low + (high - low) * t
    return (along, SIZE / 2) if direction == "right" else (SIZE / 2, along)


def render_story(rng: np.random.Generator, colour: str, shape: str, direction: str, events: int) -> np.ndarray:
    """``[T, SIZE, SIZE, 3]`` uint8 frames: ``events`` two-second events one after another."""
    per_event = int(EVENT_SECONDS * FPS)
    frames = []
    rgb = np.array(COLOURS[colour], dtype=np.float64)
    for k in range(events):
        for f in range(per_event):
            t = f / (per_event - 1)
            progress = {0: 0.0, 1: t, 2: 1.0, 3: 1.0}[k]
            strength = 1.0 - 0.8 * t if k == 3 else 1.0
            image = np.full((SIZE, SIZE, 3), 30.0) + rng.normal(0, 4, size=(SIZE, SIZE, 3))
            image[_mask(shape, *_position(direction, progress))] = 30.0 + (rgb - 30.0) * strength
            frames.append(image.clip(0, 255).astype(np.uint8))
    return np.stack(frames)


def _event(video_id: str, k: int, total: int, sentence: str, duration: float, offset: int = 0) -> dict[str, Any]:
    start, end = (k - offset) * EVENT_SECONDS, (k - offset + 1) * EVENT_SECONDS
    return {"video_id": video_id, "timestamp": [round(start, 2), round(end, 2)], "clip_idx": k, "clip_tot": total,
            "sentence": sentence, "duration": duration}


def _write(path: Path, frames: np.ndarray) -> None:
    from abduct_video import write_video  # PyAV loads here, not at import

    write_video(path, frames, FPS)


def synthesize(out_dir: Path, examples: int = DEFAULT_EXAMPLES, seed: int = 0) -> str:
    """Write the corpus; returns a one-line summary."""
    with building_folder(Path(out_dir)) as out:  # the corpus appears whole or not at all
        videos = out / "videos"
        videos.mkdir(parents=True, exist_ok=True)
        rng = np.random.default_rng(seed)
        sizes = {"train": examples, "val": max(4, examples // 4), "test": max(4, examples // 4)}
        written = 0
        for split, count in sizes.items():
            annotations: dict[str, Any] = {}
            for n in range(count):
                colour = str(rng.choice(list(COLOURS)))
                shape = str(rng.choice(SHAPES))
                direction = str(rng.choice(list(DIRECTIONS)))
                total = int(rng.integers(3, 5))
                two_videos = split != "train" and n == 1  # a chain over two videos, in val and test
                total = 4 if two_videos else total
                told = sentences(colour, shape, direction, total)
                video_id = f"{split}{n:04d}"
                frames = render_story(rng, colour, shape, direction, total)
                duration = round(len(frames) / FPS, 2)
                if two_videos:
                    half = 2 * int(EVENT_SECONDS * FPS)
                    _write(videos / f"{video_id}a.mp4", frames[:half])
                    _write(videos / f"{video_id}b.mp4", frames[half:])
                    events = [_event(f"{video_id}a", k, 2, told[k], half / FPS) for k in range(2)]
                    events += [_event(f"{video_id}b", k, 2, told[k], (len(frames) - half) / FPS, offset=2)
                               for k in range(2, 4)]
                    for k in (2, 3):
                        events[k]["clip_idx"] = k - 2
                    written += 2
                else:
                    _write(videos / f"{video_id}.mp4", frames)
                    events = [_event(video_id, k, total, told[k], duration) for k in range(total)]
                    written += 1
                if n % 5 == 0:  # the release's leading spaces
                    for event in events[1:]:
                        event["sentence"] = " " + event["sentence"]
                if n == 2:  # overlapping events, and an end past the video's duration
                    events[1]["timestamp"][0] = round(events[1]["timestamp"][0] - 0.5, 2)
                    events[-1]["timestamp"][1] = round(events[-1]["timestamp"][1] + 0.75, 2)
                if n == 3:  # a non-ASCII character, which the scorer turns into a space
                    events[0]["sentence"] = events[0]["sentence"].replace("appears", "appears \u2014 suddenly \u2014")
                hypothesis = int(rng.integers(0, total))
                example_id = f"{split}_{n:04d}"
                annotations[example_id] = {"events": events, "hypothesis": hypothesis, "split": split}
                if n == 4:  # another example with the same chain and another hypothesis
                    annotations[f"{example_id}_b"] = {"events": events, "hypothesis": (hypothesis + 1) % total,
                                                      "split": split}
            atomic_write_text(out / f"var_{split}_v1.0.json", json.dumps(annotations, indent=1) + "\n")
        # a "SYNTHETIC" file marks the corpus as made, not released: abduct compare never draws it beside paper rows
        atomic_write_text(out / "SYNTHETIC", f"abduct synthetic VAR corpus: examples={examples} seed={seed}\n")
        return (f"{sum(sizes.values())} story examples (train {sizes['train']}, val {sizes['val']}, "
                f"test {sizes['test']}, plus one shared chain per split), {written} videos")
