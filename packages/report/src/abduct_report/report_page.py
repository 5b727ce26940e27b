"""``report.html``: one self-contained page per run (every image inlined as base64), with plots
drawn from the shapes tasks already return, so a new task gets pictures without report code:

- ``by_<field>`` (in metrics or details): ``{group: {metric: value, ...}}`` -> bars per group;
- ``per_<name>`` (in metrics or details): ``[values]``, ``{key: value}`` or ``{key: {metric: value}}``
  -> bars per position (per chunk, per fold, per event position: categories, never a line);
- ``details["histograms"]``: names of numeric fields of the per-sample records -> a histogram each
  (e.g. Sherlock's ranks);
- ``details["examples"]``: ``[{"image" (optional), "boxes": [[left, top, width, height(, name)], ...], "title",
  "lines", "correct"}]`` -> the image with its region drawn (the paper's overlay; a box's optional
  ``name`` written at its corner) and the lines under it (e.g. the top-ranked texts), marked
  right or wrong when ``correct`` is given.

How the bars are laid out so that they cannot mislead (a panel per scale and direction, a stated
baseline, chance marks, n, whiskers, no panel for a constant metric) is ``abduct_report.panels``;
each breakdown's numbers are also a table of their own, folded under the headline metrics.

Plots need matplotlib (``pip install matplotlib``): without it the page is written with
its tables and examples and says how to get the plots.

Drawing is most of what a small run costs (about 0.3 s a plot), and runs in one process often
draw the same figures again (a resumed run, a repeated one): each process keeps its last few PNGs,
keyed by exactly what is drawn (kind, title, values in their order, sizes) and matplotlib's
settings, and returns the same bytes without drawing again.
"""

from __future__ import annotations

import base64
import html
import io
import json
import numbers
import threading
import warnings
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from abduct_report.conditions import run_label
from abduct_report.judge_agreement import agreement_html
from abduct_report.markdown import (
    _fmt,
    _limit,
    flatten_metrics,
    interval_note,
    shaped_inputs,
    split_breakdowns,
    with_interval,
)
from abduct_report.panels import MAX_BARS, NARROW, WIDE, draw_panel, finish, label, plan_bars

EXAMPLE_SIDE = 360

STYLE = """
body{font-family:system-ui,sans-serif;margin:2em auto;max-width:980px;color:#222}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:.25em .6em;text-align:right}
th{background:#f3f3f3}td:first-child,th:first-child{text-align:left}
figure{display:inline-block;margin:.5em;vertical-align:top;max-width:460px}
figure.wide{display:block;max-width:100%}pre{white-space:pre-wrap}figure img{max-width:100%;height:auto}
tr.paper td{background:#f4f4f4;color:#555;font-style:italic}figcaption{font-size:.9em}.better{color:#080}.worse{color:#b00}.note{color:#666;font-size:.9em}
.scroll{overflow-x:auto;max-width:100%}td.name{overflow-wrap:anywhere;min-width:6em;text-align:left}td span{white-space:nowrap}tr.seeds td{background:#f7f9fc}
h1,h2,h3,p,summary,figcaption{overflow-wrap:anywhere}details{margin:.3em 0}summary{cursor:pointer}
"""


def page(title: str, body: Sequence[str]) -> str:
    """A complete HTML document (no external resources)."""
    return (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{html.escape(title)}</title>"
            f"<style>{STYLE}</style></head><body>\n" + "\n".join(body) + "\n</body></html>\n")


def data_uri(data: bytes, mime: str) -> str:
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


def have_matplotlib() -> bool:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def direction_arrow(results: dict[str, Any], metric: str) -> str:
    """↑ or ↓ from results.json's ``metric_info`` (when the task declares it), else nothing."""
    info = results.get("metric_info")
    entry = info.get(metric) if isinstance(info, dict) else None
    better = entry.get("better") if isinstance(entry, dict) else None
    return {"higher": " ↑", "lower": " ↓"}.get(str(better), "")


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


# -- plots ----------------------------------------------------------------------------------
DPI = 100


def figure_html(caption: str, png: bytes, alt: str | None = None) -> str:
    """A plot as a ``<figure>``: one wider than the two-column box gets the whole row (it
    would otherwise spill over its neighbour); its ``width`` is its pixel width, scaled down
    by the browser when the page is narrower."""
    from PIL import Image

    width = Image.open(io.BytesIO(png)).width
    wide = " class=\"wide\"" if width > round(NARROW * DPI) else ""
    text = f"<figcaption>{html.escape(caption)}</figcaption>" if caption else ""
    return (f"<figure{wide}><img alt=\"{html.escape(alt or caption)}\" src=\"{data_uri(png, 'image/png')}\" "
            f"width=\"{width}\">{text}</figure>")


LABEL_GAP = 4.0  # pixels between neighbouring labels: touching ones read as one word


def _overlapping(labels: Sequence[Any], renderer: Any) -> bool:
    boxes = [t.get_window_extent(renderer) for t in labels if t.get_visible() and t.get_text()]
    boxes.sort(key=lambda b: b.x0)
    return any(a.x1 + LABEL_GAP > b.x0 for a, b in zip(boxes, boxes[1:]))


def untangle_ticks(figure: Any) -> float:
    """x tick labels that overlap are turned 45°, then 90°, then thinned (every second, every
    third, ...) until none overlaps: measured on the drawn figure, not guessed from lengths.
    Returns the tallest turned label's height in inches (0 when none turned)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas: Any = FigureCanvasAgg(figure)  # untyped methods (get_renderer)
    # laid out and measured without rasterising (the text extents are the same renderer's):
    # savefig draws the pixels once, at the end, and the PNG is byte for byte the same
    figure.draw_without_rendering()
    for ax in figure.axes:
        for rotation, align in ((45, "right"), (90, "center")):
            if not _overlapping(ax.get_xticklabels(), canvas.get_renderer()):
                break
            ax.tick_params(axis="x", labelrotation=rotation)
            for text in ax.get_xticklabels():
                text.set_horizontalalignment(align)
                text.set_rotation_mode("anchor" if rotation == 45 else "default")
            figure.draw_without_rendering()
        labels = ax.get_xticklabels()
        step = 1
        while _overlapping(labels, canvas.get_renderer()) and step < len(labels):
            step += 1
            for i, text in enumerate(labels):
                text.set_visible(i % step == 0)
            figure.draw_without_rendering()
    turned = [t.get_window_extent(canvas.get_renderer()).height for ax in figure.axes
              for t in ax.get_xticklabels() if t.get_visible() and t.get_rotation()]
    return max(turned, default=0.0) / DPI


def plot_figure(draw: Any, width: float = NARROW, height: float = 3.2) -> Any:
    """A matplotlib Figure drawn by ``draw(axes)``, with its x labels untangled."""
    from matplotlib.figure import Figure  # no pyplot: no global state, no display needed

    figure = Figure(figsize=(min(width, WIDE), height), dpi=DPI, layout="constrained")
    draw(figure.add_subplot())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        if (tall := untangle_ticks(figure)) > 0:  # turned labels get room of their own, not the plot's
            figure.set_size_inches(figure.get_figwidth(), height + tall)
            figure.draw_without_rendering()
    return figure


def _png(figure: Any) -> bytes | None:
    if figure is None:
        return None
    buffer = io.BytesIO()
    with warnings.catch_warnings():  # a group name in a script the font lacks: drawn as boxes
        warnings.simplefilter("ignore", UserWarning)
        figure.savefig(buffer, format="png")
    return buffer.getvalue()


def _figure_png(draw: Any, width: float = NARROW, height: float = 3.2) -> bytes:
    png = _png(plot_figure(draw, width, height))
    assert png is not None
    return png


PLOTS_KEPT = 64  # PNGs of a few tens of kB each
_drawn: OrderedDict[str, bytes | None] = OrderedDict()
_drawn_lock = threading.Lock()


def _json_number(value: Any) -> Any:
    """json's fallback: numpy's scalars as the Python numbers they hold; anything else is not
    keyed (its text might not tell two values apart), so the plot is drawn afresh."""
    if isinstance(value, numbers.Number) and callable(getattr(value, "item", None)):
        return value.item()  # type: ignore[attr-defined]
    raise TypeError(f"not keyed: {type(value).__name__}")


def _style() -> str:
    """The sizes this module draws at and matplotlib's settings, as they are now (a changed
    rcParam draws another picture)."""
    import matplotlib

    sizes = (DPI, NARROW, WIDE, MAX_BARS, LABEL_GAP)
    return f"{sizes} {matplotlib.__version__} {dict.items(matplotlib.rcParams)!r}"  # dict's view: fast, unvalidated


def _text_keys(value: Any) -> bool:
    """Whether every dict in ``value`` has str keys: json writes 1, True and None as the keys
    "1", "true" and "null", which would stand for other labels."""
    if isinstance(value, dict):
        return all(type(k) is str and _text_keys(v) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return all(_text_keys(v) for v in value)
    return True


def _memoised(what: Sequence[Any], draw: Callable[[], bytes | None]) -> bytes | None:
    """``draw()``, or the PNG it gave before for the same ``what`` in this process. Keys keep
    the order of dicts (bars are drawn in that order) and the type of numbers (1 and 1.0 differ);
    what cannot be keyed exactly is drawn afresh."""
    try:
        if not _text_keys(what):
            raise TypeError("a key that is not text")
        key = json.dumps([*what, _style()], default=_json_number)
    except (TypeError, ValueError):
        return draw()
    with _drawn_lock:
        if key in _drawn:
            _drawn.move_to_end(key)
            return _drawn[key]
    png = draw()
    with _drawn_lock:
        _drawn[key] = png
        while len(_drawn) > PLOTS_KEPT:
            _drawn.popitem(last=False)
    return png


def draw_bars(title: str, groups: dict[str, Any], errors: dict[str, Any] | None = None,
              colours: dict[str, str] | None = None, info: dict[str, Any] | None = None) -> Any:
    """The Figure of :func:`bars` (None when nothing in it rates a model)."""
    planned = plan_bars(title, groups, errors, colours, info)
    if planned is None or not planned.panels:
        return None

    def draw(ax: Any) -> None:
        figure = ax.figure
        figure.delaxes(ax)
        rows = -(-len(planned.panels) // 3)
        grid = figure.subplots(rows, min(3, len(planned.panels)), squeeze=False).flat
        for panel, shown in zip(grid, [*planned.panels, *[None] * 3]):
            if shown is None:
                figure.delaxes(panel)
            else:
                draw_panel(panel, planned, shown)
        figure.suptitle(label(title, 80))

    figure = plot_figure(draw, width=planned.width(), height=planned.height())
    finish(figure, planned)
    return figure


def bars(title: str, groups: dict[str, Any], errors: dict[str, Any] | None = None,
         colours: dict[str, str] | None = None, info: dict[str, Any] | None = None) -> bytes | None:
    """Bars per group (``{group: {metric: value}}`` or ``{group: value}``), in panels by scale
    and direction (see ``abduct_report.panels``): ``errors`` gives each group's interval,
    ``(low, high)`` for a group of one metric or ``{metric: (low, high)}``; ``colours`` colours
    each group's bars; ``info`` declares the metrics (results.json's ``metric_info`` entries by
    the metric's name in the rows: direction, range, chance)."""
    return _memoised(("bars", title, groups, errors, colours, info),
                     lambda: _png(draw_bars(title, groups, errors, colours, info)))


def series(title: str, values: Any, info: dict[str, Any] | None = None) -> bytes | None:
    """A per-position breakdown (a list of numbers, keyed numbers or keyed metric rows): its
    positions are categories, so bars as :func:`bars` draws them, never a line."""
    if isinstance(values, list):
        values = {str(i): v for i, v in enumerate(values)}
    if not isinstance(values, dict) or not values:
        return None
    return bars(title, values, info=info)


def draw_histogram(field: str, predictions: Sequence[dict[str, Any]]) -> Any:
    """The Figure of :func:`histogram` (None when no record has the field as a number)."""
    values = _field_values(field, predictions)
    if not values:
        return None

    def draw(ax: Any) -> None:
        ax.hist(values, bins=min(50, max(5, len(set(values)))))
        ax.set_title(label(f"{field} over {len(values)} samples", 80))
        ax.set_xlabel(label(field))
        ax.set_ylabel("samples")

    return plot_figure(draw)


def _field_values(field: str, predictions: Sequence[dict[str, Any]]) -> list[float]:
    return [float(r[field]) for r in predictions
            if isinstance(r.get(field), (int, float)) and not isinstance(r.get(field), bool)]


def histogram(field: str, predictions: Sequence[dict[str, Any]]) -> bytes | None:
    values = _field_values(field, predictions)
    return _memoised(("histogram", field, values), lambda: _png(draw_histogram(field, predictions))) if values else None


@dataclass(frozen=True)
class Plot:
    """One plot of report.html: ``name`` (its alt text: the shape it comes from), ``caption``
    (what its marks mean, what it leaves out) and what it draws (``kind``, ``args``)."""

    name: str
    caption: str
    kind: str  # "bars" or "histogram"
    args: tuple[Any, ...]

    def png(self) -> bytes | None:
        return bars(*self.args) if self.kind == "bars" else histogram(*self.args)

    def figure(self) -> Any:
        return draw_bars(*self.args) if self.kind == "bars" else draw_histogram(*self.args)


def _breakdown_plot(results: dict[str, Any], key: str, value: Any, in_metrics: bool) -> Plot | None:
    """The bars of a ``by_<field>`` / ``per_<name>`` breakdown, its cells declared as results.json
    declares them (a cell's own entry, else the overall metric of its name) with their intervals."""
    groups = {str(i): v for i, v in enumerate(value)} if isinstance(value, list) else value
    if not isinstance(groups, dict) or not groups:
        return None
    metric_info, intervals = results.get("metric_info") or {}, results.get("intervals") or {}
    prefix = f"{key}." if in_metrics else ""
    metrics = dict.fromkeys(m for row in groups.values() if isinstance(row, dict) for m in row)
    info: dict[str, Any] = {}
    overall: list[str] = []  # metrics whose chance comes from the overall figure, not the group's own
    for metric in metrics:
        own = next((metric_info[n] for g in groups if (n := f"{prefix}{g}.{metric}") in metric_info), None)
        info[metric] = own if own is not None else metric_info.get(metric)
        if own is None and (metric_info.get(metric) or {}).get("chance") is not None:
            overall.append(metric)
    errors = {g: {m: (float(ci["low"]), float(ci["high"])) for m in metrics
                  if isinstance(ci := intervals.get(f"{prefix}{g}.{m}"), dict)}
              for g in groups if in_metrics}
    errors = {g: spans for g, spans in errors.items() if spans}
    title = f"{results['task']}: {key.replace('_', ' ')}"
    planned = plan_bars(title, groups, errors, None, info)
    if planned is None:
        return None
    notes = planned.notes()
    if planned.panels and not errors:
        notes.append("no intervals recorded for these groups")
    if overall and planned.chance:
        notes.append("chance: the overall level")
    return Plot(key, f"{key}: " + "; ".join(notes) if notes else key, "bars", (title, groups, errors or None, None, info))


def planned_plots(results: dict[str, Any], predictions: Sequence[dict[str, Any]]) -> list[Plot]:
    """Every plot the report knows, in a stable order: the breakdowns (metrics, then details),
    the headline metrics with their intervals, the histograms."""
    details = results.get("details") or {}
    found: list[Plot] = []
    for source, in_metrics in ((results.get("metrics") or {}, True), (details, False)):
        for key, value in source.items():
            if key.startswith(("by_", "per_")) and (plot := _breakdown_plot(results, key, value, in_metrics)):
                found.append(plot)
    intervals, metric_info = results.get("intervals") or {}, results.get("metric_info") or {}
    # the headline metrics with their intervals as whiskers, a panel per scale and direction
    shown = {m: {m: float(v)} for m, v in flatten_metrics(results.get("metrics") or {})
             if m in intervals and "." not in m and isinstance(v, (int, float))}
    if shown:
        title = f"{results['task']}: metrics with {100 * next(iter(intervals.values()))['level']:.0f}% intervals"
        errors = {m: (float(intervals[m]["low"]), float(intervals[m]["high"])) for m in shown}
        found.append(Plot("intervals", "intervals: the headline metrics, a panel per scale and direction", "bars",
                          (title, shown, errors, None, {m: metric_info.get(m) for m in shown})))
    for field in details.get("histograms") or []:
        if _field_values(str(field), predictions):
            found.append(Plot(f"histogram of {field}", f"histogram of {field}", "histogram", (str(field), predictions)))
    return found


def plots(results: dict[str, Any], predictions: Sequence[dict[str, Any]]) -> Iterator[tuple[str, str, bytes | None]]:
    """(name, caption, PNG) for every plot the report knows (PNG None: nothing to draw, the
    caption says why)."""
    for plot in planned_plots(results, predictions):
        yield plot.name, plot.caption, plot.png()


def plot_figures(results: dict[str, Any], predictions: Sequence[dict[str, Any]]) -> Iterator[tuple[str, Any]]:
    """(name, matplotlib Figure or None) of every plot of ``plots``: the figures themselves, to
    measure (``abduct_report.panels.figure_problems``)."""
    for plot in planned_plots(results, predictions):
        yield plot.name, plot.figure()


# -- qualitative examples -------------------------------------------------------------------
def example_jpeg(image: str, boxes: Sequence[Sequence[float]]) -> bytes | None:
    """The image with its region drawn as the models see it, shrunk to a thumbnail."""
    from abduct import AbductError, Box, Region
    from abduct.kit import load_rgb
    from abduct_modelkit import render

    try:
        picture = load_rgb(image)
        if boxes:
            picture = render(picture, Region(tuple(Box(*map(float, b[:4])) for b in boxes)), "highlight")
            _name_boxes(picture, boxes)
    except (AbductError, TypeError, ValueError):
        return None  # an example is an illustration: a missing image only drops it
    picture.thumbnail((EXAMPLE_SIDE, EXAMPLE_SIDE))
    buffer = io.BytesIO()
    picture.convert("RGB").save(buffer, format="JPEG", quality=85)
    return buffer.getvalue()


def _name_boxes(picture: Any, boxes: Sequence[Sequence[Any]]) -> None:
    """Each named box's name at its top-left corner, large enough to survive the thumbnail."""
    from PIL import ImageDraw, ImageFont

    size = max(10, max(picture.size) // 18)
    try:
        font: Any = ImageFont.load_default(size)
    except TypeError:  # Pillow < 10.1: one small bitmap font
        font = ImageFont.load_default()
    draw = ImageDraw.Draw(picture)
    for box in boxes:
        if len(box) > 4:
            draw.text((float(box[0]) + 2, float(box[1]) + 1), str(box[4]), fill="yellow", font=font,
                      stroke_width=max(1, size // 8), stroke_fill="black")


def examples(details: dict[str, Any]) -> Iterator[str]:
    for example in details.get("examples") or []:
        if not isinstance(example, dict):
            continue
        picture = ""  # a text-only example (a video's generated sentence) has no image
        if example.get("image"):
            jpeg = example_jpeg(str(example["image"]), example.get("boxes") or [])
            if jpeg is None:
                continue
            picture = f"<img alt=\"example\" src=\"{data_uri(jpeg, 'image/jpeg')}\">"
        lines = "".join(f"<li>{html.escape(str(line))}</li>" for line in example.get("lines") or [])
        mark = {True: "<span class=\"better\">✓ right</span> ", False: "<span class=\"worse\">✗ wrong</span> "}
        verdict = mark.get(example["correct"], "") if isinstance(example.get("correct"), bool) else ""
        yield (f"<figure>{picture}"
               f"<figcaption>{verdict}<b>{html.escape(str(example.get('title', '')))}</b><ul>{lines}</ul></figcaption></figure>")


# -- the page -------------------------------------------------------------------------------
def _chance(results: dict[str, Any], metric: str) -> str:
    """The metric's chance level, as report.md shows it (blank when none is declared)."""
    chance = ((results.get("metric_info") or {}).get(metric) or {}).get("chance")
    return _fmt(chance) if chance is not None else ""


def metric_tables(results: dict[str, Any]) -> list[str]:
    """The headline metrics (and counts) in one table, each breakdown in a table of its own,
    groups x metrics with n and intervals, folded away (NL-EYE's 60 cells in one table would
    push the plots 2,000 px down the page)."""
    intervals = results.get("intervals") or {}
    headline, breakdowns = split_breakdowns(results["metrics"])
    out = [table(["metric", "value", "chance"], [(html.escape(name + direction_arrow(results, name)),
                                                  with_interval(value, intervals.get(name)), _chance(results, name))
                                                 for name, value in headline])]
    for part in breakdowns:
        rows = [[html.escape(cell) for cell in row] for row in part.rows(results)]
        out.append(f"<details><summary>{html.escape(part.summary(results))}</summary><div class=\"scroll\">"
                   f"{table(part.header(results), rows)}</div></details>")
    return out


TOKEN_COLUMNS = ("requests", "cached", "prompt", "completion", "reasoning")


def token_table(results: dict[str, Any]) -> list[str]:
    """results.json's ``tokens`` (the ledger): a row per stage, the judge's and the total; nothing
    for a run without one (an older abduct's)."""
    ledger = results.get("tokens")
    if not isinstance(ledger, dict) or not isinstance(ledger.get("total"), dict):
        return []
    named = [(f"stage {stage}", counts) for stage, counts in (ledger.get("stages") or {}).items()]
    named += [("judge", ledger["judge"])] if isinstance(ledger.get("judge"), dict) else []
    rows = [[html.escape(name), *(f"{int(counts.get(c, 0)):,}" for c in TOKEN_COLUMNS)]
            for name, counts in [*named, ("total", ledger["total"])]]
    return ["<h2>Tokens</h2>", table(["", *TOKEN_COLUMNS], rows),
            "<p class=\"note\">What this command spent, as the servers' usage (or a local generator) counts it; "
            "cached answers and units kept from an interrupted run cost none.</p>"]


def html_report(results: dict[str, Any], predictions: Sequence[dict[str, Any]], out_dir: Path | None = None) -> str:
    """The run's report.html (``out_dir`` only names where it sits)."""
    title = f"{results['task']} — {run_label(results) or results['model']['spec']}"
    timings = results.get("timings") or {}
    body = [f"<h1>{html.escape(title)}</h1>",
            "<p class=\"note\">" + html.escape(
                f"model {results['model']['spec']}; data {results['data']['dir']} (split {results['split']}), "
                f"seed {results['seed']}, "
                f"limit {_limit(results)}, {results.get('processes', 1)} process(es), "
                f"{timings.get('total_seconds', 0.0):.1f} s") + "</p>",
            *(f"<p class=\"note\">{html.escape('what shaped the inputs: ' + facts)}</p>"
              for facts in [shaped_inputs(results)] if facts),
            "<h2>Metrics</h2>", *metric_tables(results)]
    if (note := interval_note(results)) is not None:
        body.append(f"<p class=\"note\">{html.escape(note)}</p>")
    body += agreement_html(results)
    if have_matplotlib():
        drawn = list(plots(results, predictions))
        figures = [figure_html(caption, png, alt=name) for name, caption, png in drawn if png is not None]
        figures.sort(key=lambda f: f.startswith("<figure class=\"wide\""))  # the narrow ones pair up first
        notes = [f"<p class=\"note\">{html.escape(caption)}</p>" for _, caption, png in drawn if png is None]
        if figures or notes:
            body += ["<h2>Plots</h2>", *figures, *notes]
    else:
        body.append("<p class=\"note\">Plots need matplotlib: pip install matplotlib.</p>")
    body += token_table(results)  # accounting, after the plots: they start near the top
    shown = list(examples(results.get("details") or {}))
    if shown:
        body += ["<h2>Examples</h2>", *shown]
    where = f" in {out_dir}" if out_dir is not None else ""
    body.append("<p><a href=\"samples.html\">Browse every sample</a> (images, texts, answers; filter and sort).</p>")
    body.append(f"<p class=\"note\">Per-sample predictions: predictions.jsonl; full record: results.json{html.escape(where)}.</p>")
    return page(title, body)
