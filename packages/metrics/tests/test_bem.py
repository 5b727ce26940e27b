"""BEM: input layout checked token by token, scores against the classifier run directly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from transformers import AutoModelForSequenceClassification, AutoTokenizer

from abduct import AbductError, Settings
from abduct.host import get_registry
from abduct_metrics._bem import Bem
from abduct_testing import MetricContract, main


def vocab_ids(model_dir: Path) -> dict[str, int]:
    """Token -> id read straight from vocab.txt (line number), independent of the tokenizer."""
    lines = (model_dir / "vocab.txt").read_text(encoding="utf-8").splitlines()
    return {token: i for i, token in enumerate(lines)}


CAND, REF, QUESTION = "A Dog", "the red car", "Is the man riding?"


def test_original_layout_token_by_token(tiny_bem) -> None:
    v = vocab_ids(tiny_bem)
    ids, types = Bem(model=str(tiny_bem), segments="original").encode(CAND, REF, QUESTION)
    expected = ["[CLS]", "a", "dog", "[SEP]", "the", "red", "car", "[SEP]", "is", "the", "man", "riding", "[UNK]", "[SEP]"]
    assert ids == [v[t] for t in expected]
    assert types == [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2]


def test_pairs_layout_token_by_token(tiny_bem_pairs) -> None:
    v = vocab_ids(tiny_bem_pairs)
    ids, types = Bem(model=str(tiny_bem_pairs), segments="pairs").encode(CAND, REF, QUESTION)
    expected = ["[CLS]", "a", "dog", "[SEP]", "the", "red", "car", "[SEP]", "is", "the", "man", "riding", "[UNK]", "[SEP]"]
    assert ids == [v[t] for t in expected]
    assert types == [0] * 4 + [1] * 10


def test_pairs_layout_equals_the_reproductions_tokenizer_call(tiny_bem_pairs) -> None:
    tokenizer = AutoTokenizer.from_pretrained(str(tiny_bem_pairs))
    bem = Bem(model=str(tiny_bem_pairs), segments="pairs")
    for cand, ref, q in [(CAND, REF, QUESTION), ("two dogs play", "dogs", "what do the dogs do?")]:
        enc = tokenizer(text=f"[CLS] {cand} [SEP]", text_pair=f"{ref} [SEP] {q} [SEP]", add_special_tokens=False)
        assert bem.encode(cand, ref, q) == (enc["input_ids"], enc["token_type_ids"])


def test_long_inputs_are_truncated_longest_part_first(tiny_bem) -> None:
    bem = Bem(model=str(tiny_bem))
    ids, types = bem.encode("dog " * 200, "red car", "is it?")
    assert len(ids) == bem.max_length == 128 and len(types) == 128
    assert types.count(1) == 3 and types.count(2) == 4  # reference and question untouched


def _direct_probability(model_dir: Path, ids: list[int], types: list[int]) -> float:
    model = AutoModelForSequenceClassification.from_pretrained(str(model_dir)).eval()
    with torch.no_grad():
        logits = model(input_ids=torch.tensor([ids]), token_type_ids=torch.tensor([types])).logits
    return float(torch.softmax(logits.double(), dim=-1)[0, 1])


def test_scores_em_first_then_max_over_references(tiny_bem) -> None:
    v = vocab_ids(tiny_bem)
    predictions = {"q1": "a red car", "q2": "Two dogs", "q3": "the man"}
    references = {"q1": ["dog", "blue car"], "q2": ["2 dogs", "cat"], "q3": ["woman"]}
    questions = {"q1": "what is it?", "q2": "how many dogs?", "q3": "who is riding?"}
    result = Bem(model=str(tiny_bem), batch_size=2).compute(predictions, references, questions)

    def by_hand(cand: list[str], ref: list[str], q: list[str]) -> float:
        tokens = ["[CLS]", *cand, "[SEP]", *ref, "[SEP]", *q, "[SEP]"]
        types = [0] * (len(cand) + 2) + [1] * (len(ref) + 1) + [2] * (len(q) + 1)
        return _direct_probability(tiny_bem, [v[t] for t in tokens], types)

    q1 = max(by_hand(["a", "red", "car"], ["dog"], ["what", "is", "it", "[UNK]"]),
             by_hand(["a", "red", "car"], ["blue", "car"], ["what", "is", "it", "[UNK]"]))
    q3 = by_hand(["the", "man"], ["woman"], ["who", "is", "riding", "[UNK]"])
    assert result.per_sample["q1"]["bem_score"] == pytest.approx(q1, abs=1e-6)
    assert result.per_sample["q3"]["bem_score"] == pytest.approx(q3, abs=1e-6)
    assert result.per_sample["q2"] == {"bem": 100.0, "bem_score": 1.0, "exact_match": 100.0}
    assert result.info["bem_calls"] == 3  # q2 matched exactly: never sent to the classifier
    for row in result.per_sample.values():
        assert row["bem"] == 100.0 * (row["bem_score"] >= 0.5)
    assert result.corpus["bem"] == pytest.approx(sum(r["bem"] for r in result.per_sample.values()) / 3, abs=1e-12)


def test_batching_does_not_change_scores(tiny_bem) -> None:
    predictions = {f"i{i}": f"{'dog ' * (i + 1)}" for i in range(5)}
    references = {k: ["red car", "a man riding a horse"] for k in predictions}
    questions = {k: "what is in the street" for k in predictions}
    one = Bem(model=str(tiny_bem), batch_size=1).compute(predictions, references, questions)
    many = Bem(model=str(tiny_bem), batch_size=64).compute(predictions, references, questions)
    for k in predictions:
        assert one.per_sample[k]["bem_score"] == pytest.approx(many.per_sample[k]["bem_score"], abs=1e-6)


def test_configuration_errors(tiny_bem, tiny_bem_pairs, tmp_path) -> None:
    with pytest.raises(AbductError, match="type_vocab_size 2"):
        Bem(model=str(tiny_bem_pairs), segments="original")
    with pytest.raises(AbductError, match="segments must be one of"):
        Bem(model=str(tiny_bem), segments="triples")
    with pytest.raises(AbductError, match="not found"):
        Bem(model=str(tmp_path / "nope"))
    with pytest.raises(AbductError, match="needs the questions"):
        Bem(model=str(tiny_bem)).compute({"a": "x"}, {"a": ["y"]})


def test_factory_options_and_settings(tiny_bem, tiny_bem_pairs) -> None:
    registry = get_registry()
    with pytest.raises(AbductError, match="option 'model'.*is required"):
        registry.create("metric", "bem")
    with pytest.raises(AbductError, match="'triples' is not one of original, pairs"):
        registry.create("metric", f"bem,model={tiny_bem},segments=triples")
    bem = registry.create("metric", f"bem,model={tiny_bem_pairs},segments=pairs", Settings(device="cpu", batch_size=3))
    assert (bem.segments, bem.batch_size, bem.device) == ("pairs", 3, "cpu")
    assert registry.create("metric", f"bem,model={tiny_bem},batch_size=5", Settings(batch_size=3)).batch_size == 5


def test_cli(tiny_bem, tmp_path, capsys) -> None:
    files = {"p": {"a": "a dog", "b": "two"}, "r": {"a": ["the dog"], "b": ["three"]}, "q": {"a": "what?", "b": "how many?"}}
    for name, obj in files.items():
        (tmp_path / f"{name}.json").write_text(json.dumps(obj))
    args = ["metric", "bem", "--predictions", str(tmp_path / "p.json"), "--references", str(tmp_path / "r.json"),
            "-o", f"model={tiny_bem}", "--json", "--per-sample"]
    assert main(args) == 2  # no --questions
    assert "needs the questions" in capsys.readouterr().err
    assert main([*args, "--questions", str(tmp_path / "q.json")]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["per_sample"]["a"]["exact_match"] == 100.0 and out["per_sample"]["b"]["exact_match"] == 0.0
    assert out["bem"] == pytest.approx((100.0 + out["per_sample"]["b"]["bem"]) / 2)
    same = ["metric", f"bem,model={tiny_bem},segments=original", *args[2:6], "--questions", str(tmp_path / "q.json"),
            "--json", "--per-sample", "--batch-size", "1"]
    assert main(same) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["bem"] == out["bem"]
    for key, row in out["per_sample"].items():
        assert again["per_sample"][key] == pytest.approx(row, abs=1e-6)


class TestBemContract(MetricContract):
    questions = {"a": "what is the man doing?", "b": "what are the dogs doing?"}

    @pytest.fixture(autouse=True)
    def _model(self, tiny_bem_pairs):
        self.model_dir = tiny_bem_pairs

    def make_metric(self):
        return get_registry().create("metric", f"bem,model={self.model_dir},segments=pairs")
