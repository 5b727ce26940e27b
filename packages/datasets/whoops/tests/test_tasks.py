"""The five tasks through abduct eval: contracts, numbers equal to the metrics package's on the
same inputs, tables by category and fold, pools without the image's own texts, the judge."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from abduct import AbductError, Settings, Spec
from abduct.host import get_registry
from abduct_testing import main
from abduct_testing.browser import page_views
from abduct_testing.corpus import CorpusContract
from abduct_whoops.loader import load_release
from abduct_whoops.splits import make_folds
from conftest import LiteralJudge, evaluate


def metric(name: str, **options: Any) -> Any:
    return get_registry().create("metric", Spec(name), Settings(), **options)


class TestMatchingContract(CorpusContract):
    task_name = "whoops-matching"


class TestVqaContract(CorpusContract):
    task_name = "whoops-vqa"


class TestIdentificationContract(CorpusContract):
    task_name = "whoops-identification"


def _records(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()]


def test_captioning_equals_the_metrics_package_overall_by_category_and_fold(
        corpus: Path, random_captions: tuple[dict[str, Any], Path]) -> None:
    results, out = random_captions
    records = _records(out)
    images = load_release(corpus).by_id()
    predictions = {r["image_id"]: r["prediction"] for r in records}
    references = {i: list(images[i].crowd_captions) for i in predictions}

    def both(ids: set[str]) -> dict[str, float]:
        p = {k: v for k, v in predictions.items() if k in ids}
        r = {k: references[k] for k in p}
        return {"bleu_4": metric("bleu").compute(p, r).corpus["bleu_4"],
                "cider": metric("cider").compute(p, r).corpus["cider"]}

    expected = both(set(predictions))
    assert results["metrics"]["bleu_4"] == expected["bleu_4"] and results["metrics"]["cider"] == expected["cider"]
    biology = {i for i in predictions if images[i].commonsense_category == "Biology"}
    assert results["details"]["by_category"]["Biology"] == {**both(biology), "n": len(biology)}
    folds = make_folds(list(images))
    fold2 = set(folds.part(2, "test"))
    assert results["details"]["per_fold"]["fold2"] == {**both(fold2), "n": 4}
    per_fold = [f["cider"] for f in results["details"]["per_fold"].values()]
    assert results["metrics"]["cider_fold_mean"] == pytest.approx(sum(per_fold) / 5)
    mean = sum(per_fold) / 5
    assert results["metrics"]["cider_fold_std"] == pytest.approx((sum((v - mean) ** 2 for v in per_fold) / 4) ** 0.5)
    # random picks a crowd caption of an image outside the image's own fold part
    for r in records:
        part = next(set(folds.part(k, "test")) for k in range(5) if r["image_id"] in folds.part(k, "test"))
        assert r["prediction"] in {c for i, image in images.items() if i not in part for c in image.crowd_captions}


def test_captioning_intervals_agree_with_an_independent_bootstrap(
        random_captions: tuple[dict[str, Any], Path]) -> None:
    """From predictions.jsonl alone: pycocoevalcap's BLEU-4 re-run on each resample of images,
    and the mean per-image CIDEr-D, bootstrapped by scipy.stats on the run's stream of draws,
    give the intervals results.json reports (CIDEr-D's document frequencies are the full set's,
    as the interval's method says)."""
    import numpy as np
    from pycocoevalcap.bleu.bleu import Bleu
    from scipy import stats

    from abduct.host import interval_rng as rng_for
    from abduct_metrics._coco import tokenize_all

    results, out = random_captions
    records = _records(out)
    predictions = {r["image_id"]: r["prediction"] for r in records}
    references = {r["image_id"]: list(r["references"]) for r in records}
    ids = list(predictions)
    gts, res = tokenize_all(predictions, references)

    def bleu_4(drawn: np.ndarray) -> float:
        chosen = [ids[int(i)] for i in drawn]
        score, _ = Bleu(4).compute_score({str(j): gts[k] for j, k in enumerate(chosen)},
                                         {str(j): res[k] for j, k in enumerate(chosen)}, verbose=0)
        return 100 * float(score[3])

    cider = metric("cider").compute(predictions, references).per_sample
    per_image = np.array([cider[k]["cider"] for k in ids])
    intervals = results["intervals"]
    for name, data, statistic in (("bleu_4", np.arange(len(ids)), bleu_4), ("cider", per_image, np.mean)):
        found = intervals[name]
        assert found["unit"] == "image" and found["units"] == len(ids) == 20 and found["resamples"] == 1000
        ref = stats.bootstrap((data,), statistic, vectorized=False, n_resamples=1000, method="percentile",
                              rng=rng_for(0, name))
        assert (found["low"], found["high"]) == pytest.approx(tuple(ref.confidence_interval), abs=1e-6)
        assert found["low"] < results["metrics"][name] < found["high"]
    assert "document frequencies" in intervals["cider"]["method"]
    assert intervals["bleu_4"]["method"] == "percentile bootstrap"
    assert "bleu_4_fold_mean" not in intervals  # a mean over folds is not resampled


def test_captioning_oracle_and_fold_split(corpus: Path, tmp_path: Path,
                                         random_captions: tuple[dict[str, Any], Path]) -> None:
    oracle = evaluate(corpus, tmp_path / "oracle", "whoops-captioning", "oracle")
    random = random_captions[0]
    assert oracle["metrics"]["bleu_4"] > random["metrics"]["bleu_4"]
    assert oracle["metrics"]["cider"] > random["metrics"]["cider"]
    fold = evaluate(corpus, tmp_path / "fold", "whoops-captioning", "random", split="fold1-test")
    folds = make_folds([i.image_id for i in load_release(corpus).images])
    assert [r["image_id"] for r in _records(tmp_path / "fold")] == [
        i.image_id for i in load_release(corpus).images if i.image_id in folds.part(1, "test")]
    train = {c for i in load_release(corpus).images if i.image_id in folds.part(1, "train") for c in i.crowd_captions}
    assert all(r["prediction"] in train for r in _records(tmp_path / "fold"))
    assert "per_fold" not in fold["details"] and "bleu_4_fold_mean" not in fold["metrics"]
    # samples.html names each sample by its image (the records have no id of their own)
    assert [v["id"] for v in page_views(tmp_path / "fold")] == [r["image_id"] for r in _records(tmp_path / "fold")]


def test_a_folds_file_given_to_the_dataset_changes_folds_and_pools(corpus: Path, tmp_path: Path) -> None:
    """``--dataset whoops,folds=FILE`` (a file of other folds, ``abduct whoops folds --seed 7``):
    the per-fold tables, the pools and a fold split follow the file, and results.json hashes it."""
    ids = [i.image_id for i in load_release(corpus).images]
    assert main(["whoops", "folds", "--data", str(corpus), "--out", str(tmp_path / "f.json"), "--seed", "7"]) == 0
    default = evaluate(corpus, tmp_path / "default", "whoops-vqa", "random")
    other = evaluate(corpus, tmp_path / "other", "whoops-vqa", "random", datasets=(f"whoops,folds={tmp_path / 'f.json'}",))
    folds = make_folds(ids, seed=7)
    assert other["details"]["per_fold"] != default["details"]["per_fold"]
    assert other["details"]["per_fold"]["fold2"]["n"] == len(folds.part(2, "test"))
    assert _records(tmp_path / "other") != _records(tmp_path / "default")
    images = load_release(corpus).by_id()
    for r in _records(tmp_path / "other"):  # the answers of images outside the image's part of the file's folds
        part = next(set(folds.part(k, "test")) for k in range(5) if r["image_id"] in folds.part(k, "test"))
        assert r["prediction"] in {a for i, image in images.items() if i not in part
                                   for _, a in image.question_answering_pairs}
    assert str(tmp_path / "f.json") in json.dumps(other["data"])
    evaluate(corpus, tmp_path / "fold", "whoops-matching", "random", split="fold3-val",
             datasets=(f"whoops,folds={tmp_path / 'f.json'}",))
    assert {r["image_id"] for r in _records(tmp_path / "fold")} == set(folds.part(3, "val"))


def test_bad_split_is_one_line(corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", "whoops-vqa", "--model", "random", "--data", str(corpus), "--out", str(tmp_path / "r"),
                 "--split", "fold7-test", "--quiet"]) == 2
    assert "unknown WHOOPS! split 'fold7-test' (expected all or fold<0-4>-<train|val|test>" in capsys.readouterr().err


def test_vqa_equals_exact_match_and_bem_of_the_metrics_package(corpus: Path, tmp_path: Path) -> None:
    from abduct_metrics.testing import WORDS, build_tiny_bert

    words = [*WORDS, *"sun leaf brick whale yellow green red blue gray beige pink circle triangle square ellipse "
             "shape object shown background color".split()]
    bem = build_tiny_bert(tmp_path / "bem", words=words, classifier=True, type_vocab_size=3)
    results = evaluate(corpus, tmp_path / "run", f"whoops-vqa,bem_model={bem}", "random")
    records = _records(tmp_path / "run")
    assert len(records) == results["metrics"]["questions"] == 4 * 20
    predictions = {r["id"]: r["prediction"] for r in records}
    references = {r["id"]: [r["answer"]] for r in records}
    questions = {r["id"]: r["question"] for r in records}
    expected_em = metric("exact-match").compute(predictions, references).corpus["exact_match"]
    expected_bem = metric("bem", model=bem).compute(predictions, references, questions).corpus["bem"]
    assert results["metrics"]["exact_match"] == expected_em and results["metrics"]["bem"] == expected_bem
    assert results["metrics"]["bem"] >= results["metrics"]["exact_match"]  # exact match first
    _check_pooled_by_image(results, records, {k: v["exact_match"] for k, v in
                                              metric("exact-match").compute(predictions, references).per_sample.items()})
    images = {image.image_id: image for image in load_release(corpus).images}
    for view, record in zip(page_views(tmp_path / "run"), records):  # samples.html: the answer beside the reference
        texts = {t["label"]: t["text"] for t in view["texts"]}
        assert texts == {"question": record["question"], "generated answer": record["prediction"],
                         "reference 1": record["answer"]}
        assert view["category"] == images[record["image_id"]].commonsense_category
    oracle = evaluate(corpus, tmp_path / "oracle", "whoops-vqa", "oracle")
    assert oracle["metrics"]["exact_match"] == 100.0 and "bem" not in oracle["metrics"]
    assert set(oracle["details"]["by_category"]) == {"Astronomy", "Biology", "Everyday Knowledge", "Zoology"}


def _check_pooled_by_image(results: dict[str, Any], records: list[dict[str, Any]], matched: dict[str, float]) -> None:
    """The exact-match interval: images resampled with their questions, the share pooled
    (scipy.stats.bootstrap, paired, on the run's stream of draws)."""
    import numpy as np
    from scipy import stats

    from abduct.host import interval_rng as rng_for

    images = list(dict.fromkeys(r["image_id"] for r in records))
    hits = np.array([sum(matched[r["id"]] for r in records if r["image_id"] == i) for i in images])
    counts = np.array([sum(1.0 for r in records if r["image_id"] == i) for i in images])
    ref = stats.bootstrap((hits, counts), lambda h, c, axis: h.sum(axis=axis) / c.sum(axis=axis), paired=True,
                          vectorized=True, n_resamples=1000, method="percentile", rng=rng_for(0, "exact_match"))
    found = results["intervals"]["exact_match"]
    assert found["unit"] == "image" and found["units"] == len(images)
    assert (found["low"], found["high"]) == pytest.approx(tuple(ref.confidence_interval), abs=1e-9)


def test_matching_specificity_counts_strict_wins(corpus: Path, tmp_path: Path) -> None:
    length = evaluate(corpus, tmp_path / "len", "whoops-matching", "length")
    assert length["metrics"]["specificity"] == 100.0 and length["metrics"]["comparisons"] == 100
    ties = evaluate(corpus, tmp_path / "const", "whoops-matching", "constant")
    assert ties["metrics"]["specificity"] == 0.0 and ties["metrics"]["ties"] == 100.0
    chance = evaluate(corpus, tmp_path / "random", "whoops-matching", "random")
    records = _records(tmp_path / "random")
    wins = sum(r["scores"][0] > r["scores"][1] for r in records)
    assert chance["metrics"]["specificity"] == 100 * wins / 100 and 0 < wins < 100
    images = {image.image_id: image for image in load_release(corpus).images}
    for view, record in zip(page_views(tmp_path / "random"), records):  # samples.html: both captions, scored
        image, k = images[record["image_id"]], int(record["id"].rsplit("#", 1)[1])
        detailed, under = view["texts"]
        assert detailed["text"] == image.selected_caption and under["text"] == image.crowd_underspecified_captions[k]
        assert detailed["label"].startswith("detailed caption · score") and detailed["label"].endswith("gold")
        assert view["correct"] is (record["scores"][0] > record["scores"][1]) and view["images"][0]["thumb"]


def test_identification_with_and_without_the_normal_release(corpus: Path, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    oracle = evaluate(corpus, tmp_path / "oracle", "whoops-identification", "oracle")
    assert oracle["metrics"]["accuracy"] == 100.0 and oracle["metrics"]["pairs"] == 20
    assert oracle["details"]["answered_by"] == "generation" and oracle["metrics"]["unparsed"] == 0
    # a scorer: the longer text (WEIRD_TEXT) always wins, so every picture is called weird
    scored = evaluate(corpus, tmp_path / "scored", "whoops-identification", "length")
    records = _records(tmp_path / "scored")
    assert len(records) == 40 and scored["details"]["answered_by"] == "scores"
    assert (scored["metrics"]["accuracy"], scored["metrics"]["weird_accuracy"]) == (50.0, 100.0)
    assert scored["metrics"]["normal_accuracy"] == 0.0 and scored["metrics"]["pair_accuracy"] == 0.0  # equal margins
    # the release elsewhere, given with --dataset whoops-identification,normal_images=DIR
    bare = tmp_path / "bare"
    shutil.copytree(corpus, bare, ignore=shutil.ignore_patterns("identification"))
    assert main(["eval", "whoops-identification", "--model", "random", "--data", str(bare), "--out",
                 str(tmp_path / "none"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "needs the normal counterparts" in err and "normal_images=DIR" in err and "Traceback" not in err
    given = evaluate(bare, tmp_path / "given", "whoops-identification", "oracle",
                     datasets=(f"whoops-identification,normal_images={corpus / 'identification'}",))
    assert given["metrics"]["accuracy"] == 100.0
    assert given["details"]["identification_file"].startswith(str(corpus / "identification"))


def test_identification_dataset_options_change_what_is_read(corpus: Path, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """``--dataset whoops-identification,counterpart=natural``: the natural pictures are read as
    the counterparts (the oracle knows only normal_* names, so it calls them weird)."""
    normal = evaluate(corpus, tmp_path / "normal", "whoops-identification", "oracle")
    natural = evaluate(corpus, tmp_path / "natural", "whoops-identification", "oracle",
                       datasets=("whoops-identification,counterpart=natural",))
    assert normal["metrics"]["normal_accuracy"] == 100.0 and natural["metrics"]["normal_accuracy"] == 0.0
    assert (normal["details"]["counterpart"], natural["details"]["counterpart"]) == ("normal_image", "natural_image")
    assert _records(tmp_path / "normal") != _records(tmp_path / "natural")
    # a task option that moved to the dataset, and a dataset the task does not read: one line each
    for task, extra in (("whoops-identification,counterpart=natural", []),
                        ("whoops-identification", ["--dataset", "whoops,folds=x.json"]),
                        ("whoops-vqa", ["--dataset", "whoops-identification,counterpart=natural"])):
        assert main(["eval", task, "--model", "random", "--data", str(corpus), "--out", str(tmp_path / "no"),
                     "--quiet", *extra]) == 2
        err = capsys.readouterr().err.strip()
        assert "\n" not in err and "Traceback" not in err and ("counterpart" in err or "reads dataset" in err)


def test_explanation_judged_with_a_test_judge(corpus: Path, tmp_path: Path) -> None:
    LiteralJudge.prompts.clear()
    oracle = evaluate(corpus, tmp_path / "oracle", "whoops-explanation", "oracle", judge="literal-judge")
    # the oracle writes the designer explanation: "yes" for all but the whales ("Perhaps": unparsed)
    whales = sum(1 for i in load_release(corpus).images if "whale" in i.designer_explanation)
    assert oracle["metrics"]["judge_equivalent"] == 100.0
    assert oracle["metrics"]["judge_parse_failures"] == whales == 5
    assert oracle["judge"]["judged"] == 20 and oracle["judge"]["parse_failures"] == 5
    assert len(LiteralJudge.prompts) == 20 and "What makes this image weird?" in LiteralJudge.prompts[0]
    random = evaluate(corpus, tmp_path / "random", "whoops-explanation", "random", judge="literal-judge")
    records = _records(tmp_path / "random")
    parsed = [r["judge"] for r in records if r["judge"] is not None]
    assert random["metrics"]["judge_equivalent"] == 100 * sum(parsed) / len(parsed) < 100.0
    assert random["details"]["by_category"]["Zoology"]["judge_parse_failures"] >= 0
    views = page_views(tmp_path / "random")  # samples.html: the explanation beside the references, the verdict
    for view, record in zip(views, records):
        texts = {t["label"]: t["text"] for t in view["texts"]}
        assert texts["generated explanation"] == record["prediction"]
        assert [texts[f"reference {k + 1}"] for k in range(len(record["references"]))] == record["references"]
        verdict = {True: "equivalent", False: "not equivalent", None: "unparsed"}[record["judge"]]
        assert view["correct"] is record["judge"] and view["fields"]["verdict"] == verdict
    assert len({v["fields"]["verdict"] for v in views}) >= 2  # parsed and unparsed verdicts both shown


def test_two_judges_agreement_by_hand(corpus: Path, tmp_path: Path) -> None:
    results = evaluate(corpus, tmp_path / "two", "whoops-explanation", "oracle", judge="literal-judge",
                       other_judges=("no-judge",))
    block = results["details"]["judge_agreement"]
    # the literal judge: yes on 15 images, unparsed on the 5 whales; the other: no on all 20
    first, other = block["judges"]
    assert (first["read"], first["score"], other["read"], other["score"]) == (15, 100.0, 20, 0.0)
    (pair,) = block["pairs"]
    # 15 both read, never the same: p_o = 0 and p_e = (15 x 0 + 0 x 15) / 15^2 = 0, so kappa 0
    assert pair["both_read"] == 15 and pair["agreement"] == 0.0 and pair["kappa"] == 0.0
    assert pair["difference"] == -100.0
    # alpha: o_yn = o_ny = 15 (a whale has one value: not pairable); n_y = n_n = 15, n = 30
    assert block["alpha"] == pytest.approx(1 - 29 * 30 / (2 * 15 * 15))
    assert "alpha_with_people" not in block and block["human_labels"] == 0


def test_explanation_without_judge_or_proxy_asks_for_judge(corpus: Path, tmp_path: Path) -> None:
    with pytest.raises(AbductError, match="pass --judge SPEC"):
        evaluate(corpus, tmp_path / "r", "whoops-explanation", "random")
    assert not (tmp_path / "r" / ".partial").exists()  # refused in the plan: nothing was generated


def test_explanation_proxies_equal_the_metrics_package(corpus: Path, tmp_path: Path) -> None:
    from abduct_metrics.testing import WORDS, build_tiny_bert

    words = [*WORDS, *"sun leaf brick whale yellow green red blue not should be never wrong instead real".split()]
    bert = build_tiny_bert(tmp_path / "bert", words=words)
    results = evaluate(corpus, tmp_path / "run", f"whoops-explanation,bertscore_model={bert},bertscore_layers=2",
                       "random")
    records = _records(tmp_path / "run")
    predictions = {r["image_id"]: r["prediction"] for r in records}
    references = {r["image_id"]: r["references"] for r in records}
    expected = metric("bertscore", model=str(bert), num_layers=2).compute(predictions, references).corpus
    assert results["metrics"]["bertscore_f1"] == pytest.approx(expected["bertscore_f1"], rel=1e-12)
    assert "judge_equivalent" not in results["metrics"] and "not run" in results["details"]["judge"]
    views = page_views(tmp_path / "run")  # samples.html: each image's figures on results.json's scale
    shown = [v["fields"]["bertscore_f1"] for v in views]
    assert sum(shown) / len(shown) == pytest.approx(results["metrics"]["bertscore_f1"], abs=0.01)
    assert not any(name.startswith("metrics") for v in views for name in v["fields"])


def test_caption_retrieval_baseline_picks_from_other_images(corpus: Path, tmp_path: Path) -> None:
    """abduct-core's retrieve:<scorer> with a test scorer (longer text, higher score), built by
    the test's registry: each image gets the longest crowd caption of the images outside its fold
    part, never its own."""
    evaluate(corpus, tmp_path / "cap", "whoops-captioning", "retrieve:length")
    images = load_release(corpus).by_id()
    folds = make_folds(list(images))
    for r in _records(tmp_path / "cap"):
        part = next(set(folds.part(k, "test")) for k in range(5) if r["image_id"] in folds.part(k, "test"))
        pool = list(dict.fromkeys(c for i, image in images.items() if i not in part for c in image.crowd_captions))
        assert r["prediction"] == max(pool, key=len)  # ties: the first in pool order
