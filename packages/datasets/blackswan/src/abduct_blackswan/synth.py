"""A synthetic BlackSwan corpus in the released layout: ``OUT/MCQ``, ``OUT/YN`` and ``OUT/Gen``,
each with ``BlackSwanSuite_<V>_Val.jsonl`` and ``BlackSwanSuite_<V>_Test.jsonl`` (labels left
out) at its root and the clips its records name (H.264 mp4, written with PyAV).

Each video is three clips of one second (4 frames of 48x48): a plain ball rolls in (pre-event),
a splash of one colour hits it (the event), and the ball rolls on (post-event). How much of the
colour the ball keeps is the video's difficulty: all of it (easy), a spot (medium), none (hard).
Every question's right answer names the splash's colour, and the options differ only in the
colour they name, so the text alone tells nothing (the text-only row is at chance), while a
model that reads the clips it is shown can tell: a Reporter sees the splash itself, a Detective
only what the ball keeps afterwards (so hard Detective questions are at chance for it too).

The release's quirks are kept: several questions per video (Detective 1, 2 or 9 MCQs, Reporter
1 or 3), videos with no MCQ at all (they still have Y/N and Gen questions), empty clip names,
integer ``q_id`` in MCQ and Gen and numeric strings in Y/N, ids that restart in the test
files, difficulty easy/medium/hard per video. The Y/N files use the construction code's own
field names (``def_id``, ``exp``, ``def_label``, ``def_task`` as 1/2), and their Reporter
questions name the whole video (``video_path``) instead of the three clips; the Gen files have
``gt_ref_ans`` lists, ``preevent_file_name`` and ``postevent_file_name`` (empty for Forecaster).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np

from abduct.kit import atomic_write_text, building_folder
from abduct_blackswan.colours import PALETTE

SIZE = 48  # frame side in pixels (even: yuv420p)
FPS = 4.0
FRAMES = 4  # per clip
BACKGROUND = 110
BALL = 200
DEFAULT_VIDEOS = 16  # per split
LEVELS = ("easy", "medium", "hard")
KEPT_RADIUS = {"easy": 9, "medium": 6, "hard": 0}  # how much colour the ball keeps after the splash
MCQ_COUNTS = (0, 1, 2, 1, 2, 3)  # invalidated hypotheses per video, in turn: 0 gives no MCQ, 3 gives 9 Detective MCQs
DETECTIVE = ("A can of {c} paint tipped over onto the ball.", "Someone threw {c} paint at the ball.",
             "The ball rolled through a puddle of {c} paint.")
REPORTER = ("The ball was splashed with {c} paint and rolled on.", "{C} paint hit the ball as it rolled past.",
            "A burst of {c} paint covered the ball for a moment.")
HYPOTHESIS = "The ball got splashed with {c} paint."
QUESTIONS = {"Detective": "What most likely happened in the hidden middle of the video?",
             "Reporter": "What happened in the video?"}


def _disc(cx: float, cy: float, radius: float) -> np.ndarray:
    yy, xx = np.mgrid[0:SIZE, 0:SIZE].astype(np.float64)
    inside: np.ndarray = (xx - cx) ** 2 + (yy - cy) ** 2 <= radius * radius
    return inside


def render(part: str, colour: str, level: str, rng: np.random.Generator) -> np.ndarray:
    """``[FRAMES, SIZE, SIZE, 3]`` uint8 frames of one clip: ``pre``, ``event`` or ``post``."""
    rgb = np.array(PALETTE[colour], dtype=np.float64)
    start = {"pre": 8.0, "event": 20.0, "post": 28.0}[part]
    frames = []
    for f in range(FRAMES):
        cx, cy = start + 3.0 * f, SIZE / 2
        image = np.full((SIZE, SIZE, 3), float(BACKGROUND)) + rng.normal(0, 3, size=(SIZE, SIZE, 3))
        image[_disc(cx, cy, 9)] = BALL
        if part == "event":
            image[_disc(cx, cy, 14 + 2 * f)] = rgb
        elif part == "post" and KEPT_RADIUS[level]:
            image[_disc(cx, cy, KEPT_RADIUS[level])] = rgb
        frames.append(image.clip(0, 255).astype(np.uint8))
    return np.stack(frames)


def _options(rng: np.random.Generator, colour: str, others: tuple[str, str], template: str) -> tuple[list[str], int]:
    """Three options of one template, shuffled; the index of ``colour``'s."""
    colours = [colour, *others]
    order = rng.permutation(3)
    shown = [colours[i] for i in order]
    return [template.format(c=c, C=c.capitalize()) for c in shown], int(np.flatnonzero(order == 0)[0])


def _mcq(rng: np.random.Generator, video: dict[str, Any], count: int, labelled: bool) -> list[dict[str, Any]]:
    colour, others = video["colour"], [c for c in PALETTE if c != video["colour"]]
    pairs = [(others[i], others[j]) for i in range(len(others)) for j in range(i + 1, len(others))]
    detective = {0: 0, 1: 1, 2: 2, 3: 9}[count]
    reporter = 0 if count == 0 else (1 if count == 1 else 3)
    records = []
    for task, asked, templates in (("Detective", detective, DETECTIVE), ("Reporter", reporter, REPORTER)):
        for k in range(asked):
            options, gold = _options(rng, colour, pairs[(k + count) % len(pairs)], templates[k % len(templates)])
            clips = video["clips"]
            record: dict[str, Any] = {
                "q_id": 0, "task": task, "difficulty": video["level"], "default_question": QUESTIONS[task],
                "mcq_options": options, "preevent_file_name": clips["pre"],
                "event_file_name": clips["event"] if task == "Reporter" else "",  # the Detective's middle stays hidden
                "postevent_file_name": clips["post"]}
            if labelled:
                record["mcq_gt_option"] = gold
            records.append(record)
    return records


def _yn(rng: np.random.Generator, video: dict[str, Any], labelled: bool) -> list[dict[str, Any]]:
    colour, clips = video["colour"], video["clips"]
    records = []
    for task in ("Detective", "Reporter"):
        wrong = str(rng.choice([c for c in PALETTE if c != colour]))
        for said in ([colour, wrong] if rng.random() < 0.5 else [wrong, colour]):
            record: dict[str, Any] = {"def_id": "0", "def_task": 1 if task == "Detective" else 2,
                                      "exp": HYPOTHESIS.format(c=said), "difficulty": video["level"]}
            if task == "Detective":
                record.update(preevent_file_name=clips["pre"], postevent_file_name=clips["post"])
            else:
                record.update(preevent_file_name="", postevent_file_name="", video_path=clips["whole"])
            if labelled:
                record["def_label"] = "yes" if said == colour else "no"
            records.append(record)
    return records


def _gen(video: dict[str, Any], labelled: bool) -> list[dict[str, Any]]:
    colour, clips = video["colour"], video["clips"]
    references = {
        "Forecaster": ["The ball will keep rolling.", "The ball will stop in the middle.",
                       f"The ball will get splashed with {colour} paint."],
        "Detective": [HYPOTHESIS.format(c=colour), f"Someone threw {colour} paint at the ball.",
                      "The ball rolled on."],
        "Reporter": [f"The ball was splashed with {colour} paint and rolled on."],
    }
    records = []
    for task, refs in references.items():
        record: dict[str, Any] = {"q_id": 0, "task": task, "preevent_file_name": clips["pre"],
                                  "postevent_file_name": "" if task == "Forecaster" else clips["post"]}
        if task == "Reporter":
            record["event_file_name"] = clips["event"]
        if labelled:
            record["gt_ref_ans"] = refs
        records.append(record)
    return records


def _write_clips(repo: Path, split: str, n: int, video: dict[str, Any], rng: np.random.Generator) -> None:
    from abduct_video import write_video  # PyAV loads here, not at import

    folder, index = f"synthetic_{split}_v{n // 8 + 1}", n % 8
    parts = {part: render(part, video["colour"], video["level"], rng) for part in ("pre", "event", "post")}
    names = {"pre": f"{folder}/{index}_A_preevent.mp4", "event": f"{folder}/{index}_B_event.mp4",
             "post": f"{folder}/{index}_C_postevent.mp4", "whole": f"{folder}_merged/{index}_E_merged.mp4"}
    for part, frames in parts.items():
        write_video(repo / names[part], frames, FPS)
    write_video(repo / names["whole"], np.concatenate([parts["pre"], parts["event"], parts["post"]]), FPS)
    video["clips"] = names


def _jsonl(path: Path, records: list[dict[str, Any]], id_field: str, as_text: bool) -> int:
    for q_id, record in enumerate(records):
        record[id_field] = str(q_id) if as_text else q_id
    atomic_write_text(path, "".join(json.dumps(r) + "\n" for r in records))
    return len(records)


CARD = ("# BlackSwanSuite-{variant} (synthetic)\n\nWritten by `abduct blackswan synth`: the release's layout with "
        "synthetic videos of a ball and a splash of colour. Not the BlackSwan data.\n")


def synthesize(out_dir: Path, videos: int = DEFAULT_VIDEOS, seed: int = 0) -> str:
    """Write the corpus into ``out_dir`` (``MCQ/``, ``YN/``, ``Gen/``); a one-line summary."""
    with building_folder(Path(out_dir)) as out:  # the corpus appears whole or not at all
        rng = np.random.default_rng(seed)
        mcq_dir, yn_dir, gen_dir = (out / v for v in ("MCQ", "YN", "Gen"))
        counts: dict[str, list[int]] = {"MCQ": [], "YN": [], "Gen": []}
        for split, tag in (("validation", "Val"), ("test", "Test")):
            labelled = split == "validation"
            mcq: list[dict[str, Any]] = []
            yn: list[dict[str, Any]] = []
            gen: list[dict[str, Any]] = []
            levels = [LEVELS[n % 3] for n in range(videos)]
            rng.shuffle(levels)
            for n in range(videos):
                video: dict[str, Any] = {"colour": str(rng.choice(list(PALETTE))), "level": levels[n]}
                _write_clips(mcq_dir, split, n, video, rng)
                mcq += _mcq(rng, video, MCQ_COUNTS[n % len(MCQ_COUNTS)], labelled)
                yn += _yn(rng, video, labelled)
                gen += _gen(video, labelled)
                for repo in (yn_dir, gen_dir):  # each repo holds its own copy of the clips, as on the Hub
                    for name in video["clips"].values():
                        (repo / name).parent.mkdir(parents=True, exist_ok=True)
                        shutil.copyfile(mcq_dir / name, repo / name)
            counts["MCQ"].append(_jsonl(mcq_dir / f"BlackSwanSuite_MCQ_{tag}.jsonl", mcq, "q_id", False))
            counts["YN"].append(_jsonl(yn_dir / f"BlackSwanSuite_YN_{tag}.jsonl", yn, "def_id", True))
            counts["Gen"].append(_jsonl(gen_dir / f"BlackSwanSuite_Gen_{tag}.jsonl", gen, "q_id", False))
        for variant, repo in (("MCQ", mcq_dir), ("YN", yn_dir), ("Gen", gen_dir)):
            atomic_write_text(repo / "README.md", CARD.format(variant=variant))
        # the mark by which pages tell a synthetic corpus's runs from the benchmark's (never beside its published rows)
        atomic_write_text(out / "SYNTHETIC", f"abduct synthetic BlackSwan corpus: videos={videos} seed={seed}\n")
        shown = ", ".join(f"{v} {c[0]}/{c[1]}" for v, c in counts.items())
        return f"{videos} videos per split; questions (validation/test): {shown}"
