"""NL-EYE: loader (aliases, BOM, errors), the two tasks (contracts, hand-computed ties,
breakdowns, generator parsing), official-format scoring, the dumb-pixel model, synth."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

from abduct import DataError, Decoding, Generated, GenerationRequest, TextPool, VisualInput
from abduct.host import EvalConfig, run_evaluation
from abduct_nleye import load_csv
from abduct_nleye.dumbpixel import DumbPixel
from abduct_nleye.tasks import parse_answer
from abduct_testing import main, registry_with_models
from abduct_testing.corpus import CorpusContract
from conftest import HEADER, row, write_csv


class TestTripletContract(CorpusContract):
    task_name = "nleye-triplet"


class TestPairsContract(CorpusContract):
    task_name = "nleye-pairs"


# -- loader -----------------------------------------------------------------------------------
def test_loader_aliases_bom_gold_forms_and_unknown_columns(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "test_set.csv", [row("a", "1"), row("b", "hypothesis2"), row("c", "Hypothesis 1"),
                                                 row("d", "2.0")], bom=True)
    samples = load_csv(path)
    assert [(s.sample_id, s.gold) for s in samples] == [("a", 1), ("b", 2), ("c", 1), ("d", 2)]
    assert samples[0].premise_text == "p" and samples[0].hypothesis_texts == ("h one", "h two")
    assert samples[0].explanation == "because" and samples[0].categories["reasoning_category"] == "physical"
    assert samples[1].hypothesis_images[1] == str(tmp_path / "images" / "b" / "hypothesis2.png")


def test_missing_required_column_lists_the_columns_found(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    header = [h for h in HEADER if h != "label"]
    path = write_csv(tmp_path / "test_set.csv", [row("a", "1")[:4] + row("a", "1")[5:]], header=header)
    with pytest.raises(DataError, match="no gold label column .* columns found: sample_id, premise_description"):
        load_csv(path)
    (tmp_path / "p.json").write_text("{}")
    assert main(["score", "nleye-pairs", "--predictions", str(tmp_path / "p.json"), "--answer-key", str(path)]) == 2
    assert "columns found" in capsys.readouterr().err


@pytest.mark.parametrize("rows, words", [
    ([row("a", "3")], "line 2 (sample_id 'a'), field 'label': expected 1/2"),
    ([row("a", "1"), row("a", "2")], "line 3 (sample_id 'a'), field 'sample_id': sample id repeated"),
    ([row("", "1")], "record line 2, field 'sample_id': bad sample id"),
])
def test_bad_rows_name_file_row_and_field(tmp_path: Path, rows: list[list[str]], words: str) -> None:
    path = write_csv(tmp_path / "test_set.csv", rows)
    with pytest.raises(DataError) as err:
        load_csv(path)
    assert str(path) in str(err.value) and words in str(err.value)


# -- official-format scoring ------------------------------------------------------------------
def _score(tmp_path: Path, task: str, predictions: Any, capsys: pytest.CaptureFixture[str]) -> tuple[int, Any]:
    key = write_csv(tmp_path / "test_set.csv", [row("a", "1", "physical"), row("b", "2", "social", "backward"),
                                               row("c", "hypothesis2", "social"), row("d", "1", "social")])
    p = tmp_path / "p.json"
    p.write_text(predictions if isinstance(predictions, str) else json.dumps(predictions))
    code = main(["score", task, "--predictions", str(p), "--answer-key", str(key), "--json"])
    captured = capsys.readouterr()
    return code, json.loads(captured.out) if code == 0 else captured.err


def test_triplet_score_hand_computed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # gold: a=1, b=2, c=2, d=1
    code, out = _score(tmp_path, "nleye-triplet", {"a": [1, 1], "b": [2, 1], "c": [1, 1], "d": ["1", "hypothesis1"]},
                       capsys)
    assert code == 0
    assert out["consistency_accuracy"] == 50.0  # a, d
    assert out["order1_accuracy"] == 75.0  # a, b, d
    assert out["order2_accuracy"] == 50.0  # a, d
    assert out["by_reasoning_category"]["physical"] == {"consistency_accuracy": 100.0, "order1_accuracy": 100.0,
                                                        "order2_accuracy": 100.0, "n": 1}
    assert out["by_reasoning_category"]["social"]["n"] == 3
    assert out["by_time_direction"]["backward"]["consistency_accuracy"] == 0.0
    assert set(out) >= {"by_domain", "by_time_duration"}


def test_pairs_score_hand_computed_ties_count_zero(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _score(tmp_path, "nleye-pairs", {"a": [0.9, 0.1], "b": [0.5, 0.5], "c": [1, 2], "d": [3, 3]}, capsys)
    assert code == 0 and out["accuracy"] == 50.0 and out["ties"] == 2  # a, c right; b, d ties
    assert out["by_reasoning_category"]["social"]["accuracy"] == 100 / 3


@pytest.mark.parametrize("task, predictions, words", [
    ("nleye-triplet", {"a": [1, 1], "b": [2, 1], "c": [1, 1]}, "record d: no prediction for 1 sample(s): d"),
    ("nleye-triplet", {"a": [1, 3], "b": [2, 1], "c": [1, 1], "d": [1, 1]}, "record a, field 'order2': expected 1 or 2"),
    ("nleye-triplet", {"a": [1], "b": [2, 1], "c": [1, 1], "d": [1, 1]}, "record a: expected a list of 2 values"),
    ("nleye-pairs", '{"a": [1, NaN], "b": [1, 2], "c": [1, 2], "d": [1, 2]}', "record a, field 'score_h2': expected a finite"),
    ("nleye-pairs", {"a": [1, 2], "b": [1, 2], "c": [1, 2], "d": [1, 2], "z": [1, 2]}, "record z: not a sample id"),
])
def test_bad_predictions_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str], task: str, predictions: Any,
                                words: str) -> None:
    code, err = _score(tmp_path, task, predictions, capsys)
    assert code == 2 and words in err


# -- evaluation -------------------------------------------------------------------------------
class Parrot:
    """A generator answering from a fixed list, to test strict parsing."""

    accepts = frozenset({"image", "related", "context"})
    fingerprint = "parrot"
    answers: list[str] = []
    seen: list[GenerationRequest] = []

    def generate(self, requests: Sequence[GenerationRequest], decoding: Decoding, pool: TextPool | None) -> list[str]:
        Parrot.seen.extend(requests)
        return [Parrot.answers.pop(0) for _ in requests]


class TextOverlap:
    """Text-only scorer: word overlap of hypothesis with premise description."""

    accepts = frozenset({"context"})

    def score(self, visuals: Sequence[VisualInput], texts: Sequence[str]) -> np.ndarray:
        return np.array([len(set(str(v.context).split()) & set(t.split())) for v, t in zip(visuals, texts)], float)


class ImageOnly:
    accepts = frozenset({"image"})

    def score(self, visuals: Sequence[VisualInput], texts: Sequence[str]) -> np.ndarray:
        return np.zeros(len(texts))


class ColorCaptioner:
    """Writes ``a <color> scene``, the synthetic palette color nearest to the image's mean."""

    fingerprint = "color-captioner"
    requests: list[GenerationRequest] = []

    def generate(self, requests: Sequence[GenerationRequest], decoding: Decoding, pool: TextPool | None) -> list[str]:
        from abduct_nleye.synth import COLORS

        ColorCaptioner.requests.extend(requests)
        out = []
        for r in requests:
            assert r.visual.media is not None and not r.visual.related and pool is None
            with Image.open(r.visual.media) as image:
                mean = np.asarray(image.convert("RGB"), np.float64).reshape(-1, 3).mean(0)
            out.append(f"a {min(COLORS, key=lambda c: float(np.sum((np.array(COLORS[c]) - mean) ** 2)))} scene")
        return out


MODELS = {"parrot": ("answers from a list", Parrot), "text-overlap": ("text only", TextOverlap),
          "image-only": ("one image only", ImageOnly), "color-captioner": ("captions an image by its color", ColorCaptioner)}


def _eval(data: Path, out: Path, task: str, model: str, use_cache: bool = False, **kw: Any) -> dict[str, Any]:
    return run_evaluation(EvalConfig(task=task, model=model, data_dir=data, out_dir=out, quiet=True,
                                     use_cache=use_cache, **kw), registry_with_models("nleye-test", MODELS))


def test_parse_answer_is_strict() -> None:
    assert [parse_answer(t) for t in ("1", " 2. ", "Hypothesis 2", "image 1", "hypothesis2")] == [1, 2, 2, 1, 2]
    assert [parse_answer(t) for t in ("1 or 2", "the first", "12", "", "3")] == [None] * 5


def test_generator_answers_both_orders_and_unparsed_is_counted(corpus: Path, tmp_path: Path) -> None:
    golds = [s.gold for s in load_csv(corpus / "test_set.csv")][:3]
    # sample 0: right in both orders; sample 1: unparsed then right; sample 2: right then wrong
    Parrot.answers = [str(golds[0]), str(3 - golds[0]), "maybe", str(3 - golds[1]), str(golds[2]), str(golds[2])]
    result = _eval(corpus, tmp_path / "g", "nleye-triplet", "parrot", limit=3)
    m = result["metrics"]
    assert m["unparsed"] == 1 and m["n"] == 3
    assert m["unparsed_rate"] == 100 / 6 and m["unparsed_reasons"] == {"no option found": 1}  # of 6 answers
    assert m["consistency_accuracy"] == 100 / 3 and m["order1_accuracy"] == 200 / 3 and m["order2_accuracy"] == 200 / 3


def test_constant_scorer_ties_hand_computed(corpus: Path, tmp_path: Path) -> None:
    golds = [s.gold for s in load_csv(corpus / "test_set.csv")]
    triplet = _eval(corpus, tmp_path / "t", "nleye-triplet", "constant")["metrics"]
    assert triplet["consistency_accuracy"] == 0.0  # a tie picks the first shown: 1, then 2
    assert triplet["order1_accuracy"] == 100 * golds.count(1) / len(golds)
    assert triplet["order2_accuracy"] == 100 * golds.count(2) / len(golds)
    pairs = _eval(corpus, tmp_path / "p", "nleye-pairs", "constant")["metrics"]
    assert pairs["accuracy"] == 0.0 and pairs["ties"] == len(golds)


def test_random_is_25_in_expectation_and_text_setup(corpus: Path, tmp_path: Path) -> None:
    m = _eval(corpus, tmp_path / "r", "nleye-triplet", "random")["metrics"]
    assert m["unparsed"] == 0 and 0 <= m["consistency_accuracy"] <= min(m["order1_accuracy"], m["order2_accuracy"])
    text = _eval(corpus, tmp_path / "x", "nleye-pairs,setup=text", "text-overlap")
    assert text["metrics"]["accuracy"] == 100.0  # the gold description repeats the premise's color
    assert set(text["metrics"]["by_reasoning_category"]) == {"physical", "functional", "logical", "emotional",
                                                             "cultural", "social"}


def test_dumb_pixel_reads_the_hypothesis_corner(tmp_path: Path) -> None:
    paths = []
    for name, value in (("p", 0), ("bright", 250), ("dark", 10)):
        pixels = np.full((8, 8, 3), 128, np.uint8)
        pixels[0, 0] = value
        Image.fromarray(pixels).save(tmp_path / f"{name}.png")
        paths.append(str(tmp_path / f"{name}.png"))
    visuals = [VisualInput(paths[0], related=(VisualInput(paths[k]),)) for k in (1, 2)]
    assert DumbPixel().score(visuals, ["", ""]).tolist() == pytest.approx([250 / 255, 10 / 255])
    assert DumbPixel("dark").score(visuals, ["", ""])[1] > DumbPixel("dark").score(visuals, ["", ""])[0]
    assert "related" in DumbPixel.accepts


def test_synth_check_and_a_single_image_model_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["nleye", "synth", "--out", str(tmp_path / "d"), "--samples", "6"]) == 0
    assert main(["nleye", "check", "--data", str(tmp_path / "d")]) == 0
    (tmp_path / "d" / "images" / "s0001" / "premise.png").unlink()
    assert main(["nleye", "check", "--data", str(tmp_path / "d")]) == 1
    assert "sample s0001: image missing" in capsys.readouterr().out


def test_single_image_model_is_refused_and_similarity_needs_a_dual_encoder(corpus: Path, tmp_path: Path) -> None:
    from abduct import AbductError

    with pytest.raises(AbductError, match="cannot take related inputs"):
        _eval(corpus, tmp_path / "a", "nleye-pairs", "image-only")
    with pytest.raises(AbductError, match="needs a dual encoder"):
        _eval(corpus, tmp_path / "b", "nleye-pairs,score_by=similarity", "random")
    with pytest.raises(AbductError, match="needs setup=images"):
        _eval(corpus, tmp_path / "c", "nleye-pairs,setup=text,score_by=similarity", "random")


# -- setup=captions ---------------------------------------------------------------------------
def test_captions_setup_captions_each_image_then_answers_on_text(corpus: Path, tmp_path: Path) -> None:
    from abduct_nleye.captions import CAPTION_PROMPT

    ColorCaptioner.requests = []
    result = _eval(corpus, tmp_path / "c", "nleye-pairs,setup=captions,captioner=color-captioner", "text-overlap")
    n = result["metrics"]["n"]
    assert len(ColorCaptioner.requests) == 3 * n and {r.prompt for r in ColorCaptioner.requests} == {CAPTION_PROMPT}
    assert result["metrics"]["accuracy"] == 100.0  # the gold hypothesis keeps the premise's color
    assert result["details"]["captioner"] == "color-captioner" and result["details"]["setup"] == "captions"
    records = [json.loads(line) for line in (tmp_path / "c" / "predictions.jsonl").read_text().splitlines()]
    first = load_csv(corpus / "test_set.csv")[0]
    color = first.premise_text.split()[1] if first.premise_text else ""
    assert records[0]["captions"][0] == f"a {color} scene" and len(records[0]["captions"]) == 3


def test_captions_setup_for_a_generator_and_the_captions_cache(corpus: Path, tmp_path: Path) -> None:
    from abduct_nleye.tasks import PROMPT_TEXT

    samples = load_csv(corpus / "test_set.csv")[:2]
    golds = [s.gold for s in samples]
    # sample 0: the gold in both orders (consistent); sample 1: "1" both times (never consistent)
    Parrot.answers, Parrot.seen, ColorCaptioner.requests = [str(golds[0]), str(3 - golds[0]), "1", "1"], [], []
    task = "nleye-triplet,setup=captions,captioner=color-captioner"
    kw: dict[str, Any] = {"use_cache": True, "cache_dir": tmp_path / "cache", "limit": 2}
    result = _eval(corpus, tmp_path / "t", task, "parrot", **kw)
    assert result["metrics"]["consistency_accuracy"] == 50.0 and result["metrics"]["unparsed"] == 0
    assert len(ColorCaptioner.requests) == 6 and {r.prompt for r in Parrot.seen} == {PROMPT_TEXT}
    color = samples[0].premise_text.split()[1] if samples[0].premise_text else ""
    assert Parrot.seen[0].visual.media is None and f"Premise: a {color} scene\n" in str(Parrot.seen[0].visual.context)
    records = [json.loads(line) for line in (tmp_path / "t" / "predictions.jsonl").read_text().splitlines()]
    assert [len(r["captions"]) for r in records] == [3, 3] and records[0]["captions"][0] == f"a {color} scene"
    # the run caches (a generator with a fingerprint): the captions are cached beside its texts
    ColorCaptioner.requests = []
    again = _eval(corpus, tmp_path / "t2", task, "parrot", **kw)
    assert again["metrics"] == result["metrics"] and ColorCaptioner.requests == [] and Parrot.answers == []


@pytest.mark.parametrize("task, model, words", [
    ("nleye-pairs,setup=captions", "text-overlap", "setup=captions needs captioner=SPEC"),
    ("nleye-triplet,captioner=color-captioner", "parrot", "captioner= applies only with setup=captions"),
    ("nleye-pairs,setup=captions,captioner=text-overlap", "text-overlap", "captioner 'text-overlap' does not generate"),
    ("nleye-pairs,setup=captions,score_by=similarity,captioner=color-captioner", "random", "needs setup=images"),
    ("nleye-explanation,setup=captions", "parrot", "setup=captions needs captioner=SPEC"),
    ("nleye-explanation,bertscore_layers=2", "parrot", "bertscore_layers applies only with bertscore_model"),
])
def test_captions_and_explanation_option_errors(corpus: Path, tmp_path: Path, task: str, model: str,
                                                words: str) -> None:
    from abduct import AbductError

    with pytest.raises(AbductError, match=words):
        _eval(corpus, tmp_path / "e", task, model)


def test_captions_missing_captioner_exits_2_in_one_line(corpus: Path, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["eval", "nleye-triplet,setup=captions", "--model", "random", "--data", str(corpus), "--out",
                 str(tmp_path / "o"), "--quiet", "--no-cache"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and "setup=captions needs captioner=SPEC" in err and len(err.splitlines()) == 1


# -- nleye-explanation (its metrics come with abduct-metrics: see tests/test_nleye_explanation.py) --
def test_explanation_missing_column_or_value_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    header = [h for h in HEADER if h != "gold_explanation"]
    write_csv(tmp_path / "a" / "test_set.csv", [row("a", "1")[:5] + row("a", "1")[6:]], header=header)
    args = ["--model", "random", "--quiet", "--no-cache"]
    assert main(["eval", "nleye-explanation", "--data", str(tmp_path / "a"), "--out", str(tmp_path / "oa"), *args]) == 2
    err = capsys.readouterr().err
    assert "gold explanation column (accepted: explanation, gold_explanation); columns found: sample_id" in err
    empty = row("b", "2")
    empty[5] = "  "
    write_csv(tmp_path / "b" / "test_set.csv", [row("a", "1"), empty])
    assert main(["eval", "nleye-explanation", "--data", str(tmp_path / "b"), "--out", str(tmp_path / "ob"), *args]) == 2
    err = capsys.readouterr().err
    assert "record line 3 (sample_id 'b'), field 'gold_explanation': empty gold explanation" in err


def test_explanation_inputs_and_metric_choice(corpus: Path) -> None:
    from abduct_nleye.explanation import ExplanationTask

    sample = load_csv(corpus / "test_set.csv")[0]
    visual = sample.explained()
    assert visual.media == sample.premise_image
    assert [r.media for r in visual.related] == [sample.hypothesis_images[sample.gold - 1]]
    assert sample.hypothesis_texts is not None
    assert sample.explained("text").context == (f"Premise: {sample.premise_text}\n"
                                                f"Hypothesis: {sample.hypothesis_texts[sample.gold - 1]}")
    assert list(ExplanationTask().metrics()) == ["bleu", "rouge-l", "cider"]
    chosen = ExplanationTask(bertscore_model=Path("/m"), bertscore_layers=3, bem_model=Path("/b")).metrics()
    assert chosen == {"bertscore": {"model": "/m", "num_layers": 3}, "bem": {"model": Path("/b")}}


# -- the dataset's option: where the images are read from -------------------------------------
def test_dataset_image_root_changes_what_the_tasks_read(corpus: Path, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """``--dataset nleye,image_root=DIR``: the images of every task come from DIR (here a copy
    with each sample's two hypotheses swapped, so dumb-pixel's scores swap); a folder that does
    not exist is one line; ``abduct nleye check --image-root`` and ``abduct check`` look there."""
    import shutil

    from abduct_testing.browser import page_views

    swapped = shutil.copytree(corpus / "images", tmp_path / "swapped")
    for folder in swapped.iterdir():
        (folder / "hypothesis1.png").rename(folder / "h.png")
        (folder / "hypothesis2.png").rename(folder / "hypothesis1.png")
        (folder / "h.png").rename(folder / "hypothesis2.png")
    args = ["--model", "dumb-pixel", "--data", str(corpus), "--quiet", "--no-cache", "--limit", "6"]
    assert main(["eval", "nleye-pairs", *args, "--out", str(tmp_path / "a")]) == 0
    assert main(["eval", "nleye-pairs", *args, "--out", str(tmp_path / "b"), "--dataset",
                 f"nleye,image_root={swapped}"]) == 0
    plain = [json.loads(line) for line in (tmp_path / "a" / "predictions.jsonl").read_text().splitlines()]
    moved = [json.loads(line) for line in (tmp_path / "b" / "predictions.jsonl").read_text().splitlines()]
    assert [r["scores"][::-1] for r in plain] == [r["scores"] for r in moved] != [r["scores"] for r in plain]
    assert all((tmp_path / "b" / image["path"]).resolve().is_relative_to(swapped.resolve())
               for v in page_views(tmp_path / "b") for image in v["images"])  # named relative to the page
    capsys.readouterr()
    assert main(["eval", "nleye-triplet", *args, "--out", str(tmp_path / "c"), "--dataset",
                 "nleye,image_root=/nonexistent"]) == 2
    err = capsys.readouterr().err.strip()
    assert "NL-EYE image folder (image_root=) not found: /nonexistent" in err and len(err.splitlines()) == 1
    assert main(["nleye", "check", "--data", str(corpus), "--image-root", str(swapped)]) == 0
    assert main(["check", "nleye-pairs", "--data", str(corpus), "--dataset", f"nleye,image_root={tmp_path}"]) == 1
    assert "image missing" in capsys.readouterr().out


# -- the plans: stage names (the run's resume keys) and request kinds ---------------------------
def _info(samples: Sequence[Any], *, scores: bool = True, generates: bool = False, judged: bool = False) -> Any:
    from abduct import RunInfo

    return RunInfo(split="test", model_name="m", scores=scores, generates=generates, judged=judged,
                   metric=lambda name, **options: None, corpus=samples)


def test_plans_keep_the_stage_names_and_ask_the_shared_shapes(corpus: Path) -> None:
    from abduct import Compare, Custom, Generate, Judge
    from abduct.host import build_registry

    registry = build_registry()
    samples = registry.create("dataset", "nleye").load(corpus, "test")[:5]

    def plan(task: str, **kw: bool) -> list[Any]:
        return list(registry.create("task", task).plan(samples, _info(samples, **kw)))

    [pairs] = plan("nleye-pairs")
    assert pairs.name == "pairs" and isinstance(pairs.request, Compare) and pairs.request.per_unit == 16
    assert [(i.id, i.gold) for i in pairs.request.items] == [(s.sample_id, s.gold - 1) for s in samples]
    [asked] = plan("nleye-triplet", generates=True)
    assert asked.name == "triplet" and isinstance(asked.request, Generate)
    ids = [i.id for i in asked.request.items]
    assert ids[:2] == [samples[0].sample_id, samples[0].sample_id + "/swapped"] and len(ids) == 10
    assert asked.request.per_unit == 32 and asked.request.pool is not None and asked.request.pool.texts == ("1", "2")
    [scored] = plan("nleye-triplet,answer=score", generates=True)
    assert isinstance(scored.request, Compare)
    [similar] = plan("nleye-triplet,score_by=similarity", generates=True)
    assert isinstance(similar.request, Custom) and similar.request.needs == {"score"}
    assert [u for u, _ in similar.request.units] == [samples[0].sample_id]  # 16 samples a unit, as before
    captions, answer = plan("nleye-pairs,setup=captions,captioner=color-captioner")
    assert (captions.name, answer.name) == ("captions", "pairs") and isinstance(captions.request, Custom)
    assert captions.request.needs == frozenset() and answer.request is None and answer.after is not None
    done = {"captions": [{"id": s.sample_id, "captions": ["a", "b", "c"]} for s in samples]}
    after = answer.after(done)
    assert isinstance(after, Compare) and after.items[0].first.visual.context == "a" and after.items[0].first.text == "b"
    explain, judge = plan("nleye-explanation", generates=True, judged=True)
    assert (explain.name, judge.name) == ("explanation", "judge") and isinstance(explain.request, Generate)
    records = {"explanation": [Generated(s.sample_id, "p", [s.explanation]) for s in samples]}
    assert judge.request is None and judge.after is not None
    verdicts = judge.after(records)
    assert isinstance(verdicts, Judge) and [i.id for i in verdicts.items] == [s.sample_id for s in samples]
    assert [s.name for s in plan("nleye-explanation", generates=True)] == ["explanation"]

