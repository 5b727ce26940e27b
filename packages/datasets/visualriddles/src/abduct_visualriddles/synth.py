"""A synthetic Visual Riddles release, in the Hub repo's layout and with its quirks:

- an imagefolder: ``test/<sha256 of the file>.jpg`` and ``test/metadata.csv`` linking rows to
  images by ``file_name``; a leftover ``test/metadata_old.csv`` of another layout beside it
  (the repo keeps renamed CSVs; it must never be read);
- the card's columns, ``human-caption`` with its hyphen, ``difficulty_level_index`` as text;
- the five options inside one prompt text (``prompt_clean-multiple_choice``), labelled (A)-(E),
  the ground-truth answer among the first four, "Cannot determine ..." last;
- the judge columns as the removed loader read them: Python-literal lists of judge prompts
  (with and without the reference answer) and of human labels, three judged answers a riddle;
- every seventh riddle without an attribution.

The riddle: a canvas of one colour; the answer names the colour. A ``SYNTHETIC`` file marks the
corpus as made, not released (abduct compare never draws it beside paper rows).
"""

from __future__ import annotations

import csv
import hashlib
import io
from pathlib import Path

import numpy as np
from PIL import Image

from abduct.kit import building_folder

DEFAULT_RIDDLES = 40
COLORS = {"red": (210, 40, 40), "green": (40, 170, 60), "blue": (40, 70, 210), "yellow": (225, 205, 40),
          "purple": (130, 50, 170), "orange": (235, 135, 30)}
CD_OPTION = "Cannot determine the correct answer from the provided options"
HEADER = ["file_name", "image", "question", "ground_truth_answer", "hint", "attribution", "human-caption",
          "generative_model_name", "designer", "difficulty_level_index", "category", "image_id", "image_url",
          "prompt_clean-multiple_choice", "prompts_ref_free-auto_eval", "prompts_ref_based-auto_eval",
          "labels-auto_eval"]


def _answer(color: str) -> str:
    return f"The thing is {color}, as the whole picture shows."


def _jpeg(rng: np.random.Generator, rgb: tuple[int, int, int], size: int = 32) -> bytes:
    pixels = (np.array(rgb, dtype=np.float64) + rng.normal(0, 12, size=(size, size, 3))).clip(0, 255)
    buffer = io.BytesIO()
    Image.fromarray(pixels.astype(np.uint8)).save(buffer, format="JPEG", quality=90)
    return buffer.getvalue()


def synthesize(out_dir: Path, riddles: int = DEFAULT_RIDDLES, seed: int = 0) -> Path:
    with building_folder(Path(out_dir)) as out:  # the release appears whole or not at all
        rng = np.random.default_rng(seed)
        names = list(COLORS)
        test = out / "test"
        test.mkdir()
        rows = []
        for i in range(riddles):
            color = names[int(rng.integers(len(names)))]
            data = _jpeg(rng, COLORS[color])
            digest = hashlib.sha256(data).hexdigest()
            (test / f"{digest}.jpg").write_bytes(data)
            others = [n for n in names if n != color]
            wrong = [others[int(k)] for k in rng.choice(len(others), size=3, replace=False)]
            opts = [_answer(w) for w in wrong]
            opts.insert(int(rng.integers(4)), _answer(color))
            question = "What colour is the thing in the picture most likely?"
            mcq = question + "\n" + "\n".join(f"({letter}) {text}" for letter, text in zip("ABCDE", [*opts, CD_OPTION]))
            judged = [_answer(color), _answer(wrong[0]), "I am not sure."]
            labels = [True, False, False]
            free = [f"Question: {question} Candidate answer: {a} Is the candidate correct? Answer Yes or No."
                    for a in judged]
            based = [f"Question: {question} Ground-truth answer: {_answer(color)} Candidate answer: {a} "
                     "Is the candidate correct? Answer Yes or No." for a in judged]
            attribution = "" if i % 7 == 6 else f"https://en.wikipedia.org/wiki/{color.capitalize()}"
            rows.append([f"{digest}.jpg", "", question, _answer(color), "look at the colour", attribution,
                         f"a {color} canvas", "synthetic", "abduct", str(i % 4), ("colour", "scene")[i % 2],
                         digest, f"https://example.org/{digest}.jpg", mcq, repr(free), repr(based), repr(labels)])
        with open(test / "metadata.csv", "w", encoding="utf-8", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(HEADER)
            writer.writerows(rows)
        (test / "metadata_old.csv").write_text("image_id,q,a\nx,y,z\n", encoding="utf-8")
        (out / "SYNTHETIC").write_text(f"abduct synthetic Visual Riddles release: riddles={riddles} seed={seed}\n")
    return Path(out_dir)
