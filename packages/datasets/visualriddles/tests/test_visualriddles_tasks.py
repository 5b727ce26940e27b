"""The three tasks through the runner: the contract with random; the multiple-choice figures with
and without "cannot determine" computed by hand; the judge's accuracy and kappa against the human
labels by hand; the open-ended answers judged in both settings and setups."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from abduct import AbductError
from abduct_testing import TaskContract
from abduct_visualriddles.judge import judge_values, parse_verdict
from abduct_visualriddles.mcq import mcq_values, options, parse_letter, several
from abduct_visualriddles.records import load_riddles
from abduct_visualriddles.synth import synthesize
from conftest import FenceJudge, evaluate, registry


class TestMcqContract(TaskContract):
    task_name = "visualriddles-mcq"

    def make_data(self, tmp_path: Path) -> Path:
        return synthesize(tmp_path, riddles=20, seed=1)  # two units of 16


class TestJudgeContract(TaskContract):
    task_name = "visualriddles-judge"

    def make_data(self, tmp_path: Path) -> Path:
        return synthesize(tmp_path, riddles=8, seed=1)  # 24 judged answers: two units


class TestOpenContract(TaskContract):
    task_name = "visualriddles-open"

    def make_registry(self) -> Any:
        return registry()

    def _config(self, data: Path, out: Path, **kwargs: Any) -> Any:
        return super()._config(data, out, judge="fence-judge", **kwargs)

    def make_data(self, tmp_path: Path) -> Path:
        return synthesize(tmp_path, riddles=40, seed=1)  # two answer units of 32, then the judge's


def _records(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()]


# -- multiple choice -----------------------------------------------------------------------------
def test_letters_are_read_strictly() -> None:
    for text, index in [("B", 1), ("(B)", 1), ("B.", 1), ("B)", 1), ("Answer: (C)", 2), ("(D) because ...", 3),
                        ("E: cannot determine", 4), ("  A  ", 0)]:
        assert parse_letter(text) == index, text
    for text in ("A cat", "b", "The answer is B", "F", "", "maybe (A) or (B)"):
        assert parse_letter(text) is None, text
    assert parse_letter("(A) or (B)") == 0  # a leading label is the answer
    assert several("maybe (A) or (B)") and not several("maybe (A)")


def test_accuracy_with_and_without_cannot_determine_by_hand() -> None:
    # ten riddles, cannot-determine at index 4: four right, two chose it, one unread, three wrong
    rows = [(0, 0, 4)] * 4 + [(4, 1, 4)] * 2 + [(None, 2, 4)] + [(3, 2, 4)] * 3
    values = mcq_values(rows)
    assert values["accuracy"] == 40.0  # 4 / 10
    assert values["cannot_determine"] == 20.0  # 2 / 10
    assert values["accuracy_without_cd"] == 50.0  # 4 / (10 - 2): the unread one stays in
    assert "accuracy_without_cd" not in mcq_values([(4, 0, 4), (4, 1, 4)])  # every answer chose it
    # the reference's check on the paper's Table 2: Gemini Pro 1.5, 38 % right and 20 % CD -> 47.5 (printed 48)
    assert mcq_values([(0, 0, 4)] * 38 + [(4, 0, 4)] * 20 + [(1, 0, 4)] * 42)["accuracy_without_cd"] == 47.5


def test_mcq_end_to_end_by_hand(corpus: Path, tmp_path: Path) -> None:
    riddles = load_riddles(corpus)
    golds = [options(r).gold for r in riddles]
    always_a = evaluate(corpus, tmp_path / "a", "visualriddles-mcq", "says-a")
    assert always_a["metrics"]["accuracy"] == pytest.approx(100 * golds.count(0) / len(riddles))
    assert always_a["metrics"]["cannot_determine"] == 0.0
    assert always_a["metrics"]["accuracy_without_cd"] == always_a["metrics"]["accuracy"]
    cd = evaluate(corpus, tmp_path / "cd", "visualriddles-mcq", "says-cd")
    assert cd["metrics"]["cannot_determine"] == 100.0 and cd["metrics"]["accuracy"] == 0.0
    assert "accuracy_without_cd" not in cd["metrics"]
    unread = evaluate(corpus, tmp_path / "yes", "visualriddles-mcq", "says-yes")
    assert unread["metrics"]["unparsed"] == len(riddles) and unread["metrics"]["accuracy"] == 0.0
    assert unread["metrics"]["unparsed_reasons"] == {"no option found": len(riddles)}
    assert all(r["unparsed"] == "no option found" for r in _records(tmp_path / "yes"))


def test_setups_and_text_only(corpus: Path, tmp_path: Path) -> None:
    from abduct import RunInfo
    from abduct_visualriddles.mcq import McqTask

    riddles = load_riddles(corpus)
    info = RunInfo(split="test", model_name="m", scores=False, generates=True, judged=False, metric=lambda *a: None)
    [stage] = McqTask("hint", "generate", image=False).plan(riddles, info)
    item = stage.request.items[0]  # type: ignore[union-attr]
    assert item.request.visual.media is None  # the text-only baseline
    assert item.request.prompt.startswith("Hint: look at the colour\n" + riddles[0].question)
    assert "(E) Cannot determine" in item.request.prompt
    results = evaluate(corpus, tmp_path / "att", "visualriddles-mcq,setup=attribution", "says-a")
    assert results["metrics"]["n"] == 18 and results["details"]["riddles_without_attribution"] == 3  # rows 6, 13, 20


# -- the judge task --------------------------------------------------------------------------------
def test_judge_figures_by_hand() -> None:
    # verdicts yes yes no no None, human yes no no yes no: 2 agree of 5
    pairs = [(True, True), (True, False), (False, False), (False, True), (None, False)]
    values, table = judge_values(pairs)
    assert values["accuracy"] == 40.0
    # p_o = 2/5; p_e = P(yes)P(yes) + P(no)P(no) + P(unparsed)P(unparsed) = (2/5)(2/5) + (2/5)(3/5) + 0 = 10/25
    assert values["kappa"] == pytest.approx((0.4 - 0.4) / (1 - 0.4))
    assert table == {"no": {"no": 1, "unparsed": 1, "yes": 1}, "unparsed": {"no": 0, "unparsed": 0, "yes": 0},
                     "yes": {"no": 1, "unparsed": 0, "yes": 1}}
    values, _ = judge_values([(True, True), (False, False), (True, True), (False, True)])
    assert values["kappa"] == pytest.approx((0.75 - 0.5) / 0.5)  # p_e = (2/4)(3/4) + (2/4)(1/4)
    values, _ = judge_values([(True, True), (True, True)])
    assert "kappa" not in values  # undefined: one label on both sides
    assert parse_verdict("Yes.") is True and parse_verdict("**no**, because") is False
    assert parse_verdict("Nothing") is None and parse_verdict("I think yes") is None


def test_judge_end_to_end_by_hand(corpus: Path, tmp_path: Path) -> None:
    # each riddle: the right answer (human yes), a wrong colour (no), "I am not sure." (no); the
    # oracle says Yes, No and an unread "Perhaps": per riddle verdicts (yes, no, -) against (yes, no, no)
    results = evaluate(corpus, tmp_path / "judge", "visualriddles-judge", "knows")
    metrics = results["metrics"]
    assert metrics["n"] == 3 * 21 and metrics["unparsed"] == 21
    assert metrics["accuracy"] == pytest.approx(200 / 3)
    # p_o = 2/3; p_e = (1/3)(1/3) [yes] + (1/3)(2/3) [no] = 1/3; kappa = (2/3 - 1/3) / (2/3)
    assert metrics["kappa"] == pytest.approx(0.5)
    assert results["details"]["confusion"]["no"] == {"no": 21, "unparsed": 21, "yes": 0}
    yes = evaluate(corpus, tmp_path / "yes", "visualriddles-judge,reference=free", "says-yes")["metrics"]
    assert yes["accuracy"] == pytest.approx(100 / 3) and yes["kappa"] == 0.0 and yes["judge_yes_rate"] == 100.0


# -- open-ended ------------------------------------------------------------------------------------
def test_open_needs_a_judge(corpus: Path, tmp_path: Path) -> None:
    with pytest.raises(AbductError, match="pass --judge SPEC"):
        evaluate(corpus, tmp_path / "out", "visualriddles-open", "knows")


def test_open_judged_reference_based_and_free(corpus: Path, tmp_path: Path) -> None:
    riddles = load_riddles(corpus)
    from conftest import _colour

    blue = sum(_colour(r.image) == "blue" for r in riddles)
    FenceJudge.prompts.clear()
    based = evaluate(corpus, tmp_path / "based", "visualriddles-open", "knows", judge="fence-judge")
    assert based["metrics"]["answers"] == 21 and based["metrics"]["judge_parse_failures"] == blue
    assert based["metrics"]["judge_correct"] == 100.0  # every parsed verdict: the oracle's answer is the gold
    assert all("[ground-truth answer" in p for p in FenceJudge.prompts)
    FenceJudge.prompts.clear()
    free = evaluate(corpus, tmp_path / "free", "visualriddles-open,reference=free", "knows", judge="fence-judge")
    assert free["metrics"]["judge_correct"] == 0.0  # no ground truth shown: the literal judge says no
    for prompt, riddle in zip(FenceJudge.prompts, riddles):
        assert "[ground-truth answer" not in prompt and riddle.answer not in prompt.split("[candidate answer")[0]
        assert riddle.question in prompt.split("[question ")[1].split("[end ")[0]  # the question, in its own block
    hint = evaluate(corpus, tmp_path / "att", "visualriddles-open,setup=attribution", "knows", judge="fence-judge")
    assert hint["metrics"]["answers"] == 18 and hint["details"]["riddles_without_attribution"] == 3
