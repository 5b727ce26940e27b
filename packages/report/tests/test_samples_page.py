"""samples.html: the generic view of any record, a task's sample_view over it, thumbnails
capped and published beside the page, a malformed declaration refused by name."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from abduct_report import thumbnails
from abduct_report.samples import generic_view, render_samples, sample_views
from abduct_testing import make_images


def _views(page: str) -> list[dict[str, Any]]:
    found = re.search(r'id="samples-data">(.*?)</script>', page, re.S)
    assert found is not None
    return list(json.loads(found.group(1)))


def test_generic_view_reads_right_or_wrong_scores_and_texts() -> None:
    record = {"id": "a", "choice": 2, "label": 1, "scores": [0.1, 0.7, 0.4], "category": "x",
              "prediction_text": "a long generated sentence about the scene"}
    view = generic_view(record)
    assert view["correct"] is False and view["category"] == "x"
    assert view["margin"] == pytest.approx(0.3)
    assert view["texts"] == [{"label": "prediction_text", "text": record["prediction_text"]}]
    assert generic_view({"id": "b", "correct": True})["correct"] is True
    assert generic_view({"id": "c"})["correct"] is None


def test_task_view_wins_and_a_failing_view_falls_back() -> None:
    def hook(record: dict[str, Any]) -> dict[str, Any] | None:
        if record["id"] == "bad":
            raise KeyError("boom")
        return {"category": "rich", "fields": {"extra": 1}}

    views, failed = sample_views([{"id": "ok", "correct": True}, {"id": "bad"}], hook)
    assert failed == 1
    assert views[0]["category"] == "rich" and views[0]["fields"] == {"extra": 1, "correct": True}
    assert views[1]["category"] is None


def test_thumbnails_are_capped_and_the_rest_shown_from_originals(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    images = make_images(tmp_path / "img", count=3, size=(900, 600))
    monkeypatch.setattr(thumbnails, "MAX_FILES", 2)
    records = [{"id": str(i)} for i in range(3)]
    out = tmp_path / "run"
    out.mkdir()
    page, folder = render_samples("t", records, lambda r: {"images": [{"path": str(images[int(r["id"])]),
                                                                       "boxes": [[0, 0, 10, 10, "r"]]}]}, out)
    assert folder is not None and not (out / "samples").exists()  # nothing published before the core publishes it
    folder.rename(out / "samples")  # what the core's publishing amounts to in a fresh folder
    thumbs = sorted((out / "samples").glob("*.jpg"))
    assert len(thumbs) == 2 and all(max(_image_size(t)) <= thumbnails.THUMB_SIDE for t in thumbs)
    shown = [v["images"][0] for v in _views(page)]
    assert [im["thumb"].startswith("samples/") for im in shown] == [True, True, False]
    assert (out / shown[2]["thumb"]).resolve() == images[2].resolve()
    assert shown[0]["size"] == [900, 600]


def test_one_file_per_distinct_image_small_ones_linked_large_ones_cached(tmp_path: Path) -> None:
    large = make_images(tmp_path / "large", count=1, size=(900, 600))[0]
    small = make_images(tmp_path / "small", count=1, size=(40, 30))[0]
    assert large.stat().st_size > thumbnails.SMALL_BYTES >= small.stat().st_size
    records = [{"id": str(i)} for i in range(4)]  # every sample shows both images

    def hook(record: dict[str, Any]) -> dict[str, Any]:
        return {"images": [{"path": str(large)}, {"path": str(small), "boxes": [[1, 1, 5, 5, "b"]]}]}

    def render(out: Path) -> list[dict[str, Any]]:
        out.mkdir()
        page, folder = render_samples("t", records, hook, out, cache=tmp_path / "cache")
        assert folder is not None and folder.parent == out  # staged beside the page: publishing is a rename
        folder.rename(out / "samples")
        return [im for v in _views(page) for im in v["images"]]

    shown = render(tmp_path / "a")
    assert len({im["thumb"] for im in shown}) == 2 and len(list((tmp_path / "a" / "samples").iterdir())) == 2
    big, little = shown[0], shown[1]
    assert _image_size(tmp_path / "a" / big["thumb"]) == (240, 160)
    assert (tmp_path / "a" / little["thumb"]).read_bytes() == small.read_bytes()  # as it is, not re-encoded
    assert little["size"] == [40, 30]  # read from its header: its boxes are measured in it
    cached = list((tmp_path / "cache").iterdir())
    assert [p.name for p in cached] == [Path(big["thumb"]).name]  # only what had to be decoded
    again = render(tmp_path / "b")
    assert again[0]["thumb"] == big["thumb"]  # the same file, its thumbnail from the cache
    assert (tmp_path / "b" / big["thumb"]).stat().st_ino == cached[0].stat().st_ino
    os.utime(large, ns=(0, 0))  # a changed source is another key
    assert render(tmp_path / "c")[0]["thumb"] != big["thumb"]


def _image_size(path: Path) -> tuple[int, int]:
    from PIL import Image

    with Image.open(path) as img:
        return img.size


def test_page_cannot_be_closed_by_a_record() -> None:
    page, folder = render_samples("t", [{"id": "x", "note": "</script><script>alert(1)</script>"}], None)
    assert folder is None and page.count("</script>") == 2  # the data element's and the code's


def test_unreadable_and_missing_images_show_their_path_without_a_file(tmp_path: Path) -> None:
    broken = tmp_path / "broken.jpg"
    broken.write_bytes(b"not a jpeg" * 10_000)  # too large to be linked as it is: it must be decoded
    out = tmp_path / "run"
    out.mkdir()
    fifo = tmp_path / "fifo.tif"  # not shown by browsers as it is, so it would be decoded
    os.mkfifo(fifo)  # opening it would block the page's writer for ever
    paths = [str(broken), str(tmp_path / "missing.png"), str(fifo), str(tmp_path)]
    page, folder = render_samples("t", [{"id": "x"}], lambda r: {"images": [{"path": p} for p in paths]}, out)
    assert folder is not None and list(folder.iterdir()) == []  # no half-made thumbnail left behind
    shown = _views(page)[0]["images"]
    assert [im["thumb"] for im in shown] == [None] * len(paths)
    # named by a path relative to the page, never an absolute one
    assert [(out / im["path"]).resolve() for im in shown] == [Path(p).resolve() for p in paths]
    assert str(tmp_path) not in page


def test_task_fields_win_hide_the_records_and_nest_into_rows() -> None:
    """A view shows a per-sample metric on the report's scale under its name and hides the
    record's raw one (None); nested fields become one row each, never an object's JSON."""
    record = {"id": "e1", "metrics": {"cider": 0.3316, "bleu_4": 0.1}, "accuracy": 0.25, "extra": {"a": {"b": 1}}}

    def hook(record: dict[str, Any]) -> dict[str, Any]:
        return {"score": 33.16, "score_name": "cider", "fields": {"cider": 33.16, "accuracy": 25.0, "metrics": None},
                "flags": {"disagrees with humans": False}}

    (view,), failed = sample_views([record], hook)
    assert failed == 0 and view["score_name"] == "cider" and view["flags"] == {"disagrees with humans": False}
    assert view["fields"] == {"cider": 33.16, "accuracy": 25.0, "extra.a.b": 1}
    assert generic_view({"id": "r", "rank": 3})["score_name"] == "rank"  # the record's own number, by its name


def test_spec_paths_are_cut_in_the_title() -> None:
    page, _ = render_samples("task,model_dir=/home/someone/models/bert — clip:/tmp/run/train/best.pt", [{"id": "x"}], None)
    assert "/home/someone" not in page and "/tmp/run" not in page and "…/train/best.pt" in page


PAGE_STATE = """() => ({
  shows: Array.from(document.querySelectorAll('#f-only option')).map(o => o.textContent),
  sorts: Array.from(document.querySelectorAll('#f-sort option')).map(o => o.textContent),
  refused: document.getElementById('refused') ? document.getElementById('refused').textContent : null,
  wide: Array.from(document.querySelectorAll('.sample *')).filter(e => {
    const card = e.closest('.sample').getBoundingClientRect(), r = e.getBoundingClientRect();
    return r.width > 0 && r.right > card.right + 1; }).length,
  cells: Array.from(document.querySelectorAll('table.fields td')).map(td => td.textContent)})"""


def test_filters_follow_what_the_samples_support(tmp_path: Path) -> None:
    """Right and wrong only where some sample has a verdict; a flag's filter where the views set
    one; a link asking for a filter the page has not shows every sample and says so."""
    from abduct_report.samples import samples_page
    from abduct_testing.browser import browser_or_skip, samples_browser, view

    chromium = browser_or_skip()
    numbers = [0.123456789 * k for k in range(40)]  # one long unbreakable list, once as JSON
    compared = [{"id": f"s{i}", "score": 10.0 * (i - 2), "score_name": "accuracy", "correct": None,
                 "flags": {"disagrees with humans": i < 2, "agrees with humans": i > 2},
                 "fields": {"scores": numbers, "pairs": [{"a": 1}, {"b": 2}], "note": "x" * 300}} for i in range(5)]
    judged = [{"id": f"j{i}", "correct": i % 2 == 0, "fields": {}} for i in range(4)]
    (tmp_path / "compared.html").write_text(samples_page("comparison", compared))
    (tmp_path / "judged.html").write_text(samples_page("choice", judged))
    with samples_browser(chromium) as tab:
        tab.page.set_viewport_size({"width": 1000, "height": 800})
        shown = view(tab, tmp_path / "compared.html")
        state = tab.page.evaluate(PAGE_STATE)
        assert state["shows"] == ["all", "disagrees with humans", "agrees with humans"]
        assert state["sorts"] == ["file order", "accuracy ↓", "accuracy ↑"] and state["refused"] is None
        assert shown.count == 5 and state["wide"] == 0
        assert not any(cell.startswith(("[", "{")) for cell in state["cells"])
        assert "0, 0.1235, 0.2469" in " ".join(state["cells"])  # numbers rounded, the list comma-separated
        assert "a: 1; b: 2" in state["cells"]  # a list of records, each as its keys and values
        assert view(tab, tmp_path / "compared.html", "only=is:disagrees with humans").ids == ["s0", "s1"]
        wrong = view(tab, tmp_path / "compared.html", "only=wrong")
        refused = tab.page.evaluate(PAGE_STATE)["refused"]
        assert wrong.count == 5 and refused is not None and "not right or wrong" in refused
        view(tab, tmp_path / "judged.html")
        state = tab.page.evaluate(PAGE_STATE)
        assert state["shows"] == ["all", "wrong", "right"] and state["sorts"] == []  # nothing to sort by
        assert view(tab, tmp_path / "judged.html", "only=wrong").ids == ["j1", "j3"]
        assert shown.console_errors == [] and tab.errors == []
