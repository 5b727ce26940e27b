"""``report.html``: one self-contained page per run (every image inlined as base64), with plots
drawn from the shapes tasks already return, so a new task gets pictures without report code:

- ``by_<field>`` (in metrics or details): ``{group: {metric: value, ...}}`` -> bars per group;
- ``per_<name>`` (in metrics or details): ``[values]``, ``{key: value}`` or ``{key: {metric: value}}``
  -> a series (per chunk, per event position, ...);
- ``details["histograms"]``: names of numeric fields of the per-sample records -> a histogram each
  (e.g. Sherlock's ranks);
- ``details["examples"]``: ``[{"image" (optional), "boxes": [[left, top, width, height(, name)], ...], "title",
  "lines", "correct"}]`` -> the image with its region drawn (the paper's overlay; a box's optional
  ``name`` written at its corner) and the lines under it (e.g. the top-ranked texts), marked
  right or wrong when ``correct`` is given.

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
from pathlib import Path
from typing import Any

from abduct_report.markdown import _fmt, _limit, flatten_metrics, interval_note, with_interval

COUNT_KEYS = frozenset({"n", "count", "instances", "images", "chunks"})  # sizes, not scores: not plotted
MAX_BARS = 40
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
def label(text: object, limit: int = 30) -> str:
    """Plot text as given: ``$`` would start matplotlib's math mode (and fail on odd input),
    control characters have no glyph; long names are cut."""
    clean = "".join(c if c.isprintable() else "?" for c in str(text))
    clean = clean if len(clean) <= limit else clean[: limit - 1] + "…"
    return clean.replace("$", r"\$")


DPI = 100
NARROW = 4.6  # inches: 460 px, the figure box of the page's two-column layout
WIDE = 9.4  # inches: the page's full width; a plot wider than NARROW takes a row of its own


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


def _scores(row: Any) -> dict[str, float]:
    if isinstance(row, dict):
        return {k: float(v) for k, v in row.items()
                if isinstance(v, (int, float)) and not isinstance(v, bool) and k not in COUNT_KEYS}
    if isinstance(row, (int, float)) and not isinstance(row, bool):
        return {"value": float(row)}
    return {}


def bar_width(groups: int, per_group: int) -> float:
    """Inches: about 0.3 in a bar (so labels have room), within [NARROW, WIDE]."""
    return max(NARROW, min(WIDE, 1.2 + 0.3 * groups * max(1, per_group)))


def scales(rows: Sequence[dict[str, float]], metrics: Sequence[str]) -> list[list[str]]:
    """The metrics split into panels whose largest values are within 5x of each other:
    CIDEr (up to 1000) beside METEOR (up to 100) would flatten METEOR's bars to nothing."""
    top = {m: max((abs(r[m]) for r in rows if m in r and r[m] == r[m]), default=0.0) for m in metrics}
    panels: list[list[str]] = []
    for metric in sorted(metrics, key=lambda m: -top[m]):
        if panels and top[metric] * 5 >= top[panels[-1][0]]:
            panels[-1].append(metric)
        else:
            panels.append([metric])
    return [sorted(p) for p in panels]


def draw_bars(title: str, groups: dict[str, Any], errors: dict[str, tuple[float, float]] | None = None,
              colours: dict[str, str] | None = None) -> Any:
    """The Figure of :func:`bars` (None when there is nothing to draw)."""
    keys = list(groups)[:MAX_BARS]
    rows = [_scores(groups[k]) for k in keys]
    metrics = sorted({m for row in rows for m in row})
    if not keys or not metrics:
        return None
    panels = scales(rows, metrics)

    def draw_panel(ax: Any, shown: list[str]) -> None:
        width = 0.8 / len(shown)
        for j, metric in enumerate(shown):
            xs = [i + (j - (len(shown) - 1) / 2) * width for i in range(len(keys))]
            heights = [row.get(metric, float("nan")) for row in rows]
            # a whisker for each interval that holds its value (a corpus metric's bootstrap interval
            # may not: BLEU's resamples can all fall above it); the table gives every interval
            spans = [s if s and s[0] <= h <= s[1] else None
                     for h, s in zip(heights, ((errors or {}).get(k) for k in keys))]
            yerr = None
            if len(metrics) == 1 and any(spans):
                yerr = [[h - s[0] if s else 0.0 for h, s in zip(heights, spans)],
                        [s[1] - h if s else 0.0 for h, s in zip(heights, spans)]]
            colour = [colours.get(k, "C0") for k in keys] if colours and len(metrics) == 1 else f"C{metrics.index(metric)}"
            ax.bar(xs, heights, width, label=label(metric), yerr=yerr, capsize=4 if yerr else 0, color=colour)
        ax.set_xticks(range(len(keys)), [label(k) for k in keys])
        if len(shown) == 1 and len(panels) > 1:
            ax.set_title(label(shown[0]))

    def draw(ax: Any) -> None:
        figure = ax.figure
        if len(panels) == 1:
            draw_panel(ax, panels[0])
            ax.set_title(label(title, 80))
        else:
            figure.delaxes(ax)
            for panel, shown in zip(figure.subplots(1, len(panels), squeeze=False)[0], panels):
                draw_panel(panel, shown)
            figure.suptitle(label(title, 80))

    figure = plot_figure(draw, width=bar_width(len(keys), len(metrics)) * (1 if len(panels) == 1 else 1.2))
    if any(len(shown) > 1 for shown in panels):
        legend_above(figure, len(metrics))
    return figure


def legend_above(figure: Any, entries: int) -> None:
    """One legend over the plots (inside, it would hide bars), in as many columns as fit the
    figure's width: measured, as the labels' lengths vary."""
    for columns in range(min(entries, 4), 0, -1):
        for old in list(figure.legends):
            old.remove()
        legend = figure.legend(loc="outside upper center", ncols=columns, fontsize="small", frameon=False)
        figure.draw_without_rendering()
        if legend.get_window_extent().width <= figure.bbox.width:
            return


def bars(title: str, groups: dict[str, Any], errors: dict[str, tuple[float, float]] | None = None,
         colours: dict[str, str] | None = None) -> bytes | None:
    """Grouped bars: one group per key, one bar per metric in it; ``errors`` (one metric per
    group) draws each group's interval ``(low, high)`` as an error bar; ``colours`` (one
    metric) colours each group's bar."""
    return _memoised(("bars", title, groups, errors, colours), lambda: _png(draw_bars(title, groups, errors, colours)))


def series(title: str, values: Any) -> bytes | None:
    """A per-position series: a list of numbers, or keyed numbers / keyed metric rows."""
    return _memoised(("series", title, values), lambda: _draw_series(title, values))


def _draw_series(title: str, values: Any) -> bytes | None:
    if isinstance(values, list):
        values = {str(i): v for i, v in enumerate(values)}
    if not isinstance(values, dict) or not values:
        return None
    if len(values) <= MAX_BARS and all(not isinstance(v, dict) for v in values.values()):
        return bars(title, values)
    keys = list(values)
    rows = [_scores(values[k]) for k in keys]
    metrics = sorted({m for row in rows for m in row})
    if not metrics:
        return None

    shown = metrics[:4]  # one panel per metric: ranks and percentages do not share an axis

    def draw(ax: Any) -> None:
        figure = ax.figure
        figure.delaxes(ax)
        axes = figure.subplots(1, len(shown), squeeze=False)[0]
        step = max(1, len(keys) // 8)
        for panel, metric in zip(axes, shown):
            panel.plot(range(len(keys)), [row.get(metric, float("nan")) for row in rows], marker="o")
            panel.set_xticks(range(0, len(keys), step), [label(k) for k in keys[::step]])
            panel.set_title(label(metric))
        figure.suptitle(label(title, 80))

    return _figure_png(draw, width=max(NARROW, 3.0 * len(shown)))


def histogram(field: str, predictions: Sequence[dict[str, Any]]) -> bytes | None:
    values = [float(r[field]) for r in predictions
              if isinstance(r.get(field), (int, float)) and not isinstance(r.get(field), bool)]
    if not values:
        return None

    def draw(ax: Any) -> None:
        ax.hist(values, bins=min(50, max(5, len(set(values)))))
        ax.set_title(label(f"{field} over {len(values)} samples", 80))
        ax.set_xlabel(label(field))
        ax.set_ylabel("samples")

    return _memoised(("histogram", field, values), lambda: _figure_png(draw))


def plots(results: dict[str, Any], predictions: Sequence[dict[str, Any]]) -> Iterator[tuple[str, bytes]]:
    """(caption, PNG) for every shape the report knows, in a stable order."""
    details = results.get("details") or {}
    for source in (results.get("metrics") or {}, details):
        for key, value in source.items():
            if key.startswith("by_") and isinstance(value, dict):
                png = bars(f"{results['task']}: {key.replace('_', ' ')}", value)
            elif key.startswith("per_"):
                png = series(f"{results['task']}: {key.replace('_', ' ')}", value)
            else:
                continue
            if png is not None:
                yield key, png
    intervals = results.get("intervals") or {}
    # the headline metrics with their intervals as error bars (a breakdown's groups, "by_x.g.m", have theirs in report.md)
    shown = {m: v for m, v in flatten_metrics(results.get("metrics") or {}) if m in intervals and "." not in m}
    if shown:
        png = bars(f"{results['task']}: metrics with {100 * next(iter(intervals.values()))['level']:.0f}% intervals",
                   {m: float(v) for m, v in shown.items()},
                   {m: (float(intervals[m]["low"]), float(intervals[m]["high"])) for m in shown})
        if png is not None:
            yield "intervals", png
    for field in details.get("histograms") or []:
        png = histogram(str(field), predictions)
        if png is not None:
            yield f"histogram of {field}", png


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


def html_report(results: dict[str, Any], predictions: Sequence[dict[str, Any]], out_dir: Path | None = None) -> str:
    """The run's report.html (``out_dir`` only names where it sits)."""
    title = f"{results['task']} — {results['model']['spec']}"
    timings = results.get("timings") or {}
    body = [f"<h1>{html.escape(title)}</h1>",
            "<p class=\"note\">" + html.escape(
                f"data {results['data']['dir']} (split {results['split']}), seed {results['seed']}, "
                f"limit {_limit(results)}, {results.get('processes', 1)} process(es), "
                f"{timings.get('total_seconds', 0.0):.1f} s") + "</p>",
            "<h2>Metrics</h2>",
            table(["metric", "value", "chance"], [(html.escape(name + direction_arrow(results, name)),
                                                   with_interval(value, (results.get("intervals") or {}).get(name)),
                                                   _chance(results, name))
                                                  for name, value in flatten_metrics(results["metrics"])])]
    if (note := interval_note(results)) is not None:
        body.append(f"<p class=\"note\">{html.escape(note)}</p>")
    if have_matplotlib():
        figures = [figure_html(caption, png) for caption, png in plots(results, predictions)]
        figures.sort(key=lambda f: f.startswith("<figure class=\"wide\""))  # the narrow ones pair up first
        if figures:
            body += ["<h2>Plots</h2>", *figures]
    else:
        body.append("<p class=\"note\">Plots need matplotlib: pip install matplotlib.</p>")
    shown = list(examples(results.get("details") or {}))
    if shown:
        body += ["<h2>Examples</h2>", *shown]
    where = f" in {out_dir}" if out_dir is not None else ""
    body.append("<p><a href=\"samples.html\">Browse every sample</a> (images, texts, answers; filter and sort).</p>")
    body.append(f"<p class=\"note\">Per-sample predictions: predictions.jsonl; full record: results.json{html.escape(where)}.</p>")
    return page(title, body)
