"""COCO caption metrics equal pycocoevalcap run directly (its tokenizer and scorers)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from pycocoevalcap.bleu.bleu import Bleu
from pycocoevalcap.cider.cider import Cider
from pycocoevalcap.rouge.rouge import Rouge
from pycocoevalcap.tokenizer.ptbtokenizer import PTBTokenizer

from abduct import AbductError, Metric
from abduct.host import get_registry
from abduct_metrics import _coco
from abduct_metrics._coco import CocoCaptionMetric
from abduct_metrics._common import SCALE
from abduct_metrics._ptb import ptb_tokenize
from abduct_testing import MetricContract, main

TOL = 1e-9


def create(spec: str) -> Metric:
    """A metric built the way tasks and `abduct metric` build it: through the registry."""
    metric: Metric = get_registry().create("metric", spec)
    return metric


def direct(predictions: dict[str, str], references: dict[str, list[str]], meteor) -> dict:
    """The pycocoevalcap pipeline as COCOEvalCap runs it: tokenize gts and res, then score
    (``meteor``: the session's pycocoevalcap ``Meteor()``, see conftest)."""
    tokenizer = PTBTokenizer()
    gts = tokenizer.tokenize({k: [{"caption": r} for r in references[k]] for k in predictions})
    res = tokenizer.tokenize({k: [{"caption": predictions[k]}] for k in predictions})
    out = {}
    bleu, bleu_each = Bleu(4).compute_score(gts, res, verbose=0)
    out["bleu"] = (bleu, bleu_each)
    out["meteor"] = meteor.compute_score(gts, res)
    out["rouge_l"] = Rouge().compute_score(gts, res)
    out["cider"] = Cider().compute_score(gts, res)
    return out


@pytest.fixture(scope="module")
def both(caption_data, reference_meteor):
    predictions, references = caption_data
    ours = CocoCaptionMetric().compute(predictions, references)
    return ours, direct(predictions, references, reference_meteor), list(predictions)


def test_bleu_equals_pycocoevalcap(both) -> None:
    ours, ref, ids = both
    corpus, each = ref["bleu"]
    for n in range(4):
        assert abs(ours.corpus[f"bleu_{n + 1}"] - SCALE * corpus[n]) <= SCALE * TOL
        got = [ours.per_sample[k][f"bleu_{n + 1}"] for k in ids]
        np.testing.assert_allclose(got, SCALE * np.asarray(each[n]), rtol=0, atol=SCALE * TOL)


@pytest.mark.parametrize("key", ["meteor", "rouge_l", "cider"])
def test_per_sample_metrics_equal_pycocoevalcap(both, key) -> None:
    ours, ref, ids = both
    corpus, each = ref[key]
    assert abs(ours.corpus[key] - SCALE * corpus) <= SCALE * TOL
    np.testing.assert_allclose([ours.per_sample[k][key] for k in ids], SCALE * np.asarray(each, dtype=float), rtol=0,
                               atol=SCALE * TOL)
    # VAR's figure: the mean of the per-sample scores.
    assert abs(ours.info["mean_per_sample"][key] - SCALE * float(np.mean(each))) <= SCALE * TOL


def test_values_are_not_degenerate(both) -> None:
    ours, _, _ = both
    assert 0.0 < ours.corpus["bleu_4"] < ours.corpus["bleu_1"] < SCALE
    assert ours.corpus["cider"] > 0 and 0 < ours.corpus["meteor"] < SCALE
    assert ours.info["mean_per_sample"]["meteor"] != ours.corpus["meteor"]


def test_single_metric_factories_match_the_combined_run(both, caption_data) -> None:
    ours, _, _ = both
    predictions, references = caption_data
    for name, keys in (("bleu", ["bleu_1", "bleu_4"]), ("rouge-l", ["rouge_l"]), ("cider", ["cider"])):
        single = create(name).compute(predictions, references)
        assert set(single.corpus) <= set(ours.corpus)
        for key in keys:
            assert single.corpus[key] == ours.corpus[key]


def test_two_tokenizer_calls_per_evaluation(caption_data, monkeypatch) -> None:
    """One Java call for the predictions and one for the references, however many sentences."""
    predictions, references = caption_data
    calls = []
    real_run = subprocess.run

    def counting_run(cmd, *args, **kwargs):
        calls.append(cmd)
        return real_run(cmd, *args, **kwargs)

    monkeypatch.setattr(subprocess, "run", counting_run)
    CocoCaptionMetric(("bleu", "rouge-l", "cider")).compute(predictions, references)
    tokenizer_calls = [c for c in calls if "edu.stanford.nlp.process.PTBTokenizer" in c]
    assert len(tokenizer_calls) == 2


TRICKY = [
    "A man (in a hat) said: \"hello\" -- twice...",
    "",
    "It's the dog's ball; isn't it?",
    "U.S. troops' 3.5% gain -- well-known!",
    "``quoted'' and `single' {braces} [brackets]",
    "Café naïve — déjà vu",
    "   leading spaces and trailing   ",
    "?!.,",
]


def test_tokens_equal_pycocoevalcap_tokenizer() -> None:
    theirs = PTBTokenizer().tokenize({i: [{"caption": s}] for i, s in enumerate(TRICKY)})
    assert ptb_tokenize(TRICKY) == [theirs[i][0] for i in range(len(TRICKY))]


def test_line_break_characters_cannot_shift_sentences() -> None:
    clean = ["first sentence here", "a dog runs", "last one"]
    dirty = ["first\rsentence\u2028here", "a dog runs", "last one"]
    assert ptb_tokenize(dirty) == ptb_tokenize(clean)


def test_clean_non_ascii_replaces_characters_with_spaces() -> None:
    predictions = {"a": "a café by the naïve dog", "b": "dogs – playing"}
    references = {"a": ["a cafe by the dog"], "b": ["dogs playing"]}
    cleaned = {k: re.sub(r"[^\x00-\x7f]", " ", v) for k, v in predictions.items()}
    ours = create("cider,clean_non_ascii=true").compute(predictions, references)
    theirs = Cider().compute_score(
        PTBTokenizer().tokenize({k: [{"caption": r} for r in references[k]] for k in predictions}),
        PTBTokenizer().tokenize({k: [{"caption": cleaned[k]}] for k in predictions}),
    )
    assert abs(ours.corpus["cider"] - SCALE * theirs[0]) <= SCALE * TOL
    assert ours.info["clean_non_ascii"] is True


def test_missing_java_is_a_clear_error(monkeypatch) -> None:
    monkeypatch.setattr(shutil, "which", lambda name, *a, **k: None)
    with pytest.raises(AbductError, match="Java.*install"):
        create("bleu").compute({"a": "a dog"}, {"a": ["a dog"]})


def test_missing_java_from_the_cli(tmp_path: Path) -> None:
    (tmp_path / "p.json").write_text(json.dumps({"a": "a dog"}))
    (tmp_path / "r.json").write_text(json.dumps({"a": ["a dog"]}))
    empty_bin = tmp_path / "bin"
    empty_bin.mkdir()
    proc = subprocess.run(
        [sys.executable, "-m", "abduct", "metric", "cider", "--predictions", str(tmp_path / "p.json"),
         "--references", str(tmp_path / "r.json"), "--json"],
        env={"PATH": str(empty_bin)}, capture_output=True, text=True, check=False,
    )
    assert proc.returncode == 2
    assert "Java" in proc.stderr and "install" in proc.stderr and "Traceback" not in proc.stderr


def test_cli_json_keys_on_pycocoevalcap_scale(tmp_path, capsys, caption_data) -> None:
    predictions, references = caption_data
    (tmp_path / "p.json").write_text(json.dumps(predictions))
    (tmp_path / "r.json").write_text(json.dumps(references))
    args = ["--predictions", str(tmp_path / "p.json"), "--references", str(tmp_path / "r.json"), "--json"]
    assert main(["metric", "bleu", *args]) == 0
    out = json.loads(capsys.readouterr().out)
    assert list(out) == ["bleu_1", "bleu_2", "bleu_3", "bleu_4"]
    assert main(["metric", "rouge-l", *args, "--per-sample"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {"rouge_l", "per_sample"} and set(out["per_sample"]) == set(predictions)


def test_cli_options_after_the_name_or_with_o(tmp_path, capsys) -> None:
    predictions = {"a": "a café by the naïve dog", "b": "dogs – playing"}
    references = {"a": ["a cafe by the dog"], "b": ["dogs playing"]}
    (tmp_path / "p.json").write_text(json.dumps(predictions))
    (tmp_path / "r.json").write_text(json.dumps(references))
    args = ["--predictions", str(tmp_path / "p.json"), "--references", str(tmp_path / "r.json"), "--json"]
    values = []
    for form in (["cider,clean_non_ascii=true"], ["cider", "-o", "clean_non_ascii=true"], ["cider"]):
        assert main(["metric", *form, *args]) == 0
        values.append(json.loads(capsys.readouterr().out)["cider"])
    expected = create("cider,clean_non_ascii=true").compute(predictions, references).corpus["cider"]
    assert values[0] == values[1] == expected
    assert values[2] != expected  # the option changes the number
    assert main(["metric", "cider", "-o", "clean_non_ascii=perhaps", *args]) == 2
    assert "not a boolean" in capsys.readouterr().err
    assert main(["metric", "cider", "-o", "lowercase=true", *args]) == 2
    assert "valid: clean_non_ascii=False" in capsys.readouterr().err


def test_unknown_coco_metric_name() -> None:
    with pytest.raises(AbductError):
        CocoCaptionMetric(("spice",))
    assert _coco.COCO_METRICS == ("bleu", "meteor", "rouge-l", "cider")


class TestBleuContract(MetricContract):
    def make_metric(self):
        return create("bleu")


class TestMeteorContract(MetricContract):
    def make_metric(self):
        return create("meteor")


class TestRougeContract(MetricContract):
    def make_metric(self):
        return create("rouge-l")


class TestCiderContract(MetricContract):
    def make_metric(self):
        return create("cider,clean_non_ascii=true")
