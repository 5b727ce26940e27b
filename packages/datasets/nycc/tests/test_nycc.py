"""NYCC: the official scorer's arithmetic on hand cases and ties, folds, files and refusals."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import sacrebleu
from rouge_score import rouge_scorer, scoring

from abduct import AbductError
from abduct.host import EvalConfig, run_evaluation
from abduct_nycc.answers import official_letter
from abduct_nycc.dataset import NyccDataset
from abduct_nycc.layout import REPO_FOLDER, repo_root
from abduct_nycc.records import NyccItem
from abduct_nycc.scoring import fold_values, over_folds
from abduct_nycc.synth import synthesize
from abduct_nycc.text import bleu, rouge_l
from abduct_testing import TaskContract, main


class _Contract(TaskContract):
    def make_data(self, folder: Path) -> Path:
        return synthesize(folder / "nycc", per_fold=4, seed=1)  # 20 test instances over five folds


class TestMatchingContract(_Contract):
    task_name = "nycc-matching"


class TestRankingContract(_Contract):
    task_name = "nycc-ranking"


class TestExplanationContract(_Contract):
    task_name = "nycc-explanation"


def _key(release: Path, task: str) -> list[NyccItem]:
    return NyccDataset(task).load(release, "test", pictures=False)


def _score(task: str, predictions: dict[str, Any], release: Path, tmp_path: Path, *options: str) -> dict[str, Any]:
    path = tmp_path / "p.json"
    path.write_text(json.dumps(predictions))
    out = tmp_path / "out.json"
    import contextlib
    import io

    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        code = main(["score", task, "--predictions", str(path), "--answer-key", str(release), *options, "--json"])
    assert code == 0, buffer.getvalue()
    out.write_text(buffer.getvalue())
    result: dict[str, Any] = json.loads(buffer.getvalue())
    return result


def test_matching_file_is_the_unweighted_mean_of_the_folds(release: Path, tmp_path: Path) -> None:
    items = _key(release, "matching")
    # fold 0 all right, fold 1 one of four right, others all wrong; a non-bare letter counts as wrong
    answers = {}
    for item in items:
        gold = "ABCDE"[item.label or 0]
        wrong = "ABCDE"[((item.label or 0) + 1) % 5]
        right = item.fold == 0 or (item.fold == 1 and item.row == 0)
        answers[item.instance_id] = gold if right else wrong
    first = next(i for i in items if i.fold == 2)
    answers[first.instance_id] = f" {'ABCDE'[first.label or 0]}"  # padded: wrong, as the script's == says
    answers["not-a-test-id"] = "A"  # ignored, as the script ignores extra keys
    result = _score("nycc-matching", answers, release, tmp_path)
    assert result["folds"]["0"]["accuracy"] == 100.0 and result["folds"]["1"]["accuracy"] == 25.0
    assert result["accuracy"] == pytest.approx((100.0 + 25.0) / 5)
    assert result["n"] == 20 and result["folds_scored"] == 5
    one = _score("nycc-matching", answers, release, tmp_path, "--fold", "1")
    assert one["accuracy"] == 25.0 and "folds_scored" not in one


def test_unweighted_not_pooled() -> None:
    per_fold = {0: {"accuracy": 100.0, "n": 1}, **{k: {"accuracy": 0.0, "n": 3} for k in range(1, 5)}}
    assert over_folds(per_fold)["accuracy"] == 20.0  # pooled would be 100/13
    assert "accuracy" not in over_folds({k: per_fold[k] for k in range(4)})  # four folds: no mean, as the script


def test_ranking_splits_by_finalist_source(release: Path, tmp_path: Path) -> None:
    items = _key(release, "ranking")
    answers = {i.instance_id: "AB"[i.label or 0] if i.winner_source == "crowd_winner" else "AB"[1 - (i.label or 0)]
               for i in items}
    result = _score("nycc-ranking", answers, release, tmp_path)
    assert result["accuracy_crowd"] == 100.0 and result["accuracy_ny"] == 0.0
    assert result["accuracy_overall"] == 50.0 and result["n_crowd"] == result["n_ny"] == 10


def test_ranking_hand_case() -> None:
    def item(k: int, label: int, source: str) -> NyccItem:
        return NyccItem(f"i{k}", 0, "", choices=("x", "y"), label=label, winner_source=source)

    items = [item(0, 0, "crowd_winner"), item(1, 1, "crowd_winner"), item(2, 0, "official_winner")]
    values = fold_values("ranking", items, {"i0": "A", "i1": "A", "i2": "A"})
    assert values["accuracy_overall"] == pytest.approx(200 / 3) and values["accuracy_crowd"] == 50.0
    assert values["accuracy_ny"] == 100.0 and (values["n_crowd"], values["n_ny"]) == (2, 1)


def test_missing_fold_prediction_is_refused_in_one_line(release: Path, tmp_path: Path, capsys: Any) -> None:
    items = _key(release, "matching")
    answers = {i.instance_id: "A" for i in items if not (i.fold == 3 and i.row == 2)}
    path = tmp_path / "p.json"
    path.write_text(json.dumps(answers))
    assert main(["score", "nycc-matching", "--predictions", str(path), "--answer-key", str(release)]) == 2
    err = capsys.readouterr().err.strip()
    assert "fold 3: no prediction for 1 of its 4 test instances" in err and len(err.splitlines()) == 1
    assert "Traceback" not in err
    # the fold alone that has them all still scores
    assert _score("nycc-matching", answers, release, tmp_path, "--fold", "2")["n"] == 4


def test_empty_explanation_is_refused(release: Path, tmp_path: Path, capsys: Any) -> None:
    items = _key(release, "explanation")
    answers = {i.instance_id: "a joke" for i in items}
    answers[items[5].instance_id] = ""
    path = tmp_path / "p.json"
    path.write_text(json.dumps(answers))
    assert main(["score", "nycc-explanation", "--predictions", str(path), "--answer-key", str(release)]) == 2
    assert "fold 1: empty explanation" in capsys.readouterr().err


def test_bleu_is_sacrebleu_with_the_defaults() -> None:
    preds, refs = ["the cat sat on the mat", "a dog"], ["the cat is on the mat", "a dog barks"]
    assert bleu(preds, refs) == sacrebleu.corpus_bleu(preds, [refs]).score
    assert bleu(["the same five words here"], ["the same five words here"]) == pytest.approx(100.0)


def test_rouge_l_is_the_bootstrap_median_from_seed_1() -> None:
    preds = ["a b c d", "x y", "one two three", "p q r s t"]
    refs = ["a b c e", "a b", "one two three", "p s"]
    scorer = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL", "rougeLsum"], use_stemmer=False)
    aggregator = scoring.BootstrapAggregator()
    for r, p in zip(refs, preds):
        aggregator.add_scores(scorer.score(r, p))
    np.random.seed(1)
    expected = aggregator.aggregate()["rougeL"].mid.fmeasure
    np.random.seed(7)
    before = np.random.random()
    np.random.seed(7)
    median, mean = rouge_l(preds, refs)
    assert np.random.random() == before  # numpy's global generator is left as it was
    assert median == expected
    per_item = [0.75, 0.0, 1.0, 2 * (2 / 5 * 1.0) / (2 / 5 + 1.0)]  # LCS F by hand
    assert mean == pytest.approx(np.mean(per_item))
    assert rouge_l(["x y", "x y"], ["x y", "x y"]) == (1.0, 1.0)  # every resample the same: the tie case


def test_scoring_model_ties_go_to_the_first_caption(release: Path, tmp_path: Path) -> None:
    """``constant`` scores every caption alike: each choice is A, so accuracy is the share of gold A per fold."""
    config = EvalConfig(task="nycc-matching", model="constant", data_dir=release, out_dir=tmp_path / "run",
                        quiet=True, use_cache=False)
    result = run_evaluation(config)
    items = _key(release, "matching")
    per_fold = [100.0 * np.mean([i.label == 0 for i in items if i.fold == k]) for k in range(5)]
    assert result["metrics"]["accuracy"] == pytest.approx(np.mean(per_fold))
    written = json.loads((tmp_path / "run" / "matching_predictions.json").read_text())
    assert set(written.values()) == {"A"}
    # the run's own file, scored as the official format, gives the same figure
    again = _score("nycc-matching", written, release, tmp_path)
    assert again["accuracy"] == pytest.approx(result["metrics"]["accuracy"])


def test_leaderboard_split_writes_the_submission(release: Path, tmp_path: Path) -> None:
    config = EvalConfig(task="nycc-ranking", model="random", data_dir=release, out_dir=tmp_path / "lb",
                        split="leaderboard", quiet=True, use_cache=False)
    result = run_evaluation(config)
    assert result["metrics"]["instances"] == 4
    submission = json.loads((tmp_path / "lb" / "ranking_predictions.json").read_text())
    assert len(submission) == 4 and set(submission.values()) <= {"A", "B"}


@pytest.mark.parametrize(("text", "letter", "read"), [
    ("Thinking... Final Answer: C and more", "C", True),
    ("I compared them.\n\nAnswer: B", "B", True),
    ("Long reasoning.\n\nTherefore, the answer is D.", "D", True),
    ("Answer: A\n\nBut I am unsure.", "E", False),  # not in the last paragraph: the default letter
    ("final answer: c", "E", False),  # case matters
    ("", "E", False),
])
def test_official_answer_extraction(text: str, letter: str, read: bool) -> None:
    assert official_letter(text, "ABCDE") == (letter, read)


def test_ranking_default_letter_is_b() -> None:
    assert official_letter("no idea", "AB") == ("B", False)
    assert official_letter("Final Answer: C", "AB") == ("B", False)


def test_hub_cache_snapshot_is_found(release: Path, tmp_path: Path) -> None:
    repo = tmp_path / "hub" / REPO_FOLDER
    snapshot = repo / "snapshots" / ("a" * 40)
    shutil.copytree(release, snapshot)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("a" * 40)
    assert repo_root(tmp_path) == snapshot
    assert repo_root(tmp_path / "hub") == snapshot
    assert len(NyccDataset("matching").load(tmp_path, "fold0-test", pictures=False)) == 4


def test_unknown_layout_is_refused_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "matching").mkdir()
    (tmp_path / "matching" / "newyorker_caption_contest-test.parquet").write_bytes(b"")
    with pytest.raises(AbductError, match=r"no test-NNNNN-of-NNNNN.parquet \(found: newyorker_caption_contest-test"):
        NyccDataset("matching").load(tmp_path, "fold0-test")
    (tmp_path / "other" / "stray").mkdir(parents=True)
    with pytest.raises(AbductError, match="no NYCC configs .* found: stray$"):
        repo_root(tmp_path / "other")


def test_missing_column_names_the_columns_found(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    (tmp_path / "ranking").mkdir()
    pq.write_table(pa.Table.from_pylist([{"instance_id": "x", "label": "A"}]),
                   tmp_path / "ranking" / "test-00000-of-00001.parquet")
    with pytest.raises(AbductError, match="no image, caption_choices, winner_source, from_description column .*"
                                          "columns found: instance_id, label"):
        NyccDataset("ranking").load(tmp_path, "fold0-test")


def test_bad_fold_and_split(release: Path) -> None:
    with pytest.raises(AbductError, match="fold must be 0, 1, 2, 3, 4 or all"):
        run_evaluation(EvalConfig(task="nycc-matching,fold=5", model="random", data_dir=release,
                                  out_dir=release.parent / "x", quiet=True))
    with pytest.raises(AbductError, match="NYCC split must be"):
        NyccDataset("matching").load(release, "dev")


def test_synth_and_check_commands(tmp_path: Path) -> None:
    assert main(["nycc", "synth", "--out", str(tmp_path / "d"), "--per-fold", "2"]) == 0
    assert main(["nycc", "check", "--data", str(tmp_path / "d")]) == 0
    shutil.rmtree(tmp_path / "d" / "ranking_3")
    assert main(["nycc", "check", "--data", str(tmp_path / "d")]) == 1


def test_published_row_is_listed() -> None:
    from abduct.host import build_registry

    rows = [r for r in build_registry().published() if r.task.startswith("nycc-")]
    assert rows and all(r.source and r.conditions for r in rows)


class RuleJudge:
    """Prefers A (the generated explanation) when it mentions "green", B otherwise; "maybe" for
    contest texts naming purple (an answer that names neither)."""

    fingerprint = "nycc-rule-judge-v1"

    def generate(self, requests: Any, decoding: Any, pool: Any) -> list[str]:
        replies = []
        for request in requests:
            a = request.prompt.split("Explanation A:")[1].split("Explanation B:")[0]
            replies.append("maybe" if "purple" in a else ("A." if "green" in a else "B"))
        return replies


class RedGreenJudge(RuleJudge):
    """Prefers A when it mentions green or red, B otherwise; always a verdict."""

    fingerprint = "nycc-red-green-judge-v1"

    def generate(self, requests: Any, decoding: Any, pool: Any) -> list[str]:
        said = [r.prompt.split("Explanation A:")[1].split("Explanation B:")[0] for r in requests]
        return ["A" if "green" in a or "red" in a else "B" for a in said]


def test_two_judges_agreement_through_abduct_eval(release: Path, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    from abduct.host import reset_registry
    from abduct_testing import registry_with_models

    reset_registry(registry_with_models("nycc-test", {"nycc-rule-judge": ("prefers green", RuleJudge),
                                                      "nycc-red-green-judge": ("prefers green or red", RedGreenJudge)}))
    try:
        assert main(["eval", "nycc-explanation,judge_order=fixed", "--model", "random", "--data", str(release), "--out",
                     str(tmp_path / "j"), "--judge", "nycc-rule-judge", "--judge", "nycc-red-green-judge",
                     "--no-cache"]) == 0
    finally:
        reset_registry(None)
    said_by_cli = capsys.readouterr().out  # the task reads the A/B answers: no yes/no counts in the summary
    assert "judged by nycc-rule-judge: 20 items (answers read by the task)" in said_by_cli
    assert "also judged by nycc-red-green-judge: 20 items (answers read by the task)" in said_by_cli
    results = json.loads((tmp_path / "j" / "results.json").read_text())
    said = [json.loads(line)["prediction"] for line in (tmp_path / "j" / "predictions.jsonl").read_text().splitlines()]
    # verdicts (first, second): green (A, A), red (B, A), another colour (B, B), purple (unread, B)
    green, red, purple = (sum(f"everything is {c}" in s for s in said) for c in ("green", "red", "purple"))
    other = len(said) - green - red - purple
    assert min(green, red, purple, other) > 0
    block = results["details"]["judge_agreement"]
    first, second = block["judges"]
    assert block["human_labels"] == 0 and "human" not in first and "alpha_with_people" not in block
    assert (first["read"], first["unread"], second["read"]) == (len(said) - purple, purple, len(said))
    assert first["score"] == pytest.approx(results["metrics"]["judge_preference"])
    assert second["score"] == pytest.approx(100 * (green + red) / len(said))
    # the items both read (m): the first prefers A on green only, the second on green and red
    m = green + red + other
    (pair,) = block["pairs"]
    p_o, p_e = (green + other) / m, (green * (green + red) + (red + other) * other) / m**2
    assert pair["both_read"] == m and pair["kappa"] == pytest.approx((p_o - p_e) / (1 - p_e))
    assert pair["difference"] == pytest.approx(100 * red / m)  # the second's preference minus the first's
    # alpha: o_AA = 2 x green, o_BB = 2 x other, o_AB = o_BA = red; purple has one value, not pairable
    n_a, n_b = 2 * green + red, 2 * other + red
    assert block["alpha"] == pytest.approx(1 - (2 * m - 1) * 2 * red / (2 * n_a * n_b))
    assert "Judge agreement" in (tmp_path / "j" / "report.html").read_text()
    capsys.readouterr()
    assert main(["compare", str(tmp_path / "j")]) == 0
    assert f"{pair['kappa']:.3f}" in capsys.readouterr().out  # the further judge against the first


def test_judge_preference_against_the_reference(release: Path, tmp_path: Path) -> None:
    from abduct_testing import registry_with_models

    registry = registry_with_models("nycc-test", {"nycc-rule-judge": ("prefers green", RuleJudge)})
    config = EvalConfig(task="nycc-explanation,judge_order=fixed", model="random", data_dir=release,
                        out_dir=tmp_path / "j", judge="nycc-rule-judge", quiet=True, use_cache=False)
    result = run_evaluation(config, registry)
    rows = [json.loads(line) for line in (tmp_path / "j" / "predictions.jsonl").read_text().splitlines()]
    verdicts = [None if "purple" in r["prediction"] else "green" in r["prediction"] for r in rows]
    read = [v for v in verdicts if v is not None]
    assert 0 < sum(read) < len(read) < len(verdicts)  # the case holds A, B and unread verdicts
    assert result["metrics"]["judge_unparsed"] == len(verdicts) - len(read)
    assert result["metrics"]["judge_preference"] == pytest.approx(100.0 * sum(read) / len(read))
    assert [r["judge_prefers_generated"] for r in rows] == verdicts
    assert "judge_order_consistency" not in result["metrics"]


def test_judge_asked_in_both_orders_cancels_a_position(release: Path, tmp_path: Path) -> None:
    """The default: each item judged with the generated explanation as A, then as B. An item
    scores 1 or 0 when its verdicts agree, 0.5 when they differ; unread in either order, it is
    unparsed. A judge that always answers A prefers nothing."""
    from abduct_testing import registry_with_models

    class AlwaysA(RuleJudge):
        fingerprint = "nycc-always-a-v1"

        def generate(self, requests: Any, decoding: Any, pool: Any) -> list[str]:
            return ["A" for _ in requests]

    registry = registry_with_models("nycc-test", {"nycc-rule-judge": ("prefers green", RuleJudge),
                                                  "nycc-always-a": ("always A", AlwaysA)})
    result = run_evaluation(EvalConfig(task="nycc-explanation", model="random", data_dir=release, out_dir=tmp_path / "j",
                                       judge="nycc-rule-judge", quiet=True, use_cache=False), registry)
    rows = [json.loads(line) for line in (tmp_path / "j" / "predictions.jsonl").read_text().splitlines()]

    def rule(text: str) -> bool | None:  # RuleJudge on the explanation shown as A: does it prefer A?
        return None if "purple" in text else "green" in text

    first = [rule(r["prediction"]) for r in rows]
    swapped = [None if rule(r["reference"]) is None else not rule(r["reference"]) for r in rows]
    expected = [None if a is None or b is None else (float(a) if a == b else 0.5) for a, b in zip(first, swapped)]
    read = [e for e in expected if e is not None]
    assert {0.0, 0.5, 1.0} <= set(read) and len(read) < len(expected)  # the case holds every outcome
    metrics = result["metrics"]
    assert metrics["judge_preference"] == pytest.approx(100.0 * sum(read) / len(read))
    assert metrics["judge_unparsed"] == len(expected) - len(read)
    both = [(a, b) for a, b in zip(first, swapped) if a is not None and b is not None]
    assert metrics["judge_order_consistency"] == pytest.approx(100.0 * sum(a == b for a, b in both) / len(both))
    assert [r["judge_preference"] for r in rows] == expected
    assert [r["judge_prefers_generated_swapped"] for r in rows] == swapped
    assert result["details"]["judge_order"].startswith("both")

    biased = run_evaluation(EvalConfig(task="nycc-explanation", model="random", data_dir=release,
                                       out_dir=tmp_path / "a", judge="nycc-always-a", quiet=True, use_cache=False),
                            registry)["metrics"]
    assert (biased["judge_preference"], biased["judge_order_consistency"], biased["judge_unparsed"]) == (50.0, 0.0, 0)
    fixed = run_evaluation(EvalConfig(task="nycc-explanation,judge_order=fixed", model="random", data_dir=release,
                                      out_dir=tmp_path / "f", judge="nycc-always-a", quiet=True, use_cache=False),
                           registry)["metrics"]
    assert fixed["judge_preference"] == 100.0  # what one order alone reports for a judge that always says A
