from __future__ import annotations

import csv
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from abduct import Decoding, GenerationRequest, TextPool, VisualInput
from abduct.host import EvalConfig, run_evaluation
from abduct_testing import registry_with_models
from abduct_whoops.loader import load_release
from abduct_whoops.records import COLUMNS
from abduct_whoops.synth import synthesize


@pytest.fixture(scope="session")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small synthetic corpus (4 images per fold) shared by read-only tests."""
    return synthesize(tmp_path_factory.mktemp("whoops") / "data", images=20, seed=0)


def row(image_id: str, **changes: Any) -> dict[str, str]:
    """A valid released CSV row; ``changes`` replace cells (already as text)."""
    base: dict[str, Any] = {
        "image": f"{image_id}.png", "designer_explanation": "a sun is yellow", "selected_caption": "a green sun",
        "crowd_captions": ["a green sun", "a sun"], "crowd_explanations": ["suns are yellow"],
        "crowd_underspecified_captions": ["a sun", "an object"],
        "question_answering_pairs": [["What color is the sun?", "green"], ["How many suns?", "one"]],
        "commonsense_category": "Astronomy", "image_id": image_id, "image_designer": "x",
    }
    base.update(changes)
    return {k: json.dumps(v) if isinstance(v, list) else str(v) for k, v in base.items()}


def write_csv(path: Path, rows: Sequence[dict[str, str]], header: Sequence[str] = COLUMNS, bom: bool = True) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8-sig" if bom else "utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows([[r.get(c, "") for c in header] for r in rows])
    return path


# -- test models, registered by this test plugin ----------------------------------------------
def _image_id(visual: VisualInput) -> str:
    return Path(str(visual.media)).stem


class Oracle:
    """Writes the gold text from the release: the selected caption, the designer explanation
    or the first answer, depending on the prompt; identification answers from the file name."""

    accepts = frozenset({"image"})
    fingerprint = "whoops-oracle"

    def generate(self, requests: Sequence[GenerationRequest], decoding: Decoding, pool: TextPool | None) -> list[str]:
        out = []
        for r in requests:
            media = Path(str(r.visual.media))
            prompt = r.prompt or ""
            if "weird or normal" in prompt:
                out.append("Normal." if media.stem.startswith("normal_") else "Weird, clearly")
                continue
            image = load_release(media.parent.parent).by_id()[media.stem]
            if prompt.startswith("Question:"):
                question = prompt.removeprefix("Question: ").removesuffix(" Short answer:")
                out.append(next(a for q, a in image.question_answering_pairs if q == question))
            elif "weird" in prompt:
                out.append(image.designer_explanation)
            else:
                out.append(image.selected_caption)
        return out


class Length:
    """Longer text, higher score: the detailed caption always wins on the synthetic corpus."""

    accepts = frozenset({"image"})

    def score(self, visuals: Sequence[VisualInput], texts: Sequence[str]) -> np.ndarray:
        return np.array([len(t) for t in texts], dtype=np.float64)


class LiteralJudge:
    """A judge: "Yes." when the candidate is one of the numbered references, "No" otherwise,
    and an unparseable "Perhaps" when the candidate mentions a whale."""

    accepts = frozenset({"image"})
    fingerprint = "literal-judge"
    prompts: list[str] = []

    def generate(self, requests: Sequence[GenerationRequest], decoding: Decoding, pool: TextPool | None) -> list[str]:
        answers = []
        for request in requests:
            text = request.prompt or ""
            LiteralJudge.prompts.append(text)
            code = text.split(" is this request's code", 1)[0].rsplit(" ", 1)[1]
            candidate = text.split(f"[candidate explanation {code}]\n", 1)[1].split(f"\n[end {code}]", 1)[0]
            references = [line.partition(". ")[2] for line in text.splitlines() if line[:1].isdigit()]
            answers.append("Perhaps" if "whale" in candidate else "Yes." if candidate in references else "No")
        return answers


class NoJudge:
    """A judge that answers "No" to everything."""

    accepts = frozenset({"image"})
    fingerprint = "no-judge"

    def generate(self, requests: Sequence[GenerationRequest], decoding: Decoding, pool: TextPool | None) -> list[str]:
        return ["No" for _ in requests]


def registry() -> Any:
    return registry_with_models("whoops-test", {"oracle": ("gold texts", Oracle),
                                                "length": ("longer is better", Length),
                                                "literal-judge": ("literal judge", LiteralJudge),
                                                "no-judge": ("answers no", NoJudge)})


def evaluate(data: Path, out: Path, task: str, model: str, **kw: Any) -> dict[str, Any]:
    return run_evaluation(EvalConfig(task=task, model=model, data_dir=data, out_dir=out, quiet=True, use_cache=False,
                                     **kw), registry())


@pytest.fixture(scope="session")
def random_captions(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], Path]:
    """One ``whoops-captioning`` run of ``random`` (the caption metrics start Java per group:
    tests share the run instead of repeating it)."""
    out = tmp_path_factory.mktemp("captioning") / "run"
    return evaluate(corpus, out, "whoops-captioning", "random"), out
