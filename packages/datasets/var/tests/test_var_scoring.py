"""Official scoring: hand-computed BLEU and CIDEr-D, non-ASCII and tie cases, the real val file,
BERTScore's per-example averaging on a tiny local model, and the submission checks."""

from __future__ import annotations

import json
import math
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from abduct_testing import main, shared_data_dir
from abduct_var.loader import load_split
from abduct_var.scoring import BertScoreSettings, score_entries, score_sets
from abduct_var.submission import Entry, build_submission, parse_submission, validate_against

REAL = shared_data_dir()
needs_real = pytest.mark.skipif(REAL is None or not (REAL / "var").is_dir(), reason="shared VAR files absent")


def entries(*rows: tuple[str, str, bool], example: str = "x") -> list[Entry]:
    return [Entry(example, i, pred, ref, hyp) for i, (pred, ref, hyp) in enumerate(rows)]


def test_bleu_by_hand() -> None:
    # event 1: 4 words, all match a 5-word reference; event 2: "a b x d" against "a b c d".
    # Corpus counts: 1-grams 7/8, 2-grams 4/6, 3-grams 2/4, 4-grams 1/2; hypothesis length 8,
    # closest reference lengths 5 + 4 = 9, so the brevity penalty is exp(1 - 9/8).
    scores = score_entries(entries(("a b c d", "a b c d e", False), ("a b x d", "A b, c d", True)), meteor=False)["all"]
    bp = math.exp(1 - 9 / 8)
    precisions = [7 / 8, 4 / 6, 2 / 4, 1 / 2]
    for n in range(1, 5):
        expected = 100 * bp * math.prod(precisions[:n]) ** (1 / n)
        assert scores[f"bleu_{n}"] == pytest.approx(expected, rel=1e-6)


def test_tokenised_in_the_kits_order() -> None:
    # PTB keeps "d." as an initial unless a capitalised line follows: so the kit tokenises the
    # predictions and the references apart, each in order
    from abduct_var.scoring import kit_tokens

    predictions, references = kit_tokens(entries(("A b c d.", "x y", True), ("A b x d.", "a b, c d.", False)))
    assert predictions == ["a b c d", "a b x d."] and references == ["x y", "a b c d."]


def test_cider_by_hand_with_document_frequencies_from_the_scored_references() -> None:
    # References "p q" and "r s": each 1-gram and 2-gram has df 1 of 2 documents. Event 1 is
    # exact: cosine 1 for n = 1, 2 and nothing for n = 3, 4 (two-word sentences), so CIDEr-D =
    # 10 * (1 + 1 + 0 + 0) / 4 = 5; event 2 shares nothing with its reference: 0. Mean 2.5, x100.
    scored = score_entries(entries(("p q", "p q", True), ("p q", "r s", False)), separate=True)
    assert scored["all"]["cider"] == pytest.approx(250.0, abs=1e-6)
    # each set has its own frequencies: alone, event 1's n-grams occur in every reference (idf 0)
    assert scored["hypothesis"]["cider"] == pytest.approx(0.0, abs=1e-9)
    assert scored["observed"]["cider"] == pytest.approx(0.0, abs=1e-9)
    assert scored["all"]["meteor"] == pytest.approx(50.0, abs=0.5)  # mean of 100 and 0
    assert scored["all"]["rouge_l"] == pytest.approx(50.0, abs=1e-6)


def test_non_ascii_becomes_a_space_before_tokenisation() -> None:
    # "naïve" -> "na ve": two tokens, so only "plan" of three matches "naive plan"
    assert score_entries(entries(("naïve plan", "naive plan", True)), meteor=False)["all"]["bleu_1"] == pytest.approx(
        100 / 3, rel=1e-6)  # longer than its reference: no brevity penalty
    # the same character on both sides matches
    same = score_entries(entries(("the café opens", "The café opens.", True)), meteor=False)["all"]
    # three words: no 4-gram, so pycocoevalcap's smoothing (1e-15 / 1e-9) makes the 4-gram precision 1e-6
    assert same["bleu_4"] == pytest.approx(100 * 1e-6 ** 0.25, rel=1e-4)
    assert same["bleu_3"] == pytest.approx(100.0, rel=1e-6)


def test_ties_duplicates_and_order_do_not_change_scores() -> None:
    # examples sharing one chain (the release has them) score each event on its own
    rows = [("a dog runs", "a dog runs fast", False), ("it rains", "it is raining", True)]
    one = entries(*rows, example="a") + entries(*rows, example="b")
    reordered = list(reversed(one))
    forward, backward = score_entries(one, meteor=False)["all"], score_entries(reordered, meteor=False)["all"]
    assert forward == pytest.approx(backward, rel=1e-12)  # equal up to the order of a float sum
    tie = entries(("same words here", "same words here", True), ("same words here", "same words here", False))
    scored = score_entries(tie, meteor=False)["all"]
    assert scored["bleu_3"] == pytest.approx(100.0, rel=1e-6) and scored["rouge_l"] == pytest.approx(100.0)


@needs_real
def test_real_val_references_and_shuffled_references(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert REAL is not None
    examples, _ = load_split(REAL / "var", "val")
    exact = [Entry(x.id, i, e.sentence, e.sentence, i == x.hypothesis) for x in examples for i, e in enumerate(x.counted)]
    (tmp_path / "exact.json").write_text(json.dumps(build_submission(exact)))
    assert main(["var", "validate-submission", "--predictions", str(tmp_path / "exact.json"),
                 "--data", str(REAL / "var")]) == 0
    assert main(["score", "var", "--predictions", str(tmp_path / "exact.json"), "--json"]) == 0
    perfect = json.loads(capsys.readouterr().out.split("\n", 1)[1])["all"]
    assert perfect["meteor"] == pytest.approx(100.0) and perfect["rouge_l"] == pytest.approx(100.0)
    assert perfect["cider"] == pytest.approx(1000.0) and perfect["bleu_4"] == pytest.approx(100.0, abs=1e-6)
    sentences = [e.sentence for e in exact]
    random.Random(0).shuffle(sentences)
    shuffled = [Entry(e.example_id, e.position, s, e.gt_sentence, e.is_hypothesis) for e, s in zip(exact, sentences)]
    scores = score_entries(shuffled, meteor=False)["all"]
    # shuffled references still share function words, far from the exact figures
    assert 5 < scores["bleu_1"] < 30 and scores["bleu_4"] < 2 and scores["cider"] < 15


def test_submission_checks(corpus: Path) -> None:
    examples, _ = load_split(corpus, "val")
    full = [Entry(x.id, i, "x", e.sentence, i == x.hypothesis) for x in examples for i, e in enumerate(x.counted)]
    assert validate_against(full, examples) == []
    first = examples[0].id
    swapped = [e for e in full if e.example_id == first]
    swapped[0], swapped[1] = swapped[1], swapped[0]
    problems = validate_against([*swapped, *[e for e in full if e.example_id != first]], examples)
    assert problems == [f"example {first}: events in the wrong order (expected the annotation's order)"]
    assert validate_against(full[1:], examples)[0].startswith(f"example {first}: ")
    assert validate_against([e for e in full if e.example_id != first], examples) == [f"example {first}: missing"]
    hypotheses = [e for e in full if e.is_hypothesis]
    assert validate_against(hypotheses, examples, which="hypothesis") == []
    assert "is_hypothesis is False" in validate_against(
        [Entry(e.example_id, 0, e.sentence, e.gt_sentence, False) for e in hypotheses], examples, which="hypothesis")[0]


@pytest.mark.parametrize("data, field", [
    ({"x": [{"sentence": "a", "gt_sentence": "b"}]}, "[0].is_hypothesis"),
    ({"x": [{"sentence": 1, "gt_sentence": "b", "is_hypothesis": True}]}, "[0].sentence"),
    ({"x": [{"sentence": "a", "gt_sentence": "b", "is_hypothesis": "yes"}]}, "[0].is_hypothesis"),
])
def test_bad_submission_names_example_and_field(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                 data: object, field: str) -> None:
    path = tmp_path / "sub.json"
    path.write_text(json.dumps(data))
    assert main(["score", "var", "--predictions", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert f"{path}, record x, field '{field}'" in err and len(err.splitlines()) == 1
    with pytest.raises(Exception):
        parse_submission([], path)


def test_score_cli_refuses_an_answer_key_and_prints_sets(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "sub.json"
    path.write_text(json.dumps(build_submission(entries(("a b c", "a b c", True), ("d e", "d f", False)))))
    assert main(["score", "var", "--predictions", str(path), "--answer-key", str(path)]) == 2
    assert "carries its references" in capsys.readouterr().err
    assert main(["score", "var", "--predictions", str(path), "--separate"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("all:\n  bleu_1:") and "\nobserved:\n" in out and "\nhypothesis:\n" in out


def test_bertscore_averages_per_example_then_over_examples(tmp_path: Path) -> None:
    import bert_score
    import numpy as np

    from abduct_metrics.testing import build_tiny_bert

    model = build_tiny_bert(tmp_path / "bert", seed=4)
    baseline = tmp_path / "baseline.tsv"
    baseline.write_text("LAYER,P,R,F\n" + "".join(f"{i},0.2,0.3,0.25\n" for i in range(3)))
    rows = [("a man rides a horse", "a man is riding a horse", "x"), ("two dogs play", "dogs playing in snow", "x"),
            ("a red car", "the blue car", "y")]
    subs = [Entry(ex, i, p, r, i == 0) for i, (p, r, ex) in enumerate(rows)]
    settings = BertScoreSettings(model, layers=2, baseline=baseline)
    got = score_entries(subs, bertscore=settings, meteor=False)["all"]["bertscore_f1"]
    # the eval kit: bert_score.score on the tokenised strings, F1 averaged per example, then over examples
    _, _, f1 = bert_score.score([p for p, _, _ in rows], [r for _, r, _ in rows], model_type=str(model), num_layers=2,
                                lang="en", rescale_with_baseline=True, baseline_path=str(baseline))
    values = f1.numpy()
    assert got == pytest.approx(100 * float(np.mean([values[:2].mean(), values[2]])), rel=1e-5)
    # its interval resamples examples, each with the mean F1 of its events
    units = score_sets(subs, bertscore=settings, meteor=False)["all"].units(subs)["bertscore_f1"]
    assert units.ids == ("x", "y") and units.unit == "video example"
    assert units.values == pytest.approx((100 * float(values[:2].mean()), 100 * float(values[2])), rel=1e-5)


@pytest.fixture(scope="module")
def kit_meteor() -> Iterator[Any]:
    """pycocoevalcap's own ``Meteor()``, one JVM for this module's reference side (its stdio
    protocol is stateless, so the kit's per-call JVM gives the same numbers)."""
    from pycocoevalcap.meteor.meteor import Meteor

    meteor = Meteor()
    yield meteor
    meteor.meteor_p.stdin.close()
    meteor.meteor_p.kill()
    meteor.meteor_p.wait()


def _pycocoevalcap_directly(entries: list[Entry], meteor: Any) -> dict[str, float]:
    """The eval kit's path, written against pycocoevalcap's own classes: its PTBTokenizer over
    the predictions, then over the references, each event an image with one caption; BLEU at
    corpus level, the other three as means of per-event scores; x100. ``meteor``: ``kit_meteor``."""
    import numpy as np
    from pycocoevalcap.bleu.bleu import Bleu
    from pycocoevalcap.cider.cider import Cider
    from pycocoevalcap.rouge.rouge import Rouge
    from pycocoevalcap.tokenizer.ptbtokenizer import PTBTokenizer

    def spaces(text: str) -> str:
        return "".join(c if ord(c) < 128 else " " for c in text)

    tokenizer = PTBTokenizer()
    res = tokenizer.tokenize({i: [{"caption": spaces(e.sentence)}] for i, e in enumerate(entries)})
    gts = tokenizer.tokenize({i: [{"caption": spaces(e.gt_sentence)}] for i, e in enumerate(entries)})
    bleu, _ = Bleu(4).compute_score(gts, res, verbose=0)
    out = {f"bleu_{n + 1}": 100 * float(v) for n, v in enumerate(bleu)}
    out["meteor"] = 100 * float(np.mean(meteor.compute_score(gts, res)[1]))
    out["rouge_l"] = 100 * float(np.mean(Rouge().compute_score(gts, res)[1]))
    out["cider"] = 100 * float(np.mean(Cider().compute_score(gts, res)[1]))
    return out


@needs_real
def test_equals_pycocoevalcap_on_real_val_events(kit_meteor: Any) -> None:
    assert REAL is not None
    examples, _ = load_split(REAL / "var", "val")
    exact = [Entry(x.id, i, e.sentence, e.sentence, i == x.hypothesis)
             for x in examples[:120] for i, e in enumerate(x.counted)]
    sentences = [e.sentence for e in exact]
    random.Random(1).shuffle(sentences)
    shuffled = [Entry(e.example_id, e.position, s, e.gt_sentence, e.is_hypothesis) for e, s in zip(exact, sentences)]
    ours = score_entries(shuffled)["all"]
    assert ours == pytest.approx(_pycocoevalcap_directly(shuffled, kit_meteor), rel=1e-12, abs=1e-12)


# Text PTB rewrites, and rewrites again on a second pass (``:)`` -> ``:-rrb-`` -> ``-rrb-``).
REWRITTEN = [" :) ", " (smiling) ", ' "quoted" ', " http://example.com/x_y?a=1&b=2 ", " -lrb- ", " & ",
             " J. R. Smith ", " wait... ", " café ", " ;-) ", " [sic] ", " 'single' "]


def _with_rewrites(sentence: str, rng: random.Random) -> str:
    words = sentence.split(" ")
    for _ in range(rng.randint(1, 3)):
        words.insert(rng.randrange(len(words) + 1), rng.choice(REWRITTEN).strip())
    return " ".join(words)


@needs_real
@pytest.mark.parametrize("in_references", [False, True])
def test_equals_the_kit_on_text_ptb_rewrites(in_references: bool, kit_meteor: Any) -> None:
    """Real val events with brackets, emoticons, quotes, URLs, PTB escapes, initials in the
    predictions (and references): every value equals the kit's procedure to 1e-9."""
    assert REAL is not None
    examples, _ = load_split(REAL / "var", "val")
    rng = random.Random(2)
    exact = [Entry(x.id, i, e.sentence, e.sentence, i == x.hypothesis)
             for x in examples[:80] for i, e in enumerate(x.counted)]
    rows = [Entry(e.example_id, e.position, _with_rewrites(e.sentence, rng),
                  _with_rewrites(e.gt_sentence, rng) if in_references else e.gt_sentence, e.is_hypothesis)
            for e in exact]
    ours = score_entries(rows)["all"]
    theirs = _pycocoevalcap_directly(rows, kit_meteor)
    for key, value in theirs.items():
        assert abs(ours[key] - value) <= 1e-9, key


@pytest.mark.parametrize("brk", ["\r", "\r\n", "\x0b", "\x0c"])
def test_line_break_is_read_as_a_space_with_a_warning(brk: str) -> None:
    """The one deliberate difference from the kit, whose tokenizer would put every later event
    on the wrong reference: abduct reads the break as a space."""
    rows = entries((f"a man{brk}walks in", "a man walks in", False), ("he sits down", "he sits down", True))
    with pytest.warns(UserWarning, match="line break"):
        scored = score_entries(rows, meteor=False)["all"]
    assert scored["bleu_1"] == pytest.approx(100.0) and scored["cider"] == pytest.approx(
        score_entries(entries(("a man walks in", "a man walks in", False), ("he sits down", "he sits down", True)),
                      meteor=False)["all"]["cider"])


def test_event_of_punctuation_only_scores_zero_without_a_crash() -> None:
    rows = entries(("...", "a man walks", False), ("he sits down", "he sits down", True))
    with pytest.warns(UserWarning, match="no token"):
        scored = score_entries(rows, meteor=False)["all"]
    assert scored["rouge_l"] == pytest.approx(50.0)


def test_bertscore_on_an_event_of_punctuation_only_is_bert_scores_zero(tmp_path: Path) -> None:
    """bert-score crashes on an empty candidate with current transformers (so does the kit);
    abduct gives its documented raw 0, rescaled: (0 - 0.25) / (1 - 0.25) for F1 here."""
    from abduct_metrics.testing import build_tiny_bert

    model = build_tiny_bert(tmp_path / "bert", seed=4)
    baseline = tmp_path / "baseline.tsv"
    baseline.write_text("LAYER,P,R,F\n" + "".join(f"{i},0.2,0.3,0.25\n" for i in range(3)))
    rows = [Entry("x", 0, "?", "a man rides a horse", True), Entry("y", 0, "...", "two dogs play", True)]
    with pytest.warns(UserWarning, match="empty prediction"):
        got = score_entries(rows, bertscore=BertScoreSettings(model, layers=2, baseline=baseline),
                            meteor=False)["all"]["bertscore_f1"]
    assert got == pytest.approx(100 * (0 - 0.25) / (1 - 0.25))
