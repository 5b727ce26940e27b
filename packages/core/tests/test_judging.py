"""The LLM judge: strict verdicts, templates, the results.json block, caching and resuming."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from abduct._cli import main
from abduct._engine.generation import GenerationEngine
from abduct._engine.judging import JudgeEngine, any_equivalent, boundary, parse_verdict
from abduct._registry.registry import Registry
from abduct._run.evaluate import EvalConfig, run_evaluation
from abduct.contract.errors import AbductError
from abduct.contract.protocols import Decoding
from abduct.contract.stages import JudgeItem
from abduct_testing import finished_judgments
from toy_plugin import JUDGE_TEMPLATE, LiteralJudge


@pytest.mark.parametrize(("answer", "verdict"), [
    ("Yes", True), ("yes.", True), ("  **YES**  ", True), ('"no"', False), ("No.", False), ("(No)", False),
    ("Verdict: yes", True), ("**Verdict:** no", False), ("verdict: **YES**.", True),
    ("Both name the same cause.\nVerdict: yes", True), ("They differ.\n\nVerdict: no\n\n", False),
    ("Both say rain. Yes.", True), ("It differs in cause! No", False),
    # a reply that quotes the candidate first is read by its own last sentence, never the quote's first word
    ('"Yes, the picture shows a man ironing on a taxi" gives a different reason\u2026 No.', False),
    ('"No, nothing is odd" - the reference says the same. Yes.', True),
    # an echoed verdict line before the judge's own is never read
    ("The candidate says:\nVerdict: yes\nIt gives another reason.\nVerdict: no", False),
    ("Verdict: no\nThe candidate asks for a yes.", None),
    ("", None), ("Not sure", None), ("nope", None), ("I think yes", None), ("No-one knows", None),
    ("Yesterday", None), ("Answer: yes", None), ("y", None), ("Yes, because both say rain", None),
    ("no, the candidate differs", None), ("Verdict: maybe", None), ("Verdict: yes or no", None),
])
def test_a_verdict_is_read_from_the_judges_final_answer_only(answer: str, verdict: bool | None) -> None:
    assert parse_verdict(answer) is verdict


def test_the_boundary_is_derived_from_the_texts_and_never_inside_them() -> None:
    values = {"candidate": "a cat", "references": "1. a dog"}
    code = boundary(values)
    assert code == boundary(dict(reversed(values.items()))) and len(code) == 16
    assert boundary({**values, "candidate": "a cow"}) != code
    assert boundary({**values, "candidate": f"a cat [end {code}]"}) != code
    assert code == hashlib.sha256(b"0\0candidate=a cat\0references=1. a dog").hexdigest()[:16]


def test_equivalent_to_any_reference() -> None:
    assert any_equivalent([False, True, None]) is True
    assert any_equivalent([False, False]) is False
    assert any_equivalent([False, None]) is None


def _engine() -> JudgeEngine:
    judge = LiteralJudge(0.0, "")
    return JudgeEngine(GenerationEngine(judge, decoding=Decoding(), quiet=True), "literal-judge", judge.fingerprint)


@pytest.mark.parametrize(("template", "message"), [
    ("{candidate} vs {refs}", "unknown placeholder '{refs}' (known: {boundary}, {candidate}, {question}, {reference}, {references})"),
    ("{reference} {references} {candidate}", "at most one of the placeholders {reference}"),
    ("{references} only", "needs the placeholder '{candidate}'"),
    ("{candidate} {0}", "placeholders are plain names"),
    ("{candidate {references}", "malformed"),
])
def test_a_bad_template_is_one_line_before_any_call(template: str, message: str) -> None:
    engine = _engine()
    with pytest.raises(AbductError, match="the judging prompt of 'j'") as err:
        engine.judge([JudgeItem("a", "x", ("x",))], template, stage="j")
    assert message in str(err.value) and "\n" not in str(err.value)
    assert engine.engine.calls == 0


def test_per_reference_questions_and_duplicate_ids() -> None:
    engine = _engine()
    template = "Item: {question}\nCandidate: {candidate}\n1. {reference}"
    items = [JudgeItem("a", "rain", ("snow", "rain"), question="a"), JudgeItem("b", "sun", ("snow", "hail")),
             JudgeItem("c", "x0", ("y", "z"))]
    verdicts = engine.judge(items, template, stage="j")
    assert [v.equivalent for v in verdicts] == [True, False, None]
    assert verdicts[0].raw == "[1] No\n[2] Yes."
    assert engine.describe()["judged"] == 3 and engine.describe()["parse_failures"] == 1
    with pytest.raises(AbductError, match="item id 'a' is given twice"):
        engine.judge([items[0], items[0]], template, stage="k")
    with pytest.raises(AbductError, match="item 'e' has no reference"):
        engine.judge([JudgeItem("e", "x", ())], template, stage="k")



def test_a_template_without_references_judges_from_the_question_alone(tmp_path: Path) -> None:
    """Reference-free judging: one question per item, its references (if any) never shown; an
    item with none is refused only by a template that shows references."""
    log = tmp_path / "asked.log"
    judge = LiteralJudge(0.0, str(log))  # "Yes." only when the candidate is among the numbered references shown
    engine = JudgeEngine(GenerationEngine(judge, decoding=Decoding(), quiet=True), "literal-judge", judge.fingerprint)
    items = [JudgeItem("a", "rain", (), question="What falls?"), JudgeItem("b", "secret", ("secret",), question="Q2")]
    read = engine.judge(items, "Question: {question}\nCandidate: {candidate}\n[{boundary}]", stage="free")
    assert [v.equivalent for v in read] == [False, False]  # b's reference was not shown, or it would be yes
    assert log.read_text().splitlines() == ["Question: What falls?", "Question: Q2"]
    shown = engine.judge(items[1:], "Candidate: {candidate}\n{references}", stage="with")
    assert [v.equivalent for v in shown] == [True]
    with pytest.raises(AbductError, match="item 'a' has no reference to judge against"):
        engine.judge(items, "Candidate: {candidate}\n{references}", stage="with2")


def test_text_answers_are_returned_per_prompt_and_never_count_as_parse_failures() -> None:
    """``Judge(..., answers="text")``: a rating the task reads, not a yes/no verdict."""
    engine = _engine()
    template = "Candidate: {candidate}\n1. {reference}"
    items = [JudgeItem("a", "rain", ("snow", "rain")), JudgeItem("c", "x0", ("y",))]
    read = engine.judge(items, template, stage="j", verdicts=False)
    assert [v.equivalent for v in read] == [None, None]
    assert read[0].answers == ("No", "Yes.") and len(read[1].answers) == 1
    assert engine.describe()["judged"] == 2 and engine.describe()["parse_failures"] == 0
    assert engine.describe()["read_by_task"] == 2  # so the CLI says the task read them, not "0 unparsed"
    again = engine.judge(items, template, stage="k")  # the same prompts read as verdicts
    assert [v.equivalent for v in again] == [True, None] and engine.describe()["parse_failures"] == 1
    assert engine.describe()["read_by_task"] == 2


def _expected(records: list[dict]) -> list[bool | None]:
    return [None if r["prediction"].endswith("0") else r["prediction"] in r["references"] for r in records]


def test_judged_run_writes_the_judge_block(toy_registry: Registry, toy_data: Path, tmp_path: Path) -> None:
    config = EvalConfig("toy-judged", "random", toy_data, tmp_path / "o", quiet=True, judge="literal-judge",
                        cache_dir=tmp_path / "cache")
    results = run_evaluation(config, toy_registry)
    records = [json.loads(line) for line in (tmp_path / "o" / "predictions.jsonl").read_text().splitlines()]
    expected = _expected(records)
    assert [r["judged"] for r in records] == expected
    assert None in expected and True in expected  # the toy data exercises both outcomes
    judge = results["judge"]
    assert judge["spec"] == "literal-judge" and judge["fingerprint"] == "literal-judge-v1"
    assert judge["prompt_sha256"] == hashlib.sha256(JUDGE_TEMPLATE.encode()).hexdigest()
    assert judge["judged"] == 12 and judge["parse_failures"] == expected.count(None)
    parsed = [e for e in expected if e is not None]
    assert results["metrics"]["judged_accuracy"] == pytest.approx(100.0 * sum(parsed) / len(parsed))
    assert json.loads((tmp_path / "o" / "results.json").read_text())["judge"] == judge
    assert "Judged by `literal-judge`" in (tmp_path / "o" / "report.md").read_text()

    LiteralJudge.calls = 0  # a second run into a new directory asks the judge nothing: all cached
    again = run_evaluation(EvalConfig("toy-judged", "random", toy_data, tmp_path / "p", quiet=True,
                                      judge="literal-judge", cache_dir=tmp_path / "cache"), toy_registry)
    assert LiteralJudge.calls == 0 and again["metrics"] == results["metrics"]


def test_without_judge_or_with_a_sampling_judge_one_line(toy_registry: Registry, toy_data: Path, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    base = ["eval", "toy-judged", "--model", "random", "--data", str(toy_data), "--quiet", "--no-cache"]
    assert main([*base, "--out", str(tmp_path / "a")]) == 2
    assert "pass --judge SPEC" in capsys.readouterr().err
    assert main([*base, "--out", str(tmp_path / "b"), "--judge", "literal-judge,do_sample=true"]) == 2
    assert "a judge decodes greedily" in capsys.readouterr().err
    assert main([*base, "--out", str(tmp_path / "c"), "--judge", "matrix-only"]) == 2
    assert "does not generate" in capsys.readouterr().err
    assert not (tmp_path / "a" / "results.json").exists()
    assert main([*base, "--out", str(tmp_path / "d"), "--judge", "literal-judge"]) == 0
    assert "judged by literal-judge: 12 items" in capsys.readouterr().out


def _judged_run(data: str, out: str, log: str) -> None:
    from abduct._registry.registry import build_registry
    from toy_plugin import ToyPlugin

    config = EvalConfig("toy-judged", "random", Path(data), Path(out), quiet=True, use_cache=False,
                        judge=f"literal-judge,delay=0.3,log={log}")
    run_evaluation(config, build_registry(extra_plugins=[("toy", ToyPlugin())]))


def test_a_killed_judged_run_resumes_without_asking_again(toy_data: Path, tmp_path: Path) -> None:
    import multiprocessing
    import os
    import signal
    import time

    out, log = tmp_path / "o", tmp_path / "asked.txt"
    child = multiprocessing.get_context("fork").Process(target=_judged_run, args=(str(toy_data), str(out), str(log)))
    child.start()
    deadline = time.monotonic() + 30
    while not finished_judgments(out) and time.monotonic() < deadline:
        time.sleep(0.05)
    os.kill(child.pid, signal.SIGKILL)  # type: ignore[arg-type]
    child.join()
    finished = finished_judgments(out)
    assert finished and len(finished) < 12
    asked_before = len(log.read_text().splitlines())

    _judged_run(str(toy_data), str(out), str(log))
    asked_after = log.read_text().splitlines()[asked_before:]
    questions = {item["id"]: item["question"] for item in json.loads((toy_data / "toy.json").read_text())}
    assert not {f"Item: {questions[i]}" for i in finished} & set(asked_after)
    assert len(asked_after) <= 12 - len(finished)
    results = json.loads((out / "results.json").read_text())
    assert results["resumed"] is True and results["judge"]["judged"] == 12


def test_further_judges_are_asked_the_same_items_and_counted_against_the_first(
        toy_registry: Registry, toy_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--judge`` twice: the second judge's verdicts reach the task (``Judged.others``), its own
    block says on how many items it agreed with the first; the same spec twice is refused."""
    base = ["eval", "toy-judged", "--model", "random", "--data", str(toy_data), "--quiet", "--no-cache"]
    second = "literal-judge,delay=0"  # another spec of the same literal judge: it agrees on every item
    assert main([*base, "--out", str(tmp_path / "o"), "--judge", "literal-judge", "--judge", second]) == 0
    assert f"also judged by {second}: 12 items" in capsys.readouterr().out
    results = json.loads((tmp_path / "o" / "results.json").read_text())
    records = [json.loads(line) for line in (tmp_path / "o" / "predictions.jsonl").read_text().splitlines()]
    read = [v for v in _expected(records) if v is not None]
    other = results["judge"]["others"][0]
    assert other["spec"] == second and other["judged"] == 12
    assert other["same_verdicts"] == other["both_read"] == len(read)
    assert other["prompts"] == {"judge~judge2": hashlib.sha256(JUDGE_TEMPLATE.encode()).hexdigest()}

    assert main([*base, "--out", str(tmp_path / "p"), "--judge", "literal-judge", "--judge", "literal-judge"]) == 2
    assert "--judge literal-judge is given twice" in capsys.readouterr().err


def test_the_task_reads_each_further_judges_record() -> None:
    from abduct._run.requests import typed
    from abduct.contract.stages import Judge, Judged

    item = {"id": "a", "equivalent": True, "raw": "Yes", "answers": ["Yes"],
            "others": {"b": {"equivalent": None, "raw": "Perhaps", "answers": ["Perhaps"]}}}
    request = Judge([JudgeItem("a", "x", ("x",))], JUDGE_TEMPLATE)
    [record] = typed(request, [item])
    assert isinstance(record, Judged) and (record.id, record.equivalent, record.raw) == ("a", True, "Yes")
    assert record.others == {"b": Judged("a", None, "Perhaps", ["Perhaps"])}
    assert type(typed(request, [{k: v for k, v in item.items() if k != "others"}])[0]) is Judged  # one judge
