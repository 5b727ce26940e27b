"""The three tasks end to end: contracts, CLI on a synthesised corpus, agreement of the
evaluation path with the official-format scoring path, the clue as context, third-party
scorers, and the random figures pinned."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from sherlock_test_util import ClueReader, CountedMatrix, random_model, registry_with_test_models, write_json

from abduct import AbductError, VisualInput
from abduct.host import EvalConfig, Registry, get_registry, run_evaluation
from abduct_sherlock import load_instances
from abduct_sherlock.keys import ComparisonKey
from abduct_sherlock.layout import ImageRoots
from abduct_sherlock.leaderboard import read_instances
from abduct_sherlock.records import OPTIONAL_INPUTS
from abduct_testing import TaskContract, main


class _SherlockContract(TaskContract):
    """The core's task contract on the session corpus (the tasks only read it)."""

    @pytest.fixture(autouse=True)
    def _shared_corpus(self, corpus: Path) -> None:
        self.corpus = corpus

    def make_data(self, tmp_path: Path) -> Path:
        return self.corpus


class TestRetrievalContract(_SherlockContract):
    task_name = "sherlock-retrieval"


class TestLocalizationContract(_SherlockContract):
    task_name = "sherlock-localization"


class TestComparisonContract(_SherlockContract):
    task_name = "sherlock-comparison"


@pytest.mark.parametrize("task", ["sherlock-retrieval", "sherlock-localization", "sherlock-comparison"])
def test_an_interrupted_run_resumes_its_finished_units(corpus: Path, tmp_path: Path, task: str) -> None:
    """The custom stages' units are stored as they finish: a run stopped halfway scores only the
    rest when started again, to the same numbers."""
    registry = registry_with_test_models()
    CountedMatrix.calls, CountedMatrix.budget = 0, None
    try:
        reference = _eval(corpus, tmp_path / "ref", task, "counted-matrix", registry=registry)
        fresh, CountedMatrix.calls = CountedMatrix.calls, 0
        CountedMatrix.budget = fresh - 1  # stops in the last unit
        with pytest.raises(AbductError, match="interrupted"):
            _eval(corpus, tmp_path / "o", task, "counted-matrix", registry=registry)
        assert list((tmp_path / "o" / ".partial").glob("*.jsonl"))
        CountedMatrix.calls, CountedMatrix.budget = 0, None
        resumed = _eval(corpus, tmp_path / "o", task, "counted-matrix", registry=registry)
    finally:
        CountedMatrix.budget = None
    assert resumed["resumed"] is True and resumed["metrics"] == reference["metrics"]
    assert 0 < CountedMatrix.calls < fresh and fresh >= 2


def _eval(data: Path, out: Path, task: str, model: str = "random", seed: int = 0,
          registry: Registry | None = None) -> dict[str, Any]:
    return run_evaluation(EvalConfig(task=task, model=model, data_dir=data, out_dir=out, quiet=True,
                                     use_cache=False, seed=seed), registry)


def test_synth_then_eval_all_three_with_random_through_the_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "data"
    assert main(["sherlock", "synth", "--out", str(data), "--images", "60"]) == 0
    results = {}
    for task in ("retrieval", "localization", "comparison"):
        out = tmp_path / task
        assert main(["eval", f"sherlock-{task}", "--model", "random", "--data", str(data), "--out", str(out), "--quiet"]) == 0
        results[task] = json.loads((out / "results.json").read_text())
    capsys.readouterr()
    retrieval = results["retrieval"]
    assert set(retrieval["metrics"]) >= {"im2txt", "txt2im", "p_at_1"}
    per_chunk = retrieval["details"]["per_chunk"]
    assert len(per_chunk) == retrieval["metrics"]["chunks"] >= 1
    assert retrieval["metrics"]["im2txt"] == pytest.approx(np.mean([c["im2txt"] for c in per_chunk.values()]))
    # chance: a random scorer's mean rank is near (N+1)/2
    assert abs(retrieval["metrics"]["im2txt"] - retrieval["metrics"]["chance_mean_rank"]) < 0.25 * retrieval["metrics"]["chance_mean_rank"]
    assert set(results["localization"]["metrics"]) >= {"gt_accuracy", "auto_accuracy"}
    assert 5 < results["localization"]["metrics"]["gt_accuracy"] < 60
    assert set(results["comparison"]["metrics"]) >= {"accuracy", "human", "oracle"}
    assert results["comparison"]["metrics"]["oracle"] > results["comparison"]["metrics"]["human"] > 20


def test_constant_scorer_hits_the_tie_rules(corpus: Path, tmp_path: Path) -> None:
    retrieval = _eval(corpus, tmp_path / "r", "sherlock-retrieval", "constant")["metrics"]
    assert retrieval["p_at_1"] == 0.0 and retrieval["im2txt"] == retrieval["chance_mean_rank"]
    assert _eval(corpus, tmp_path / "l", "sherlock-localization", "constant")["metrics"]["gt_accuracy"] < 30


def _random_predictions(data: Path, path: Path, seed: int) -> dict[str, float]:
    """What the random scorer gives every row of an instance file, by test id."""
    rows = read_instances(path, ImageRoots.for_data_dir(data))
    scores = random_model(seed).score([r.visual for r in rows], [r.inference for r in rows])
    return dict(zip((r.test_id for r in rows), scores.tolist()))


def test_evaluation_equals_official_scoring_of_the_same_scores(corpus: Path, tmp_path: Path) -> None:
    seed = 5
    folder = corpus / "val_comparison"
    preds = write_json(tmp_path / "c.json", _random_predictions(corpus, folder / "val_comparison_instances.json", seed))
    scored = get_registry().create("task", "sherlock-comparison").score_files(preds, folder / "val_comparison_answer_key.json")
    evaluated = _eval(corpus, tmp_path / "c", "sherlock-comparison", seed=seed)["metrics"]
    assert {k: evaluated[k] for k in scored} == scored

    folder = corpus / "val_localization"
    preds = write_json(tmp_path / "l.json", _random_predictions(corpus, folder / "val_localization_instances.json", seed))
    scored = get_registry().create("task", "sherlock-localization").score_files(preds, folder / "val_localization_answer_key.json")
    evaluated = _eval(corpus, tmp_path / "l", "sherlock-localization", seed=seed)["metrics"]
    assert {k: evaluated[k] for k in scored} == scored

    result = _eval(corpus, tmp_path / "r", "sherlock-retrieval", seed=seed)
    for k, chunk in result["details"]["per_chunk"].items():
        folder = corpus / "val_retrieval"
        preds = write_json(tmp_path / f"r{k}.json",
                           _random_predictions(corpus, folder / f"val_retrieval_{k}_instances.json", seed))
        scored = get_registry().create("task", "sherlock-retrieval").score_files(preds, folder / f"val_retrieval_{k}_answer_key.json")
        assert {n: chunk[n] for n in scored} == scored


def test_localization_from_annotations_and_proposals_equals_leaderboard_files(corpus: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"  # the random scorer hashes image paths: one directory for both
    shutil.copytree(corpus, data)
    from_leaderboard = _eval(data, tmp_path / "b", "sherlock-localization")
    shutil.rmtree(data / "val_localization")
    from_annotations = _eval(data, tmp_path / "a", "sherlock-localization")
    assert from_annotations["details"]["source"] == "annotations"
    assert from_leaderboard["details"]["source"] == "leaderboard"
    assert from_annotations["metrics"] == from_leaderboard["metrics"]
    (data / "sherlock_val_autoboxes.json").unlink()
    gt_only = _eval(data, tmp_path / "c", "sherlock-localization")["metrics"]
    assert "auto_accuracy" not in gt_only and gt_only["gt_accuracy"] == from_leaderboard["metrics"]["gt_accuracy"]


def test_train_split_is_refused(corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["eval", "sherlock-retrieval", "--model", "random", "--data", str(corpus), "--out", str(tmp_path / "o"),
                 "--split", "train", "--quiet"])
    assert code == 2 and "validation split" in capsys.readouterr().err


def test_no_heavy_imports() -> None:
    import subprocess
    import sys

    code = ("import sys, abduct_sherlock.plugin, abduct_sherlock.tasks, abduct_sherlock.synth, "
            "abduct_sherlock.submission, abduct_sherlock.check, abduct_sherlock.cli, abduct_sherlock.dataset; "
            "assert not {'torch', 'open_clip', 'transformers', 'scipy'} & set(sys.modules), sys.modules.keys()")
    subprocess.run([sys.executable, "-c", code], check=True)


# -- the random figures do not move ----------------------------------------------------------
# `random` on the session corpus (48 images, seed 0, chunks of ~20), measured before the clue
# became the inputs' context: random takes no context, so the clue is stripped and its scores
# still depend on (image path tail, region, text) alone.
RANDOM_SEED_0 = {
    "sherlock-retrieval": {"chance_mean_rank": 11.25, "chunks": 2, "im2txt": 11.75, "instances": 43,
                           "p_at_1": 4.653679653679654, "txt2im": 11.425324675324674},
    "sherlock-localization": {"auto_accuracy": 9.722222222222221, "auto_oracle": 93.47222222222223,
                              "gt_accuracy": 32.22222222222222, "images": 12},
    "sherlock-comparison": {"accuracy": 7.11612662092491, "human": 62.93068780572454, "oracle": 95.4339917785296,
                            "sources": 14},
}


@pytest.mark.parametrize("task", sorted(RANDOM_SEED_0))
def test_random_figures_are_unchanged_and_the_clue_is_ignored(corpus: Path, tmp_path: Path, task: str) -> None:
    result = _eval(corpus, tmp_path / "o", task)
    assert result["metrics"] == RANDOM_SEED_0[task]
    assert result["inputs"]["ignored"] == ["context"]


def test_every_task_declares_the_same_optional_inputs() -> None:
    assert OPTIONAL_INPUTS == {"image", "region", "context"}
    for task in RANDOM_SEED_0:
        assert get_registry().create("task", task).optional_inputs == OPTIONAL_INPUTS  # type: ignore[attr-defined]


# -- the clue as context ---------------------------------------------------------------------
@pytest.fixture
def clue_reader_runs() -> Iterator[list[tuple[Any, str]]]:
    ClueReader.seen = []
    yield ClueReader.seen
    ClueReader.seen = []


def test_a_text_only_scorer_gets_the_source_clue_on_comparison(corpus: Path, tmp_path: Path,
                                                               clue_reader_runs: list[tuple[Any, str]]) -> None:
    result = _eval(corpus, tmp_path / "o", "sherlock-comparison", "clue-reader", registry=registry_with_test_models())
    assert result["inputs"]["ignored"] == ["image", "region"]
    assert json.loads((tmp_path / "o" / "results.json").read_text())["inputs"]["ignored"] == ["image", "region"]
    by_id = {i.instance_id: i for i in load_instances(corpus, "val")}
    key = ComparisonKey.read(corpus / "val_comparison" / "val_comparison_answer_key.json")
    id_map = json.loads((corpus / "val_comparison" / "val_comparison_answer_key.json").read_text())["test_id_map"]
    expected = {(by_id[s.input_iid].clue, by_id[id_map[t]["candidate"]].inference) for s in key.sources
                for t, _, _ in s.candidates}
    assert clue_reader_runs and all(v.media is None and v.region is None for v, _ in clue_reader_runs)
    assert {(v.context, text) for v, text in clue_reader_runs} == expected
    assert result["metrics"]["accuracy"] > 20  # the clue names the object the inference is about


def test_a_text_only_scorer_gets_each_clue_on_retrieval(corpus: Path, tmp_path: Path,
                                                        clue_reader_runs: list[tuple[Any, str]]) -> None:
    result = _eval(corpus, tmp_path / "o", "sherlock-retrieval", "clue-reader", registry=registry_with_test_models())
    assert result["inputs"]["ignored"] == ["image", "region"]
    val = load_instances(corpus, "val")
    assert all(v.media is None and v.region is None for v, _ in clue_reader_runs)
    assert {v.context for v, _ in clue_reader_runs} == {i.clue for i in val}
    seen = {(v.context, text) for v, text in clue_reader_runs}
    assert all((i.clue, i.inference) in seen for i in val)


def test_a_missing_clue_is_one_line(corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "data"  # the comparison files, and an annotation file lacking one source
    shutil.copytree(corpus / "val_comparison", data / "val_comparison")
    source = ComparisonKey.read(data / "val_comparison" / "val_comparison_answer_key.json").sources[0].input_iid
    records = json.loads((corpus / "sherlock_val_with_split_idxs_v1_1.json").read_text())
    write_json(data / "sherlock_val_with_split_idxs_v1_1.json", [r for r in records if r["instance_id"] != source])
    code = main(["eval", "sherlock-comparison", "--model", "random", "--data", str(data), "--out", str(tmp_path / "o"),
                 "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert f"instance {source} is not in sherlock_val_with_split_idxs_v1_1.json" in err and "clue" in err
    assert main(["sherlock", "check", "--data", str(data), "--no-images", "--json"]) == 1  # check finds it first
    problems = json.loads(capsys.readouterr().out)
    assert any("val_comparison_answer_key.json" in p and f"clue cannot be found (first: {source})" in p for p in problems)


def test_gt_localization_rows_carry_the_box_owners_clue_on_both_paths(corpus: Path) -> None:
    from abduct.host import build_registry

    def gt_rows(images: list[Any]) -> set[tuple[Any, str]]:
        return {(v, t) for u in images for tid, v, t in zip(u.ids, u.visuals, u.texts) if u.gt and tid in u.gt.cells}

    registry = build_registry()
    leaderboard = registry.create("dataset", "sherlock-localization,source=leaderboard").load(corpus, "val")
    annotations = registry.create("dataset", "sherlock-localization,source=annotations").load(corpus, "val")
    assert {u.source for u in leaderboard} == {"leaderboard"} and {u.source for u in annotations} == {"annotations"}
    assert gt_rows(leaderboard) == gt_rows(annotations)
    by_region = {(i.image_path, i.region): i.clue for i in load_instances(corpus, "val")}
    assert all(v.context == by_region[(v.media, v.region)] for v, _ in gt_rows(leaderboard))
    auto = [v for u in leaderboard for tid, v in zip(u.ids, u.visuals) if not (u.gt and tid in u.gt.cells)]
    assert auto and all(v.context is None for v in auto)  # proposals: no annotator wrote a clue


# -- a third-party scorer offering only score_matrix -------------------------------------------
@pytest.mark.parametrize("task", ["sherlock-comparison", "sherlock-localization", "sherlock-retrieval"])
def test_a_matrix_only_scorer_evaluates_end_to_end(corpus: Path, tmp_path: Path, task: str) -> None:
    result = _eval(corpus, tmp_path / "o", task, "matrix-random", registry=registry_with_test_models())
    assert result["metrics"] == RANDOM_SEED_0[task]  # the same numbers as random's own score()


# -- the dataset as other packages read it -----------------------------------------------------
def test_the_registered_dataset_offers_training_pairs(corpus: Path) -> None:
    from abduct import Dataset, GroundedText, PairDataset
    from abduct.host import build_registry

    dataset = build_registry().create("dataset", "sherlock")
    assert isinstance(dataset, PairDataset) and isinstance(dataset, Dataset)
    train, val = dataset.pairs(corpus, "train"), dataset.pairs(corpus, "val")
    instances = {i.instance_id: i for i in load_instances(corpus, "train") + load_instances(corpus, "val")}
    assert len(train) + len(val) == len(instances)
    for pair in (*train, *val):
        inst = instances[pair.id]
        assert isinstance(pair, GroundedText)
        assert pair.visual == VisualInput(inst.image_path, inst.region, context=inst.clue)
        assert pair.text == inst.inference
        assert pair.group == (None if inst.split_idx is None else str(inst.split_idx))
    assert all(p.group is None for p in train) and {p.group for p in val} == {"0", "1"}
    assert dataset.check(corpus) == []
    assert len(build_registry().create("dataset", "sherlock,skip_invalid=true").load(corpus, "val")) == len(val)


def test_a_clue_only_scorer_is_refused_on_localization_auto_boxes(corpus: Path, tmp_path: Path) -> None:
    with pytest.raises(AbductError, match="needs context inputs"):  # proposals have no clue
        _eval(corpus, tmp_path / "o", "sherlock-localization", "clue-reader", registry=registry_with_test_models())


def test_chance_levels_follow_the_data(corpus: Path, tmp_path: Path) -> None:
    """Retrieval and GT-localization chance depend on chunk and image sizes: declared per run."""
    retrieval = _eval(corpus, tmp_path / "r", "sherlock-retrieval")
    info, chunks = retrieval["metric_info"], retrieval["details"]["per_chunk"].values()
    assert info["im2txt"] == {"better": "lower", "range": [1.0, None], "chance": retrieval["metrics"]["chance_mean_rank"]}
    assert info["p_at_1"]["chance"] == pytest.approx(np.mean([100.0 / c["n"] for c in chunks]))
    assert info["chance_mean_rank"]["better"] is None and info["chunks"]["better"] is None
    localization = _eval(corpus, tmp_path / "l", "sherlock-localization")
    boxes = [json.loads(line)["boxes"] for line in (tmp_path / "l" / "predictions.jsonl").read_text().splitlines()]
    assert localization["metric_info"]["gt_accuracy"]["chance"] == pytest.approx(100 * np.mean([1 / b for b in boxes]))
    comparison = _eval(corpus, tmp_path / "c", "sherlock-comparison")
    assert comparison["metric_info"]["accuracy"] == {"better": "higher", "range": [-100.0, 100.0], "chance": 0.0}
    assert "↑ higher | 0 |" in (tmp_path / "c" / "report.md").read_text()
