"""``samples.html``: every sample of a run in one offline page (no server, nothing fetched).

Each record of ``predictions.jsonl`` becomes a *view*: ``{"id", "correct", "score",
"score_name", "margin", "category", "flags": {name: bool}, "images": [{"path", "caption",
"boxes": [[left, top, width, height, label], ...]}], "texts": [{"label", "text"}], "fields":
{name: value}, "reasoning"}``: a record's ``reasoning`` (what the model's ``reasoning=`` split
off its answer) is shown folded, and a record with ``unparsed`` (its reason) has the flag
``unparsed``, a filter of the page. A task's ``view(record, examples)`` (read by the core from the task's
declarations) gives the rich view; without one, or where it returns None, the generic view
reads the record's own fields. The task's fields come first and win over the record's of the
same name; a field the task sets to None hides the record's (a per-sample metric the task shows
on the report's scale). Nested fields are flattened (``metrics.cider``). The views go into the
page as JSON; the script of ``samples_page.js`` filters, sorts and pages them in the browser,
its state in the URL hash. It offers only the filters the views support: right and wrong where
some view has a ``correct``, and each of the views' ``flags`` (sherlock-comparison's "disagrees
with humans"), so a task without right or wrong is never shown an empty "wrong" page.

Numbers are shown as the views give them: a task's view gives ``score``, ``margin`` and its
per-sample metrics on the report's scale (x100 where results.json reports percent) and names
what ``score`` is (``score_name``). No absolute path goes into the page: an image is named
and loaded by a path relative to the page (``thumbnails``).

Images go into ``samples/`` beside the page, one file per distinct source image (``thumbnails``:
small originals linked as they are, others as JPEG thumbnails), so the page loads them by
relative path from ``file://``; past a cap, from their originals. The time and disk of a large
run stay bounded (``benchmarks/samples_browser.py``).
"""

from __future__ import annotations

import html
import json
import math
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterable, Mapping
from importlib.resources import files
from pathlib import Path
from typing import Any

from abduct_report.thumbnails import THUMB_DIR, Thumbnails

SAMPLES_PAGE = "samples.html"
CORRECT_KEYS = ("correct", "consistent", "hit", "right")
GOLD_KEYS = ("gold", "label", "answer_index")
CHOICE_KEYS = ("choice", "prediction", "predicted", "pred")
SCORE_KEYS = ("score", "margin", "rank", "loss")
CATEGORY_KEYS = ("category", "reasoning_category", "change_type", "type", "domain")
TEXT_MIN = 20  # a string this long is shown as a text block, shorter ones as fields

SampleView = Callable[[Mapping[str, Any]], Mapping[str, Any] | None]
ABSOLUTE_PATH = re.compile(r"(?<![\w.])/[^,:=\s]+")


def readable(spec: str) -> str:
    """A spec for a page: an absolute path in it (a checkpoint in a temporary directory, a task's
    model folder) cut to its last two parts, ``clip:…/train/best.pt``."""
    return ABSOLUTE_PATH.sub(lambda m: "…/" + "/".join(Path(m.group(0)).parts[-2:]), spec)


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def generic_view(record: Mapping[str, Any]) -> dict[str, Any]:
    """What any task's record says about itself: its id, right or wrong, scores, texts."""
    view: dict[str, Any] = {"id": str(record.get("id", record.get("instance_id", ""))), "texts": [], "fields": {}}
    correct = next((record[k] for k in CORRECT_KEYS if isinstance(record.get(k), bool)), None)
    gold = next((record[k] for k in GOLD_KEYS if k in record), None)
    choice = next((record[k] for k in CHOICE_KEYS if k in record), None)
    if correct is None and gold is not None and choice is not None and not isinstance(choice, (list, dict)):
        correct = choice == gold
    view["correct"] = correct
    scored = next((k for k in SCORE_KEYS if _number(record.get(k)) is not None), None)
    view["score"] = None if scored is None else _number(record[scored])
    view["score_name"] = scored  # the record's own number: what the page calls it
    scores = record.get("scores")
    if isinstance(scores, list) and len(scores) >= 2 and all(_number(s) is not None for s in scores):
        top = sorted(scores, reverse=True)
        view["margin"] = float(top[0] - top[1])
    view["category"] = next((str(record[k]) for k in CATEGORY_KEYS if isinstance(record.get(k), str)), None)
    if isinstance(record.get("reasoning"), str):  # shown folded: a model's reasoning can be pages long
        view["reasoning"] = record["reasoning"]
    if record.get("unparsed"):  # a reason (or a count of unparsed answers): a filter of the page
        view["flags"] = {"unparsed": True}
    for key, value in record.items():
        if key in ("id", "reasoning"):
            continue
        if isinstance(value, str) and len(value) >= TEXT_MIN:
            view["texts"].append({"label": key, "text": value})
        elif isinstance(value, list) and value and all(isinstance(v, str) for v in value) \
                and max(len(v) for v in value) >= TEXT_MIN:
            view["texts"] += [{"label": f"{key}[{i}]", "text": v} for i, v in enumerate(value)]
        else:
            view["fields"][key] = value
    return view


def sample_views(predictions: Iterable[Mapping[str, Any]], hook: SampleView | None) -> tuple[list[dict[str, Any]], int]:
    """Each record's view (the task's over the generic one), and how many records the hook failed on."""
    views, failed = [], 0
    for record in predictions:
        view = generic_view(record)
        if hook is not None:
            try:
                rich = hook(record)
            except Exception:  # noqa: BLE001 - a view is presentation only: it must not cost the run its outputs
                rich, failed = None, failed + 1
            if rich:  # the task's fields first, then the record's; the task's texts replace the raw ones
                rich = dict(rich)
                shown = dict(rich.pop("fields", None) or {})  # None: the record's field of that name is hidden
                fields = {**{k: v for k, v in shown.items() if v is not None},
                          **{k: v for k, v in view["fields"].items() if k not in shown}}
                if rich.get("score") is not None and not rich.get("score_name"):
                    view["score_name"] = None  # the task's score, not the record's number of that name
                flags = {**view.get("flags", {}), **(rich.get("flags") or {})}
                view.update({k: v for k, v in rich.items() if v is not None}, fields=fields)
                if flags:
                    view["flags"] = flags
        view["fields"] = flat_fields(view["fields"])
        views.append(view)
    return views, failed


def flat_fields(fields: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested mappings as one row each (``metrics.cider``): a table cell never holds a JSON object."""
    out: dict[str, Any] = {}
    for key, value in fields.items():
        if isinstance(value, Mapping) and value:
            out.update(flat_fields(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out


def _image_entries(views: list[dict[str, Any]], thumbs: Thumbnails) -> None:
    """Give every image what the page loads for it, and the size its boxes are measured in."""
    for view in views:
        for image in view.get("images") or []:
            path = str(image.get("path", ""))
            image["thumb"] = thumbs.shown.get(path)
            if image.get("boxes") and "size" not in image:
                size = thumbs.size(path)
                if size is not None:
                    image["size"] = list(size)
            image["path"] = thumbs.shown_path(path)


def _script_json(value: Any) -> str:
    """JSON safe inside <script>: no '</' can close the element."""
    return json.dumps(value, allow_nan=False, separators=(",", ":")).replace("</", "<\\/")


def render_samples(title: str, predictions: list[dict[str, Any]], hook: SampleView | None,
                   out_dir: Path | None = None, workers: int | None = None,
                   cache: Path | None = None) -> tuple[str, Path | None]:
    """The page (to sit in ``out_dir``) and a staging folder of its images (None when it has no
    image; inside ``out_dir`` when that exists, so publishing it is a rename); the caller
    publishes both or removes the folder. ``cache``: where thumbnails are kept across runs."""
    views, failed = sample_views(predictions, hook)
    thumbs = None
    if any(view.get("images") for view in views):
        staging = out_dir if out_dir is not None and out_dir.is_dir() else None
        thumbs = Thumbnails(Path(tempfile.mkdtemp(prefix=f".{THUMB_DIR}-", dir=staging)), out_dir, cache)
        try:
            thumbs.plan(str(image.get("path", "")) for view in views for image in view.get("images") or [])
            thumbs.make_all(workers)
        except BaseException:
            shutil.rmtree(thumbs.folder, ignore_errors=True)
            raise
        _image_entries(views, thumbs)
    note = f"the task's sample view failed on {failed} record(s); they show the generic view" if failed else ""
    return samples_page(title, views, note), thumbs.folder if thumbs is not None else None


def samples_page(title: str, views: list[dict[str, Any]], note: str = "", back: str = "report.html") -> str:
    """The self-contained page showing ``views`` (its script and styles inlined); an absolute
    path in ``title`` (a spec's) is cut to its last two parts."""
    title = readable(title)
    script = (files("abduct_report") / "samples_page.js").read_text(encoding="utf-8")
    style = (files("abduct_report") / "samples_page.css").read_text(encoding="utf-8")
    return (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{html.escape(title)} — samples</title><style>{style}</style></head><body>\n"
            f"<h1>{html.escape(title)} — samples</h1><p><a href=\"{html.escape(back)}\">report</a> · "
            f"<span id=\"sample-count\">{len(views)}</span> of {len(views)} samples"
            f"<span class=\"note\"> {html.escape(note)}</span></p>\n"
            "<div id=\"controls\"></div><div id=\"pager\"></div><div id=\"samples\"></div>"
            "<div id=\"pager-bottom\"></div>\n"
            f"<script type=\"application/json\" id=\"samples-data\">{_script_json(views)}</script>\n"
            f"<script>{script}</script></body></html>\n")


def read_views(run_dir: Path) -> list[dict[str, Any]] | None:
    """The views a finished run's samples.html holds (None for a run written before it had one)."""
    path = Path(run_dir) / SAMPLES_PAGE
    if not path.is_file():
        return None
    found = re.search(r'<script type="application/json" id="samples-data">(.*?)</script>', path.read_text("utf-8"), re.S)
    return None if found is None else list(json.loads(found.group(1).replace("<\\/", "</")))


def disagreement(first: tuple[str, Path], second: tuple[str, Path], page_dir: Path) -> list[dict[str, Any]]:
    """The samples two runs of a task judge differently (one right, the other wrong), shown as
    the second run (B) saw them, with both verdicts and the first's (A) score; image paths made relative to ``page_dir``."""
    (name_a, dir_a), (name_b, dir_b) = first, second
    views_a, views_b = read_views(dir_a) or [], read_views(dir_b) or []
    by_id = {v["id"]: v for v in views_a}
    out = []
    for view in views_b:
        other = by_id.get(view["id"])
        if other is None or other.get("correct") is None or view.get("correct") is None \
                or other["correct"] == view["correct"]:
            continue
        for image in view.get("images") or []:
            for key in ("thumb", "path"):  # both relative to B's page: made relative to this one
                if image.get(key) and "://" not in image[key] and not Path(image[key]).is_absolute():
                    image[key] = Path(os.path.relpath((Path(dir_b) / image[key]).resolve(),
                                                      page_dir.resolve())).as_posix()
        verdict = {True: "right", False: "wrong"}
        view["fields"] = {f"A ({name_a})": verdict[other["correct"]], f"B ({name_b})": verdict[view["correct"]],
                          **({f"A ({name_a}) score": other["score"]} if other.get("score") is not None else {}),
                          **view.get("fields", {})}
        if view.get("score") is not None and other.get("score") is not None:
            view["margin"] = view["score"] - other["score"]  # sort by it: the largest score differences
        out.append(view)
    return out
