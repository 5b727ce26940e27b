"""The release's layout: the imagefolder as downloaded and the hub cache's snapshot; columns found
on the file, an unknown layout refused in one line naming the columns found; what one task cannot
read refuses that task only; the check command."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from abduct import AbductError, DataError
from abduct.host import main
from abduct_visualriddles import LayoutError, load_riddles
from abduct_visualriddles.judge import judgements
from abduct_visualriddles.mcq import options
from abduct_visualriddles.synth import synthesize
from conftest import evaluate, read_rows, write_rows


@pytest.fixture()
def release(tmp_path: Path) -> Path:
    return synthesize(tmp_path / "data", riddles=6, seed=3)


def test_the_downloaded_folder_is_read(release: Path) -> None:
    riddles = load_riddles(release)
    assert len(riddles) == 6
    for riddle in riddles:
        assert len(riddle.id) == 64 and Path(riddle.image).name == f"{riddle.id}.jpg"  # test/<sha256>.jpg
    assert riddles[0].layout.found["image"] == "file_name" and riddles[0].layout.found["caption"] == "human-caption"
    opts = options(riddles[0])
    assert opts.cd == 4 and opts.texts[opts.gold] == riddles[0].answer
    found, without = judgements(riddles, "based")
    assert len(found) == 18 and not without and [j.human for j in found[:3]] == [True, False, False]


def test_the_hub_cache_snapshot_is_read(release: Path, tmp_path: Path) -> None:
    cache = tmp_path / "hub" / "datasets--visual-riddles--visual_riddles"
    shutil.copytree(release, cache / "snapshots" / "f944390")
    (cache / "refs").mkdir()
    (cache / "refs" / "main").write_text("f944390")
    assert len(load_riddles(tmp_path / "hub")) == 6 == len(load_riddles(tmp_path))  # the cache, or above it
    shutil.copytree(release, cache / "snapshots" / "0000000")
    (cache / "refs" / "main").unlink()
    with pytest.raises(AbductError, match="several snapshots"):
        load_riddles(tmp_path / "hub")


def test_a_folder_without_the_release_names_the_download(tmp_path: Path) -> None:
    with pytest.raises(AbductError, match="huggingface-cli download visual-riddles/visual_riddles --repo-type dataset"):
        load_riddles(tmp_path)


def test_an_unknown_layout_is_refused_naming_the_columns_found(release: Path, capsys: pytest.CaptureFixture[str],
                                                               tmp_path: Path) -> None:
    header, rows = read_rows(release)
    renamed = ["riddle" if h == "question" else h for h in header]
    write_rows(release, renamed, [{("riddle" if k == "question" else k): v for k, v in r.items()} for r in rows])
    with pytest.raises(LayoutError) as caught:
        load_riddles(release)
    message = str(caught.value)
    assert "no question column (question)" in message and "columns found: file_name, image, riddle," in message
    code = main(["eval", "visualriddles-mcq", "--model", "random", "--data", str(release), "--out",
                 str(tmp_path / "out"), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "columns found:" in err, err


def test_a_missing_task_column_refuses_that_task_only(release: Path, tmp_path: Path) -> None:
    header, rows = read_rows(release)
    kept = [h for h in header if "auto_eval" not in h]
    write_rows(release, kept, rows)
    with pytest.raises(LayoutError, match=r"no judge_based column \(prompts_ref_based-auto_eval\), needed by "
                                          r"visualriddles-judge; columns found: .*prompt_clean-multiple_choice$"):
        evaluate(release, tmp_path / "judge", "visualriddles-judge", "random")
    assert evaluate(release, tmp_path / "mcq", "visualriddles-mcq", "random")["metrics"]["n"] == 6


def test_image_links_and_bad_rows_are_named(release: Path) -> None:
    header, rows = read_rows(release)
    # no file_name column: the image_url's last part links the row (then its image_id is the id)
    write_rows(release, [h for h in header if h != "file_name"], rows)
    riddles = load_riddles(release)
    assert riddles[0].layout.found["image"] == "image" and riddles[0].id == rows[0]["image_id"]
    rows[1].update({"file_name": "missing.jpg", "image_id": "gone", "image_url": "https://x/gone.jpg"})
    write_rows(release, header, rows)
    with pytest.raises(DataError, match=r"record row 2: no image in .* for file_name='missing.jpg'; image=''"):
        load_riddles(release)


def test_unreadable_options_and_labels_are_named(release: Path) -> None:
    header, rows = read_rows(release)
    rows[0]["prompt_clean-multiple_choice"] = rows[0]["prompt_clean-multiple_choice"].replace("(D)", "D.")
    rows[1]["labels-auto_eval"] = "['Yes', 'maybe', 'No']"
    rows[2]["labels-auto_eval"] = "[1, 0]"
    write_rows(release, header, rows)
    riddles = load_riddles(release)
    with pytest.raises(DataError, match=r"record row 1 .*found \['A', 'B', 'C', 'E'\]"):
        options(riddles[0])
    with pytest.raises(DataError, match=r"record row 2 .*label 2 is 'maybe'"):
        judgements(riddles[1:2], "based")
    with pytest.raises(DataError, match="3 prompts and 2 labels"):
        judgements(riddles[2:3], "free")
    rows[1]["labels-auto_eval"] = '["yes", "no", "no"]'  # JSON is read too
    rows[2]["labels-auto_eval"] = ""  # an empty cell: the riddle is left out and counted
    write_rows(release, header, rows)
    found, without = judgements(load_riddles(release)[1:3], "based")
    assert [j.human for j in found] == [True, False, False] and without == [rows[2]["image_id"]]


def test_check(release: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["visualriddles", "check", "--data", str(release)]) == 0
    assert "no problems found" in capsys.readouterr().out
    header, rows = read_rows(release)
    write_rows(release, [h for h in header if h != "labels-auto_eval"], rows)
    (release / "test" / f"{rows[0]['image_id']}.jpg").write_bytes(b"not a jpeg")
    assert main(["visualriddles", "check", "--data", str(release)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("visualriddles-judge: ") and "no judge_labels column" in out[0]
    assert out[1].startswith(f"riddle {rows[0]['image_id']}: ") and len(out) == 2
