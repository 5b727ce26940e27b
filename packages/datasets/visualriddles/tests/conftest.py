from __future__ import annotations

import csv
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from abduct import Decoding, GenerationRequest, TextPool
from abduct.host import EvalConfig, run_evaluation
from abduct_testing import registry_with_models
from abduct_visualriddles.synth import synthesize


@pytest.fixture(scope="session")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return synthesize(tmp_path_factory.mktemp("vr") / "data", riddles=21, seed=0)


def read_rows(data: Path) -> tuple[list[str], list[dict[str, str]]]:
    with open(data / "test" / "metadata.csv", encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        return list(reader.fieldnames or []), list(reader)


def write_rows(data: Path, header: list[str], rows: list[dict[str, str]]) -> None:
    with open(data / "test" / "metadata.csv", "w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, header, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)


class Says:
    """A generator answering one fixed text (``Says.text``, set per test through the subclass)."""

    accepts = frozenset({"image"})
    fingerprint = "says"
    text = ""

    def generate(self, requests: Sequence[GenerationRequest], decoding: Decoding, pool: TextPool | None) -> list[str]:
        return [self.text for _ in requests]


class SaysA(Says):
    fingerprint, text = "says-a", "A."


class SaysCd(Says):
    fingerprint, text = "says-cd", "(E) Cannot determine the correct answer from the provided options"


class SaysYes(Says):
    fingerprint, text = "says-yes", "Yes, it is."


class Knows:
    """The synthetic release's oracle: the judge prompts' "Yes" for the right colour, "No" for a
    wrong one and "Perhaps" for an unsure answer; open questions answered with the gold."""

    accepts = frozenset({"image"})
    fingerprint = "knows"

    def generate(self, requests: Sequence[GenerationRequest], decoding: Decoding, pool: TextPool | None) -> list[str]:
        out = []
        for r in requests:
            prompt = r.prompt or ""
            if "Candidate answer:" in prompt:  # the release's own judge prompts
                candidate = prompt.split("Candidate answer: ", 1)[1]
                gold = re.search(r"is (\w+),", candidate)
                truth = _colour(str(r.visual.media))
                out.append("Perhaps" if gold is None else "Yes" if gold.group(1) == truth else "No")
            else:
                out.append(f"The thing is {_colour(str(r.visual.media))}, as the whole picture shows.")
        return out


class Agrees(Knows):
    """A judge as people label the synthetic release: the oracle, with "No" where it is unsure."""

    fingerprint = "agrees"

    def generate(self, requests: Sequence[GenerationRequest], decoding: Decoding, pool: TextPool | None) -> list[str]:
        return ["No" if said == "Perhaps" else said for said in super().generate(requests, decoding, pool)]


def _colour(image: str) -> str:
    from PIL import Image

    from abduct_visualriddles.synth import COLORS

    pixels = Image.open(image).convert("RGB").resize((1, 1)).getpixel((0, 0))
    return min(COLORS, key=lambda c: sum((a - b) ** 2 for a, b in zip(COLORS[c], pixels)))  # type: ignore[arg-type]


class FenceJudge:
    """A judge: "Verdict: yes" when the candidate block equals the ground-truth block, "no" when
    they differ or there is no ground-truth block, an unparseable "hmm" for a blue answer."""

    accepts = frozenset({"image"})
    fingerprint = "fence-judge"
    prompts: list[str] = []

    def generate(self, requests: Sequence[GenerationRequest], decoding: Decoding, pool: TextPool | None) -> list[str]:
        out = []
        for r in requests:
            text = r.prompt or ""
            FenceJudge.prompts.append(text)
            code = text.split(" is this request's code", 1)[0].rsplit(" ", 1)[1]

            def block(name: str) -> str | None:
                start = f"[{name} {code}]\n"
                return text.split(start, 1)[1].split(f"\n[end {code}]", 1)[0] if start in text else None

            candidate, gold = block("candidate answer"), block("ground-truth answer")
            gold = None if gold is None else gold.removeprefix("1. ")  # the core numbers the references
            out.append("hmm" if "blue" in str(candidate) else
                       f"Verdict: {'yes' if gold is not None and candidate == gold else 'no'}")
        return out


def registry() -> Any:
    return registry_with_models("visualriddles-test", {
        "says-a": ("answers A", SaysA), "says-cd": ("answers cannot determine", SaysCd),
        "says-yes": ("answers yes", SaysYes), "knows": ("the synthetic oracle", Knows),
        "agrees": ("judges as people do", Agrees),
        "fence-judge": ("a literal judge", FenceJudge)})


def evaluate(data: Path, out: Path, task: str, model: str, **kw: Any) -> dict[str, Any]:
    return run_evaluation(EvalConfig(task=task, model=model, data_dir=data, out_dir=out, quiet=True, use_cache=False,
                                     **kw), registry())
