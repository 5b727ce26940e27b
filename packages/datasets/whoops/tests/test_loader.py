"""Loader (the three released forms, errors naming file, image id and column), check, folds."""

from __future__ import annotations

import hashlib
import json
import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from abduct import DataError
from abduct_testing import main
from abduct_whoops.loader import load_csv, load_release, read_csv_rows
from abduct_whoops.records import COLUMNS
from abduct_whoops.splits import make_folds, read_folds, write_folds
from conftest import row, write_csv


def test_csv_with_bom_json_lists_and_python_literals(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "whoops_dataset.csv", [
        row("a1"), row("b2", crowd_captions="['a sun', \"it's green\"]", commonsense_category="Biology")])
    images = load_csv(path)
    assert [i.image_id for i in images] == ["a1", "b2"]
    assert images[0].crowd_captions == ("a green sun", "a sun")
    assert images[0].question_answering_pairs == (("What color is the sun?", "green"), ("How many suns?", "one"))
    assert images[0].path == str(tmp_path / "images" / "a1.png")
    assert images[1].crowd_captions == ("a sun", "it's green")
    assert images[0].explanations == ("a sun is yellow", "suns are yellow")


@pytest.mark.parametrize("changes, column, words", [
    ({"crowd_captions": "[\"a sun\", "}, "crowd_captions", "not a JSON list"),
    ({"crowd_explanations": "{\"a\": 1}"}, "crowd_explanations", "expected a list, got dict"),
    ({"crowd_underspecified_captions": "[\"a sun\", 3]"}, "crowd_underspecified_captions", "item 1 is 3"),
    ({"question_answering_pairs": "[[\"q only\"]]"}, "question_answering_pairs", "pair 0 is ['q only']"),
    ({"question_answering_pairs": "[[\"q\", \"\"]]"}, "question_answering_pairs", "expected [question, answer]"),
])
def test_bad_rows_name_file_image_id_and_column(tmp_path: Path, changes: dict[str, str], column: str,
                                                words: str, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_csv(tmp_path / "whoops_dataset.csv", [row("ok1"), row("bad7", **changes)])
    with pytest.raises(DataError) as err:
        load_csv(path)
    message = str(err.value)
    assert str(path) in message and "line 3 (image_id 'bad7')" in message and f"field '{column}'" in message
    assert words in message
    # the CLI: one line, exit 2, no traceback
    assert main(["eval", "whoops-captioning", "--model", "random", "--data", str(tmp_path), "--out",
                 str(tmp_path / "run"), "--quiet"]) == 2
    err_text = capsys.readouterr().err
    assert "bad7" in err_text and column in err_text and "Traceback" not in err_text
    assert not (tmp_path / "run" / "results.json").exists()


def test_repeated_id_missing_column_and_ragged_row(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "whoops_dataset.csv", [row("a"), row("a")])
    with pytest.raises(DataError, match=r"line 3 \(image_id 'a'\), field 'image_id': image id repeated"):
        load_csv(path)
    header = [c for c in COLUMNS if c != "crowd_captions"]
    path = write_csv(tmp_path / "whoops_dataset.csv", [row("a")], header=header)
    with pytest.raises(DataError, match="missing column.s. crowd_captions; columns found: image, designer"):
        load_csv(path)
    path.write_text(path.read_text(encoding="utf-8-sig").splitlines()[0] + "\nonly,three,cells\n", encoding="utf-8")
    with pytest.raises(DataError, match="record line 2: 3 cells, the header has 9"):
        load_csv(path)


def _image_folder(corpus: Path, target: Path) -> Path:
    """The newer image-folder layout: test/metadata.csv beside the pictures, no image column."""
    header, rows = read_csv_rows(corpus / "whoops_dataset.csv")
    test = target / "test"
    test.mkdir(parents=True)
    for _, r in rows:
        shutil.copy(corpus / "images" / f"{r['image_id']}.png", test / f"{r['image_id']}.png")
    columns = ["file_name", *(c for c in header if c != "image")]
    write_csv(test / "metadata.csv", [{**r, "file_name": f"{r['image_id']}.png"} for _, r in rows], header=columns,
              bom=False)
    return target


def _hf_rows(corpus: Path) -> list[dict[str, Any]]:
    """Rows as the Hugging Face copy holds them: real lists and the picture's bytes."""
    out = []
    for image in load_release(corpus).images:
        out.append({"image": {"bytes": Path(image.path).read_bytes(), "path": f"{image.image_id}.png"},
                    "designer_explanation": image.designer_explanation, "selected_caption": image.selected_caption,
                    "crowd_captions": list(image.crowd_captions), "crowd_explanations": list(image.crowd_explanations),
                    "crowd_underspecified_captions": list(image.crowd_underspecified_captions),
                    "question_answering_pairs": [list(p) for p in image.question_answering_pairs],
                    "commonsense_category": image.commonsense_category, "image_id": image.image_id,
                    "image_designer": image.image_designer})
    return out


def _same_records(a: Path, b: Path) -> None:
    first, second = load_release(a), load_release(b)
    assert [replace(i, path="", row="") for i in first.images] == [replace(i, path="", row="") for i in second.images]
    for x, y in zip(first.images, second.images):
        assert Path(x.path).read_bytes() == Path(y.path).read_bytes()


def test_the_three_released_forms_give_the_same_records(corpus: Path, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ABDUCT_CACHE_DIR", str(tmp_path / "cache"))
    folder = _image_folder(corpus, tmp_path / "folder")
    assert load_release(folder).form == "imagefolder"
    _same_records(corpus, folder)

    import datasets
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = _hf_rows(corpus)
    (tmp_path / "parquet" / "data").mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "parquet" / "data" / "test-00000-of-00001.parquet")
    assert load_release(tmp_path / "parquet").form == "hf"
    _same_records(corpus, tmp_path / "parquet")

    features = datasets.Features({k: datasets.Image() if k == "image" else
                                  datasets.Sequence(datasets.Sequence(datasets.Value("string")))
                                  if k == "question_answering_pairs" else
                                  datasets.Sequence(datasets.Value("string")) if k.startswith("crowd") else
                                  datasets.Value("string") for k in rows[0]})
    saved = datasets.DatasetDict({"test": datasets.Dataset.from_list(rows, features=features)})
    saved.save_to_disk(str(tmp_path / "saved"))
    release = load_release(tmp_path / "saved")
    assert release.form == "hf" and all(str(tmp_path / "cache") in i.path for i in release.images)
    _same_records(corpus, tmp_path / "saved")


def test_hf_row_errors_name_the_row_and_column(tmp_path: Path, corpus: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ABDUCT_CACHE_DIR", str(tmp_path / "cache"))
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [{**r, "crowd_captions": json.dumps(r["crowd_captions"])} for r in _hf_rows(corpus)[:3]]
    rows[2]["crowd_captions"] = "not a list"
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "w.parquet")
    with pytest.raises(DataError, match=r"record row 2 \(image_id 'w0002'\), field 'crowd_captions': not a JSON list"):
        load_release(tmp_path)


def test_check_lists_missing_images_by_id(corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["whoops", "check", "--data", str(corpus)]) == 0
    copy = tmp_path / "copy"
    shutil.copytree(corpus, copy)
    (copy / "images" / "w0003.png").unlink()
    (copy / "identification" / "normal_w0005.png").write_bytes(b"not a png")
    capsys.readouterr()
    assert main(["whoops", "check", "--data", str(copy), "--json"]) == 1
    problems = json.loads(capsys.readouterr().out)
    assert len(problems) == 2
    assert problems[0].startswith("image w0003: image missing")
    assert problems[1].startswith("identification pair w0005 (normal): image unreadable")


# -- folds ------------------------------------------------------------------------------------
IDS = [f"img{i:03d}" for i in range(500)]


def test_folds_are_60_20_20_and_test_every_image_once() -> None:
    folds = make_folds(IDS)
    tested = []
    for k in range(5):
        parts = {name: folds.part(k, name) for name in ("train", "val", "test")}
        assert [len(parts[n]) for n in ("train", "val", "test")] == [300, 100, 100]
        assert not set(parts["train"]) & set(parts["val"]) and not set(parts["val"]) & set(parts["test"])
        assert folds.part(k, "val") == folds.part((k + 1) % 5, "test")
        tested += parts["test"]
    assert sorted(tested) == IDS
    assert [len(make_folds(IDS[:23]).part(k, "test")) for k in range(5)] == [5, 5, 5, 4, 4]


def test_folds_depend_only_on_ids_and_seed() -> None:
    # input order does not matter; another seed gives other folds
    assert make_folds(IDS) == make_folds(list(reversed(IDS)))
    assert make_folds(IDS, seed=1) != make_folds(IDS)
    # pinned: the same folds on every machine and Python (SHA-256 ordering, no RNG)
    digest = hashlib.sha256(json.dumps(make_folds(IDS).as_json(), sort_keys=True).encode()).hexdigest()
    assert digest == PINNED_FOLDS_DIGEST
    assert make_folds(IDS).part(0, "test")[:3] == PINNED_FIRST_TEST
    # the documented method, computed here from its description
    ordered = sorted(IDS, key=lambda i: hashlib.sha256(f"whoops-folds:2023:{i}".encode()).hexdigest())
    assert [make_folds(IDS).part(k, "test") for k in range(5)] == [tuple(ordered[100 * k:100 * k + 100])
                                                                   for k in range(5)]


def test_folds_file_written_identically_and_validated(corpus: Path, tmp_path: Path) -> None:
    assert main(["whoops", "folds", "--data", str(corpus), "--out", str(tmp_path / "a.json")]) == 0
    assert main(["whoops", "folds", "--data", str(corpus), "--out", str(tmp_path / "b.json")]) == 0
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()
    ids = [i.image_id for i in load_release(corpus).images]
    assert read_folds(tmp_path / "a.json", ids) == make_folds(ids)
    data = json.loads((tmp_path / "a.json").read_text())
    data["folds"][1]["test"] = data["folds"][1]["test"][1:]
    (tmp_path / "c.json").write_text(json.dumps(data))
    with pytest.raises(DataError, match="the test parts must cover every image once"):
        read_folds(tmp_path / "c.json", ids)
    write_folds(tmp_path / "d.json", make_folds(ids, seed=7))
    assert read_folds(tmp_path / "d.json", ids).seed == 7


PINNED_FOLDS_DIGEST = "897266177daf70b826cf0e8577b66fa1ee566eca7ecb3772fda50e6b9fbd7616"
PINNED_FIRST_TEST = ("img484", "img218", "img019")


def test_training_pairs_are_fold_zero_crowd_captions(corpus: Path) -> None:
    from abduct import PairDataset
    from abduct.host import build_registry

    dataset = build_registry().create("dataset", "whoops")
    assert isinstance(dataset, PairDataset)
    folds = make_folds([i.image_id for i in load_release(corpus).images])
    train, val = dataset.pairs(corpus, "train"), dataset.pairs(corpus, "val")
    assert {p.group for p in train} == set(folds.part(0, "train")) and {p.group for p in val} == set(folds.part(0, "val"))
    assert len(train) == 5 * 12 and train[0].text == load_release(corpus).by_id()[str(train[0].group)].crowd_captions[0]
    examples = dataset.load(corpus, "fold3-test")
    assert [e.image.image_id for e in examples] == [e.id for e in examples] == [
        i.image_id for i in load_release(corpus).images if i.image_id in folds.part(3, "test")]
    # each example knows its fold, and with a fold split the fold's training images (the pool's source)
    assert {e.fold for e in examples} == {3}
    assert [i.image_id for i in examples[0].training] == list(folds.part(3, "train"))
    every = dataset.load(corpus, "all")
    assert all(e.id in folds.part(e.fold, "test") and e.training == () for e in every)


def test_a_deeply_nested_list_cell_is_one_line() -> None:
    from abduct_whoops.rows import parse_list

    with pytest.raises(DataError, match="nested too deeply") as caught:
        parse_list("[" * 100_000 + "]" * 100_000, file=Path("whoops.json"), record="row 1", column="crowd_captions")
    assert "\n" not in str(caught.value) and "crowd_captions" in str(caught.value)
