"""``report.html``: one self-contained page per run (every image inlined as base64), with plots
drawn from the shapes tasks already return, so a new task gets pictures without report code:

- ``by_<field>`` (in metrics or details): ``{group: {metric: value, ...}}`` -> bars per group;
- ``per_<name>`` (in metrics or details): ``[values]``, ``{key: value}`` or ``{key: {metric: value}}``
  -> a series (per chunk, per event position, ...);
- ``details["histograms"]``: names of numeric fields of the per-sample records -> a histogram each
  (e.g. Sherlock's ranks);
- ``details["examples"]``: ``[{"image", "boxes": [[left, top, width, height], ...], "title", "lines"}]``
  -> the image with its region drawn (the paper's overlay) and the lines under it (e.g. the
  top-ranked texts).

Plots need matplotlib (``pip install 'abduct-core[plots]'``): without it the page is written with
its tables and examples and says how to get the plots.
"""

from __future__ import annotations

import base64
import html
import io
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from abduct._outputs.report import _fmt, _limit, flatten_metrics, interval_note, with_interval

COUNT_KEYS = frozenset({"n", "count", "instances", "images", "chunks"})  # sizes, not scores: not plotted
MAX_BARS = 40
EXAMPLE_SIDE = 360

STYLE = """
body{font-family:system-ui,sans-serif;margin:2em auto;max-width:980px;color:#222}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:.25em .6em;text-align:right}
th{background:#f3f3f3}td:first-child,th:first-child{text-align:left}
figure{display:inline-block;margin:.5em;vertical-align:top;max-width:460px}
figcaption{font-size:.9em}.better{color:#080}.worse{color:#b00}.note{color:#666;font-size:.9em}
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


def _figure_png(draw: Any, width: float = 6.0, height: float = 3.2) -> bytes:
    from matplotlib.figure import Figure  # no pyplot: no global state, no display needed

    figure = Figure(figsize=(width, height), dpi=100, layout="constrained")
    draw(figure.add_subplot())
    buffer = io.BytesIO()
    with warnings.catch_warnings():  # a group name in a script the font lacks: drawn as boxes
        warnings.simplefilter("ignore", UserWarning)
        figure.savefig(buffer, format="png")
    return buffer.getvalue()


def _scores(row: Any) -> dict[str, float]:
    if isinstance(row, dict):
        return {k: float(v) for k, v in row.items()
                if isinstance(v, (int, float)) and not isinstance(v, bool) and k not in COUNT_KEYS}
    if isinstance(row, (int, float)) and not isinstance(row, bool):
        return {"value": float(row)}
    return {}


def bars(title: str, groups: dict[str, Any], errors: dict[str, tuple[float, float]] | None = None) -> bytes | None:
    """Grouped bars: one group per key, one bar per metric in it; ``errors`` (one metric per
    group) draws each group's interval ``(low, high)`` as an error bar."""
    keys = list(groups)[:MAX_BARS]
    rows = [_scores(groups[k]) for k in keys]
    metrics = sorted({m for row in rows for m in row})
    if not keys or not metrics:
        return None

    def draw(ax: Any) -> None:
        width = 0.8 / len(metrics)
        for j, metric in enumerate(metrics):
            xs = [i + (j - (len(metrics) - 1) / 2) * width for i in range(len(keys))]
            heights = [row.get(metric, float("nan")) for row in rows]
            spans = [(errors or {}).get(k) for k in keys]
            yerr = None
            if len(metrics) == 1 and any(spans):
                yerr = [[h - s[0] if s else 0.0 for h, s in zip(heights, spans)],
                        [s[1] - h if s else 0.0 for h, s in zip(heights, spans)]]
            ax.bar(xs, heights, width, label=label(metric), yerr=yerr, capsize=4 if yerr else 0)
        ax.set_xticks(range(len(keys)), [label(k) for k in keys], rotation=30 if len(keys) > 6 else 0)
        ax.set_title(label(title, 80))
        if len(metrics) > 1:
            ax.legend(fontsize="small")

    return _figure_png(draw)


def series(title: str, values: Any) -> bytes | None:
    """A per-position series: a list of numbers, or keyed numbers / keyed metric rows."""
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

    return _figure_png(draw, width=max(6.0, 3.0 * len(shown)))


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

    return _figure_png(draw)


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
    from abduct.contract.errors import AbductError
    from abduct.contract.records import Box, Region
    from abduct.kit.drawing import highlight, load_rgb

    try:
        picture = load_rgb(image)
        if boxes:
            picture = highlight(picture, Region(tuple(Box(*map(float, b)) for b in boxes)))
    except (AbductError, TypeError, ValueError):
        return None  # an example is an illustration: a missing image only drops it
    picture.thumbnail((EXAMPLE_SIDE, EXAMPLE_SIDE))
    buffer = io.BytesIO()
    picture.convert("RGB").save(buffer, format="JPEG", quality=85)
    return buffer.getvalue()


def examples(details: dict[str, Any]) -> Iterator[str]:
    for example in details.get("examples") or []:
        if not isinstance(example, dict) or not example.get("image"):
            continue
        jpeg = example_jpeg(str(example["image"]), example.get("boxes") or [])
        if jpeg is None:
            continue
        lines = "".join(f"<li>{html.escape(str(line))}</li>" for line in example.get("lines") or [])
        yield (f"<figure><img alt=\"example\" src=\"{data_uri(jpeg, 'image/jpeg')}\">"
               f"<figcaption><b>{html.escape(str(example.get('title', '')))}</b><ol>{lines}</ol></figcaption></figure>")


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
        figures = [f"<figure><img alt=\"{html.escape(caption)}\" src=\"{data_uri(png, 'image/png')}\">"
                   f"<figcaption>{html.escape(caption)}</figcaption></figure>"
                   for caption, png in plots(results, predictions)]
        if figures:
            body += ["<h2>Plots</h2>", *figures]
    else:
        body.append("<p class=\"note\">Plots need matplotlib: pip install 'abduct-core[plots]'.</p>")
    shown = list(examples(results.get("details") or {}))
    if shown:
        body += ["<h2>Examples</h2>", *shown]
    where = f" in {out_dir}" if out_dir is not None else ""
    body.append("<p><a href=\"samples.html\">Browse every sample</a> (images, texts, answers; filter and sort).</p>")
    body.append(f"<p class=\"note\">Per-sample predictions: predictions.jsonl; full record: results.json{html.escape(where)}.</p>")
    return page(title, body)
