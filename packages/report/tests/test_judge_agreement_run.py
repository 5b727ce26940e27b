"""Judge agreement through a real ``abduct eval``: a tiny task with people's labels, two fake
judges whose verdicts are fixed per item, so that every figure is known by hand (κ, α, the paired
difference); results.json, report.html and ``abduct compare`` carry them."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from abduct import (
    COUNT,
    Evaluation,
    GenerationRequest,
    Judge,
    JudgeItem,
    Records,
    Registration,
    RunInfo,
    Settings,
    Spec,
    Stage,
    TextPool,
    hookimpl,
    percent,
)
from abduct.host import main, reset_registry
from abduct_modelkit.agreement import judge_agreement
from abduct_testing.toy import install_toy_registry, write_toy_data

Y, N = "Verdict: yes", "Verdict: no"
# ten items; people's labels and each judge's reply, by item (judge B's last reply does not parse)
HUMAN = [True] * 6 + [False] * 4
JUDGE_A = [Y] * 5 + [N] * 4 + [Y]
JUDGE_B = [Y] * 4 + [N, Y, Y, N, N, "Perhaps"]
TEMPLATE = "Candidate: {candidate}\nReferences:\n{references}\nThe same? Verdict: yes or no."


class AgreeTask:
    """Asks the judge about ten items; people's labels are the task's own."""

    default_split = "val"
    dataset = "toy"
    metric_info = {"judged_yes": percent(), "n": COUNT}

    def plan(self, examples: Sequence[dict[str, Any]], run: RunInfo) -> list[Stage]:
        items = [JudgeItem(f"item-{k}", f"item-{k}", ("a reference",)) for k in range(len(HUMAN))]
        return [Stage("judge", Judge(items, TEMPLATE, per_unit=3))]

    def finish(self, examples: Sequence[dict[str, Any]], records: Mapping[str, Records], run: RunInfo) -> Evaluation:
        judged = records["judge"]
        human = {f"item-{k}": label for k, label in enumerate(HUMAN)}
        block = judge_agreement(judged, human, resamples=200, seed=run.settings.seed)
        read = [r.equivalent for r in judged if r.equivalent is not None]
        return Evaluation({"judged_yes": 100.0 * sum(read) / len(read), "n": len(judged)},
                          [{"id": r.id, "verdict": r.equivalent} for r in judged],
                          details={"judge_agreement": block})


class TableJudge:
    """Replies from a fixed table by the item named in the prompt's candidate line."""

    accepts = frozenset({"image"})

    def __init__(self, table: str) -> None:
        self.replies = {"a": JUDGE_A, "b": JUDGE_B}[table]
        self.fingerprint = f"table-judge-{table}-v1"

    def generate(self, requests: Sequence[GenerationRequest], decoding: Any, pool: TextPool | None) -> list[str]:
        found = [next(line for line in (r.prompt or "").splitlines() if line.startswith("Candidate: ")) for r in requests]
        return [self.replies[int(line.rsplit("-", 1)[1])] for line in found]


def make_task(spec: Spec, settings: Settings) -> AgreeTask:
    return AgreeTask()


def make_judge(spec: Spec, settings: Settings) -> TableJudge:
    return TableJudge(spec.argument or "a")


class AgreePlugin:
    @hookimpl
    def register_tasks(self) -> Iterator[Registration]:
        yield Registration("agree-toy", "Ten judged items with people's labels", "test_judge_agreement_run:make_task")

    @hookimpl
    def register_models(self) -> Iterator[Registration]:
        yield Registration("table-judge", "Replies from a fixed table", "test_judge_agreement_run:make_judge")


@pytest.fixture
def registry() -> Iterator[None]:
    install_toy_registry(("agree", AgreePlugin()))
    yield
    reset_registry(None)


def _eval(data: Path, out: Path, *judges: str) -> dict[str, Any]:
    args = ["eval", "agree-toy", "--model", "random", "--data", str(data), "--out", str(out), "--quiet", "--no-cache"]
    assert main([*args, *(part for judge in judges for part in ("--judge", judge))]) == 0
    return json.loads((out / "results.json").read_text())  # type: ignore[no-any-return]


def test_two_judges_against_people_and_each_other(registry: None, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    data = write_toy_data(tmp_path / "data", items=2)
    results = _eval(data, tmp_path / "ab", "table-judge:a", "table-judge:b")
    block = results["details"]["judge_agreement"]
    a, b = block["judges"]
    assert (a["judge"], b["judge"]) == ("judge", "table-judge:b") and block["items"] == 10

    # judge A against people, all ten items: p_o = 8/10; A says yes 6, people 6: p_e = (6x6 + 4x4)/100
    p_o, p_e = 8 / 10, (6 * 6 + 4 * 4) / 100
    assert a["human"]["kappa"] == pytest.approx((p_o - p_e) / (1 - p_e))
    assert a["human"]["accuracy"] == pytest.approx(80.0) and a["score"] == pytest.approx(60.0)
    assert a["human"]["confusion"] == {"False": {"False": 3, "True": 1}, "True": {"False": 1, "True": 5}}
    # judge B, nine items read: p_o = 7/9; B yes 6 of 9, people 6 of 9: p_e = (6x6 + 3x3)/81
    p_o, p_e = 7 / 9, (6 * 6 + 3 * 3) / 81
    assert b["human"]["kappa"] == pytest.approx((p_o - p_e) / (1 - p_e)) and b["unread"] == 1
    # A against B on the nine both read: p_o = 6/9; A yes 5, B yes 6: p_e = (5x6 + 4x3)/81
    pair = block["pairs"][0]
    p_o, p_e = 6 / 9, (5 * 6 + 4 * 3) / 81
    assert pair["kappa"] == pytest.approx((p_o - p_e) / (1 - p_e)) and pair["both_read"] == 9
    assert pair["difference"] == pytest.approx(100 * (6 - 5) / 9)  # B's yes share minus A's, same items
    assert pair["low"] <= pair["difference"] <= pair["high"]
    # alpha over A and B: coincidences o_yy = 4x2, o_nn = 2x2, o_yn = o_ny = 3; n_y = 11, n_n = 7, n = 18
    assert block["alpha"] == pytest.approx(1 - 17 * (3 + 3) / (2 * 11 * 7))

    judge = results["judge"]
    assert judge["spec"] == "table-judge:a" and judge["others"][0]["spec"] == "table-judge:b"
    assert judge["others"][0]["same_verdicts"] == 6 and judge["others"][0]["both_read"] == 9
    assert "also judged by table-judge:b" in capsys.readouterr().out

    page = (tmp_path / "ab" / "report.html").read_text()
    assert "Judge agreement" in page and "table-judge:b" in page

    single = _eval(data, tmp_path / "a", "table-judge:a")
    assert "others" not in single["judge"] and "pairs" not in single["details"]["judge_agreement"]
    capsys.readouterr()
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "ab"), "--html", str(tmp_path / "compare.html")]) == 0
    shown = capsys.readouterr().out
    assert "Judge agreement" in shown and f"{(0.8 - 0.52) / 0.48:.3f}" in shown
    assert f"{12 / 39:.3f}" in shown  # B's kappa against the first judge
    page = (tmp_path / "compare.html").read_text()
    assert "Judge agreement" in page and f"{(1 - 17 * 6 / 154):.3f}" in page  # alpha


def test_the_same_judge_twice_is_one_line(registry: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = write_toy_data(tmp_path / "data", items=2)
    args = ["eval", "agree-toy", "--model", "random", "--data", str(data), "--out", str(tmp_path / "o"), "--quiet"]
    assert main([*args, "--judge", "table-judge:a", "--judge", "table-judge:a"]) == 2
    assert "--judge table-judge:a is given twice" in capsys.readouterr().err
