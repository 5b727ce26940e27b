"""The cosim task: contract, hand-computed accuracies (ties, duplicate-text distractors),
breakdowns, official-format scoring (errors exit 2), options, inputs, the synthetic corpus."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from abduct import VisualInput
from abduct.host import EvalConfig, Registry, run_evaluation
from abduct_cosim.synth import COLORS, OPPOSITE
from abduct_testing import TaskContract, main, make_images, registry_with_models
from conftest import record, write_json


class TestCosimContract(TaskContract):
    task_name = "cosim"

    @pytest.fixture(autouse=True)
    def _shared(self, corpus: Path) -> None:
        self.corpus = corpus

    def make_data(self, tmp_path: Path) -> Path:
        return self.corpus


# -- a hand-made answer key with ties and a duplicate-text distractor ------------------------
KEY = [
    record(["a.", "b.", "c.", "d."], 0, question="Is it red?", change="Paint it."),                 # 1 sentence
    record(["same.", "same.", "x.", "y."], 1, question="Are they old?", change="A. B."),          # dup gold text
    record(["p.", "q.", "r.", "s."], 2, question="What is it?", change="A. B. C."),
    record(["p.", "q.", "r.", "s."], 3, question="Why?", change="A. B. C. D. E.", type="normal"),
]


def score(tmp_path: Path, predictions: Any, key: list[dict[str, Any]] = KEY) -> tuple[int, Any, str]:
    p = tmp_path / "p.json"
    p.write_text(predictions if isinstance(predictions, str) else json.dumps(predictions))
    k = write_json(tmp_path / "val.json", key)
    return main(["score", "cosim", "--predictions", str(p), "--answer-key", str(k), "--json"]), p, str(k)


def test_score_hand_computed_with_ties_and_duplicates(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    predictions = [
        [1, 1, 0, 0],        # tie 0/1 -> 0: correct (label 0)
        [5, 2, 1, 0],        # picks index 0, whose text equals the gold text: wrong (label 1)
        [0, 3, 3, 3],        # tie 1/2/3 -> 1: wrong (label 2)
        [0.1, 0.2, 0.3, 0.4],  # 3: correct
    ]
    code, _, _ = score(tmp_path, predictions)
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert out["accuracy"] == 50.0 and out["n"] == 4
    assert out["by_type"] == {"hamlet": {"accuracy": 100 / 3, "n": 3}, "normal": {"accuracy": 100.0, "n": 1}}
    assert out["by_change_sentences"] == {"1": {"accuracy": 100.0, "n": 1}, "2": {"accuracy": 0.0, "n": 1},
                                          "3": {"accuracy": 0.0, "n": 1}, "4+": {"accuracy": 100.0, "n": 1}}
    assert out["by_question"] == {"yes_no": {"accuracy": 50.0, "n": 2}, "other": {"accuracy": 50.0, "n": 2}}
    # the object form, and the picked duplicate's index 1 is right
    code, _, _ = score(tmp_path, {"3": [0, 0, 0, 0], "0": [0, 0, 0, 0], "1": [0, 9, 9, 0], "2": [0, 0, 1, 0]})
    assert code == 0 and json.loads(capsys.readouterr().out)["accuracy"] == 75.0


@pytest.mark.parametrize("predictions, words", [
    ([[1, 0, 0, 0]] * 3, "expected 4 entries"),
    ({"0": [1, 0, 0, 0], "1": [1, 0, 0, 0], "2": [1, 0, 0, 0]}, "record 3: no scores for 1 record(s): 3"),
    ({**{str(i): [0, 0, 0, 0] for i in range(4)}, "7": [0, 0, 0, 0]}, "record 7: not a record index"),
    ([[1, 0, 0, 0], [1, 0, 0], [1, 0, 0, 0], [1, 0, 0, 0]], "record 1, field 'scores': expected a list of 4 scores"),
    ('[[1,0,0,0],[1,0,NaN,0],[1,0,0,0],[1,0,0,0]]', "record 1, field 'scores[2]': NaN is not a score"),
    ('[[1,0,0,0],[1,0,0,0],[1,0,0,0],[NaN,0,0,0]]', "record 3, field 'scores[0]': NaN is not a score"),
    ([[1, 0, 0, "0"]] * 4, "record 0, field 'scores[3]': expected a number"),
    ("{", "not valid JSON"),
])
def test_bad_predictions_exit_2_naming_it(tmp_path: Path, capsys: pytest.CaptureFixture[str], predictions: Any,
                                          words: str) -> None:
    code, path, _ = score(tmp_path, predictions)
    err = capsys.readouterr().err
    assert code == 2 and str(path) in err and words in err


def test_score_on_the_real_val_file(real_cosim: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    raw = json.loads((real_cosim / "val.json").read_text())
    labels = [r["answer_label"] for r in raw]
    key = str(real_cosim / "val.json")

    def run(predictions: Any) -> dict[str, Any]:
        path = write_json(tmp_path / "p.json", predictions)
        assert main(["score", "cosim", "--predictions", str(path), "--answer-key", key, "--json"]) == 0
        out: dict[str, Any] = json.loads(capsys.readouterr().out)
        return out

    oracle = run([[float(k == label) for k in range(4)] for label in labels])
    assert oracle["accuracy"] == 100.0 and oracle["n"] == 800
    constant = run({str(i): [0, 0, 0, 0] for i in range(800)})  # all ties: index 0 every time
    assert labels.count(0) == 206 and constant["accuracy"] == 25.75
    assert constant["by_type"] == {"hamlet": {"accuracy": 25.75, "n": 800}}
    # picking the first choice with the gold text: of the 5 records with a duplicate of the gold
    # text, only record 9 has it before the gold (index 0, gold 1): 799 of 800 right
    first_text = run([[float(k == r["answer_choices"].index(r["answer_choices"][r["answer_label"]])) for k in range(4)]
                      for r in raw])
    assert first_text["accuracy"] == 100.0 * 799 / 800 == 99.875
    assert sum(v["n"] for v in oracle["by_change_sentences"].values()) == 800


# -- evaluation ------------------------------------------------------------------------------
class ContextReader:
    """A text-only scorer: word overlap of the choice with the context; records what it sees."""

    accepts = frozenset({"context"})
    seen: list[VisualInput] = []

    def score(self, visuals: Sequence[VisualInput], texts: Sequence[str]) -> np.ndarray:
        ContextReader.seen.extend(visuals)
        return np.array([len(set(str(v.context).lower().split()) & set(t.lower().split())) for v, t in
                         zip(visuals, texts)], float)


class Oracle:
    """Reads image and change of the synthetic corpus: knows the answer (both inputs needed)."""

    accepts = frozenset({"image", "context"})

    def score(self, visuals: Sequence[VisualInput], texts: Sequence[str]) -> np.ndarray:
        from PIL import Image

        out = []
        for v, t in zip(visuals, texts):
            assert v.media is not None and v.context is not None
            with Image.open(v.media) as im:
                pixels = np.asarray(im.convert("RGB"), dtype=float)
            seen = min(COLORS, key=lambda c: int((np.abs(pixels - COLORS[c]).sum(axis=2) < 60).sum()) * -1)
            change = v.context.split(" [SEP] ")[2]
            if change.startswith("Paint"):
                final = change.split()[3].rstrip(".")
            elif change.startswith("Give"):
                final = OPPOSITE[seen]
            else:
                final = seen
            out.append(float(t.rstrip(".").endswith(final)))
        return np.array(out)


def _eval(data: Path, out: Path, task: str = "cosim", model: str = "random", **kw: Any) -> dict[str, Any]:
    registry: Registry = registry_with_models("cosim-test-models", {"context-reader": ("text only", ContextReader),
                                                                    "synth-oracle": ("image and change", Oracle)})
    return run_evaluation(EvalConfig(task=task, model=model, data_dir=data, out_dir=out, quiet=True,
                                     use_cache=False, **kw), registry)


def test_eval_hand_computed_with_a_tie_scorer(tmp_path: Path) -> None:
    make_images(tmp_path / "images" / "genome_1", 1)
    (tmp_path / "images" / "genome_1" / "image_0.jpg").rename(tmp_path / "images" / "genome_1" / "1.jpg")
    write_json(tmp_path / "val.json", KEY)
    result = _eval(tmp_path, tmp_path / "out", model="constant")
    assert result["metrics"]["accuracy"] == 25.0  # all ties -> index 0: only record 0
    rows = [json.loads(line) for line in (tmp_path / "out" / "predictions.jsonl").read_text().splitlines()]
    assert [r["choice"] for r in rows] == [0, 0, 0, 0] and [r["id"] for r in rows] == ["0", "1", "2", "3"]
    assert rows[1]["duplicate_gold_text"] is True and rows[0]["change_sentences"] == "1"


def test_context_option_and_what_each_model_sees(corpus: Path, tmp_path: Path) -> None:
    ContextReader.seen = []
    full = _eval(corpus, tmp_path / "full", model="context-reader", limit=3)
    assert full["inputs"]["ignored"] == ["image"]
    first = ContextReader.seen[0]
    raw = json.loads((corpus / "val.json").read_text())[0]
    assert first.media is None and first.context == " [SEP] ".join((raw["question"], raw["answer_orig"], raw["change"]))
    ContextReader.seen = []
    _eval(corpus, tmp_path / "qc", model="context-reader", limit=1, datasets=("cosim,context=question_change",))
    assert ContextReader.seen[0].context == raw["question"] + " [SEP] " + raw["change"]
    ContextReader.seen = []
    _eval(corpus, tmp_path / "none", model="context-reader", limit=1, datasets=("cosim,context=none",))
    assert ContextReader.seen[0].context is None
    assert _eval(corpus, tmp_path / "r", model="random")["inputs"]["ignored"] == ["context"]
    assert main(["eval", "cosim,context=none", "--model", "random", "--data", str(corpus),
                 "--out", str(tmp_path / "x")]) == 2  # an option of the dataset, not of the task


def test_synthetic_answers_need_image_and_change(corpus: Path, tmp_path: Path) -> None:
    both = _eval(corpus, tmp_path / "o", model="synth-oracle")["metrics"]["accuracy"]
    text = _eval(corpus, tmp_path / "t", model="context-reader")["metrics"]["accuracy"]
    chance = _eval(corpus, tmp_path / "r", model="random")["metrics"]
    assert both == 100.0 and text < 80.0
    assert set(chance["by_change_sentences"]) == {"1", "2", "3", "4+"} and chance["n"] == 30
    assert set(chance["by_question"]) == {"yes_no", "other"}


def test_unknown_split_and_train_split(corpus: Path, tmp_path: Path) -> None:
    assert _eval(corpus, tmp_path / "tr", split="train")["metrics"]["by_type"]["normal"]["n"] == 24
    assert main(["eval", "cosim", "--model", "random", "--data", str(corpus), "--out", str(tmp_path / "x"),
                 "--split", "test"]) == 2


# -- the dataset's options: what the task reads ------------------------------------------------
def _rows(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()]


def test_dataset_context_option_changes_what_the_task_reads(corpus: Path, tmp_path: Path) -> None:
    ContextReader.seen = []
    full = _eval(corpus, tmp_path / "full", model="context-reader", datasets=("cosim,context=full",))
    assert full["details"]["context"] == "full" and ContextReader.seen[0].context is not None
    ContextReader.seen = []
    none = _eval(corpus, tmp_path / "none", model="context-reader", datasets=("cosim,context=none",))
    assert none["details"]["context"] == "none" and {v.context for v in ContextReader.seen} == {None}
    assert [r["scores"] for r in _rows(tmp_path / "none")] != [r["scores"] for r in _rows(tmp_path / "full")]


def test_dataset_options_from_the_cli_and_their_one_line_errors(corpus: Path, tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    args = ["--model", "random", "--data", str(corpus), "--quiet", "--no-cache"]
    assert main(["eval", "cosim", *args, "--out", str(tmp_path / "n"), "--dataset", "cosim,context=none"]) == 0
    assert json.loads((tmp_path / "n" / "results.json").read_text())["details"]["context"] == "none"
    capsys.readouterr()
    for task, extra, words in (
        ("cosim", ["--dataset", "cosim,image_root=/nonexistent"], "image_root=) not found: /nonexistent"),
        ("cosim,context=full", [], "task 'cosim' has no option 'context'"),
        ("cosim", ["--dataset", "cosim,context=bogus"], "'bogus' is not one of full"),
    ):
        assert main(["eval", task, *args, "--out", str(tmp_path / "x"), *extra]) == 2
        err = capsys.readouterr().err.strip()
        assert words in err and len(err.splitlines()) == 1, err
        assert not (tmp_path / "x" / "results.json").exists()


def test_the_dataset_image_root_option_moves_the_images(corpus: Path, tmp_path: Path) -> None:
    import shutil

    data = tmp_path / "data"
    data.mkdir()
    shutil.copy(corpus / "val.json", data / "val.json")
    moved = shutil.copytree(corpus / "images", tmp_path / "elsewhere")
    with pytest.raises(FileNotFoundError):  # the images are not under DATA/images (the oracle opens them)
        _eval(data, tmp_path / "x", model="synth-oracle", limit=6)
    through_dataset = _eval(data, tmp_path / "d", model="synth-oracle", limit=6, datasets=(f"cosim,image_root={moved}",))
    assert through_dataset["metrics"]["accuracy"] == 100.0
    from abduct_testing.browser import page_views

    assert all((tmp_path / "d" / v["images"][0]["path"]).resolve().is_relative_to(moved.resolve())
               for v in page_views(tmp_path / "d"))  # named relative to the page


def test_the_plan_is_one_choose_stage_named_cosim(corpus: Path) -> None:
    from abduct import Choose, RunInfo
    from abduct.host import build_registry

    registry = build_registry()
    records = registry.create("dataset", "cosim,context=question_change").load(corpus, "val")[:20]
    info = RunInfo(split="val", model_name="m", scores=True, generates=False, judged=False,
                   metric=lambda name, **options: None, corpus=records)
    [stage] = registry.create("task", "cosim").plan(records, info)
    assert stage.name == "cosim" and isinstance(stage.request, Choose) and stage.request.per_unit == 16
    assert [i.id for i in stage.request.items] == [r.id for r in records]
    assert stage.request.items[0].visual.context == records[0].context("question_change")
