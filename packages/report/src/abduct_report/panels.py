"""The bar charts of report.html and the compare page, laid out so that they cannot mislead:

- metrics share a panel only when they share a scale and a direction: with declarations
  (results.json's ``metric_info``), the same ``better`` and ``range`` (BLEU beside ROUGE-L, both
  0-100 ↑; a mean rank, ↓ from 1, never beside P@1); undeclared ones only within 5x of each
  other's largest value (CIDEr up to 1000 would flatten METEOR's bars);
- groups, chunks, folds and positions are categories: bars (points beyond ``MAX_BARS``), never
  lines; bars rise from a stated baseline, 0, or the lower end of the declared range when 0 is
  outside it (a mean rank's 1), which the axis label names with the direction;
- a bar's interval is its whisker, its declared chance level a dashed mark across it;
- a breakdown's group sizes (``n``) stand under its labels, and a metric that is the same in
  every group (``ties`` all 0) gets no panel: the caption says so;
- the legend stands under the panels, away from every title; titles that would not fit are cut.

``figure_problems`` measures a drawn figure for what would still hide or mislead: text boxes
that overlap or leave the figure, panels without data.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from abduct_report.markdown import format_value
from abduct_report.metric_names import COUNT_KEYS

MAX_BARS = 40  # groups drawn as bars; beyond, as points
NARROW = 4.6  # inches: 460 px, the figure box of the page's two-column layout
WIDE = 9.4  # inches: the page's full width; a plot wider than NARROW takes a row of its own
GUIDE = "guide"  # the gid of what is drawn that is not data (baselines, chance marks)
PANELS_PER_ROW = 3
DIRECTIONS = {"higher": "↑ higher is better", "lower": "↓ lower is better"}


@dataclass(frozen=True)
class Scale:
    """A metric's declared direction and range (all None: not declared)."""

    better: str | None = None
    low: float | None = None
    high: float | None = None
    declared: bool = False

    @property
    def baseline(self) -> float:
        """Where bars start: 0, unless the range excludes it (a mean rank starts at 1)."""
        if self.low is not None and self.low > 0:
            return self.low
        if self.high is not None and self.high < 0:
            return self.high
        return 0.0

    def axis_label(self) -> str:
        direction = DIRECTIONS.get(self.better or "", "direction not declared")
        return direction if self.baseline == 0 else f"{direction} (from {format_value(self.baseline)})"


def label(text: object, limit: int = 30) -> str:
    """Plot text as given: ``$`` would start matplotlib's math mode (and fail on odd input),
    control characters have no glyph; long names are cut."""
    clean = "".join(c if c.isprintable() else "?" for c in str(text))
    clean = clean if len(clean) <= limit else clean[: limit - 1] + "…"
    return clean.replace("$", r"\$")


def scale_of(entry: Mapping[str, Any] | None) -> Scale:
    """A results.json ``metric_info`` entry as a Scale."""
    if not isinstance(entry, Mapping):
        return Scale()
    span = entry.get("range") or [None, None]
    low, high = (None if v is None else float(v) for v in (list(span) + [None, None])[:2])
    return Scale(entry.get("better"), low, high, True)


def _number(value: Any) -> float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return None


def is_score(metric: str, entry: Mapping[str, Any] | None) -> bool:
    """Whether a metric rates the model (so is drawn): declared with a direction, or, undeclared,
    not named as a size. Counts and reference figures (``n``, ``ties``, a human score) are not."""
    if isinstance(entry, Mapping):
        return entry.get("better") is not None
    return metric not in COUNT_KEYS


def group_size(row: Any) -> Any:
    """The group's size as the task reports it (``n``, ``count``, ...), None when it gives none."""
    if isinstance(row, Mapping):
        return next((row[k] for k in ("n", "count", "instances", "images", "chunks") if _number(row.get(k)) is not None),
                    None)
    return None


def split_panels(metrics: Sequence[str], scales: Mapping[str, Scale], top: Mapping[str, float]) -> list[list[str]]:
    """Metrics in panels: the declared ones by (direction, range), in their order; the undeclared
    ones by size, largest first, a panel holding those within 5x of its largest."""
    keyed: dict[tuple[Any, ...], list[str]] = {}
    for metric in metrics:
        scale = scales[metric]
        if scale.declared:
            keyed.setdefault((scale.better, scale.low, scale.high), []).append(metric)
    panels = list(keyed.values())
    loose: list[list[str]] = []
    for metric in sorted((m for m in metrics if not scales[m].declared), key=lambda m: -top[m]):
        if loose and top[metric] * 5 >= top[loose[-1][0]]:
            loose[-1].append(metric)
        else:
            loose.append([metric])
    return panels + [sorted(p) for p in loose]


@dataclass
class Bars:
    """What one bar chart shows, decided before anything is drawn (so the caption can say it)."""

    title: str
    groups: list[str]
    values: dict[str, dict[str, float]]  # group -> metric -> value
    intervals: dict[tuple[str, str], tuple[float, float]]  # (group, metric) -> (low, high)
    scales: dict[str, Scale]
    chance: dict[str, float]
    sizes: dict[str, Any]  # group -> its n
    panels: list[list[str]]
    constant: dict[str, float] = field(default_factory=dict)  # metric -> its one value, not drawn
    colours: dict[str, str] | None = None
    declared: bool = True  # whether the caller gave the metrics' declarations (the axis then names the direction)

    @property
    def metrics(self) -> list[str]:
        return [m for panel in self.panels for m in panel]

    @property
    def as_points(self) -> bool:
        return len(self.groups) > MAX_BARS

    def groups_of(self, panel: Sequence[str]) -> list[str]:
        return [g for g in self.groups if any(m in self.values[g] for m in panel)]

    def shown(self, group: str, metric: str) -> tuple[float, float] | None:
        """The interval drawn as a whisker: one that holds its value (a corpus metric's bootstrap
        interval may not, BLEU's resamples all above it; the table gives every interval)."""
        span = self.intervals.get((group, metric))
        value = self.values[group].get(metric)
        return span if span is not None and value is not None and span[0] <= value <= span[1] else None

    def width(self) -> float:
        """Inches: about 0.3 a bar and 0.9 a panel's axis, a row of panels within [NARROW, WIDE]."""
        if self.as_points:
            return WIDE
        sizes = [0.9 + 0.3 * max(1, len(self.groups_of(p)) * (len(p) if not self.one_per_group(p) else 1))
                 for p in self.panels]
        rows = [sum(sizes[i:i + PANELS_PER_ROW]) for i in range(0, len(sizes), PANELS_PER_ROW)]
        return max(NARROW, min(WIDE, 0.3 + max(rows)))

    def height(self) -> float:
        rows = math.ceil(len(self.panels) / PANELS_PER_ROW)
        return 3.2 * rows + (0.25 if self.sizes else 0.0)

    def one_per_group(self, panel: Sequence[str]) -> bool:
        """Each group holds one of the panel's metrics (the headline figure: a group per metric)."""
        return all(sum(m in self.values[g] for m in panel) == 1 for g in self.groups_of(panel))

    def notes(self) -> list[str]:
        """What the caption says about the drawing: whiskers, n, chance marks, metrics left out."""
        out = []
        if self.intervals and any(self.shown(g, m) for g in self.groups for m in self.metrics):
            out.append("whiskers: intervals")
        if self.sizes:
            out.append("n: each group's size")
        if self.chance:
            out.append("dashed marks: chance")
        if self.constant:
            same = ", ".join(f"{m} {format_value(v)}" for m, v in self.constant.items())
            out.append(f"the same in every group, not drawn: {same}")
        return out


def plan_bars(title: str, groups: Mapping[str, Any], errors: Mapping[str, Any] | None = None,
              colours: Mapping[str, str] | None = None, info: Mapping[str, Any] | None = None) -> Bars | None:
    """The chart of ``groups`` (``{group: {metric: value}}`` or ``{group: value}``), or None when
    nothing in it rates a model (no panels: every metric is the same in every group). ``errors``: each group's ``(low, high)`` (a group of one metric)
    or ``{metric: (low, high)}``; ``info``: the metrics' declarations (results.json's
    ``metric_info`` entries, by the metric's name in the rows)."""
    given, info = info is not None, info or {}
    names = list(groups)
    values: dict[str, dict[str, float]] = {}
    for group in names:
        row = groups[group] if isinstance(groups[group], Mapping) else {"value": groups[group]}
        values[group] = {m: v for m, raw in row.items()
                         if (v := _number(raw)) is not None and is_score(m, info.get(m))}
    metrics = list(dict.fromkeys(m for g in names for m in values[g]))
    constant: dict[str, float] = {}
    for metric in metrics:  # one number in every group says nothing a panel would show
        seen = [values[g][metric] for g in names if metric in values[g]]
        if len(seen) > 1 and all(math.isclose(v, seen[0], rel_tol=1e-9, abs_tol=1e-12) for v in seen):
            constant[metric] = seen[0]  # equal but for the last bits of a float sum
    metrics = [m for m in metrics if m not in constant]
    if not names or not (metrics or constant):
        return None
    intervals: dict[tuple[str, str], tuple[float, float]] = {}
    for group, span in (errors or {}).items():
        if group not in values:
            continue
        spans = span if isinstance(span, Mapping) else {m: span for m in values[group]} if len(values[group]) == 1 else {}
        for metric, (low, high) in spans.items():
            intervals[(group, metric)] = (float(low), float(high))
    scales = {m: scale_of(info.get(m)) for m in metrics}
    chance = {m: float(c) for m in metrics if (c := _number((info.get(m) or {}).get("chance"))) is not None}
    top = {m: max((abs(values[g][m]) for g in names if m in values[g] and math.isfinite(values[g][m])), default=0.0)
           for m in metrics}
    sizes = {g: n for g in names if (n := group_size(groups[g])) is not None}
    kept = [g for g in names if any(m in values[g] for m in metrics)]
    return Bars(title, kept, values, intervals, scales, chance, sizes, split_panels(metrics, scales, top), constant,
                dict(colours) if colours else None, given)


def _tick(bars: Bars, group: str) -> str:
    size = bars.sizes.get(group)
    return label(group) + (f"\nn={format_value(size)}" if size is not None else "")


def draw_panel(ax: Any, bars: Bars, panel: list[str]) -> None:
    """One panel: bars (or points) from the baseline, whiskers, chance marks, labelled axes."""
    groups = bars.groups_of(panel)
    single = bars.one_per_group(panel)
    width = 0.8 if single else 0.8 / len(panel)
    scale = bars.scales[panel[0]]
    base = scale.baseline
    seen: list[float] = [base]
    for j, metric in enumerate(panel):
        drawn = [(i if single else i + (j - (len(panel) - 1) / 2) * width, value, group)
                 for i, group in enumerate(groups)
                 if (value := bars.values[group].get(metric)) is not None and math.isfinite(value)]
        if not drawn:
            continue
        xs, heights = [x for x, _, _ in drawn], [v for _, v, _ in drawn]
        colour = [(bars.colours or {}).get(g, f"C{bars.metrics.index(metric)}") for _, _, g in drawn]
        if bars.as_points:
            ax.scatter(xs, heights, s=12, color=colour, label=label(metric), zorder=3)
        else:
            ax.bar(xs, [h - base for h in heights], width, bottom=base, color=colour, label=label(metric))
        seen += heights
        spans = [(x, h, s) for x, h, g in drawn if (s := bars.shown(g, metric)) is not None]
        if spans:
            ax.errorbar([x for x, _, _ in spans], [h for _, h, _ in spans],
                        yerr=[[h - s[0] for _, h, s in spans], [s[1] - h for _, h, s in spans]],
                        fmt="none", ecolor="black", elinewidth=1, capsize=3, zorder=4)
            seen += [v for _, _, s in spans for v in s]
        if metric in bars.chance:
            level = bars.chance[metric]
            half = 0.5 if bars.as_points else width / 2
            ax.hlines([level] * len(xs), [x - half for x in xs], [x + half for x in xs], colors="black",
                      linestyles="dashed", linewidth=1.2, zorder=5, gid=GUIDE)
            seen.append(level)
    ax.axhline(base, color="black", linewidth=0.8, gid=GUIDE)
    low, high = min(seen), max(seen)
    pad = 0.06 * ((high - low) or abs(high) or 1.0)
    ax.set_ylim(base if low >= base else low - pad, high + pad if high > base else base + pad)
    ax.set_xlim(-0.6, len(groups) - 0.4)
    ax.set_xticks(range(len(groups)), [_tick(bars, g) for g in groups])
    if bars.declared or scale.baseline != 0:
        ax.set_ylabel(scale.axis_label(), fontsize="small")
    # a panel's metrics, unless the legend (one panel of several) or the figure's title names them,
    # or they have no name (bare numbers)
    if panel != ["value"] and (len(bars.panels) > 1 or (len(panel) == 1 and not bars.title.endswith(f": {panel[0]}"))):
        ax.set_title(label(", ".join(panel), 60), fontsize="medium")


def fit_text(text: Any, width: float, renderer: Any) -> bool:
    """Cut ``text`` (a matplotlib Text) with "…" until it is at most ``width`` pixels wide;
    whether it had to be cut."""
    full = text.get_text()
    keep = len(full)
    while keep > 1 and text.get_window_extent(renderer).width > width:
        keep -= 1
        text.set_text(full[:keep].rstrip() + "…")
    return keep < len(full)


def finish(figure: Any, bars: Bars) -> None:
    """The legend under the panels (the metrics of shared panels, the chance mark), in as many
    columns as fit; then every title cut to its panel's width (the figure's, for the title)."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    handles: list[Any] = []
    if not bars.colours:  # the metrics that share a panel (a panel of one is titled by its metric)
        handles += [Patch(color=f"C{bars.metrics.index(m)}", label=label(m)) for p in bars.panels
                    if len(p) > 1 and not bars.one_per_group(p) for m in p]
    if bars.chance:
        handles.append(Line2D([], [], color="black", linestyle="dashed", label="chance"))
    if handles:
        for columns in range(min(len(handles), 4), 0, -1):
            for old in list(figure.legends):
                old.remove()
            legend = figure.legend(handles=handles, loc="outside lower center", ncols=columns, fontsize="small",
                                   frameon=False)
            figure.draw_without_rendering()
            if legend.get_window_extent().width <= figure.bbox.width:
                break
    renderer = figure.canvas.get_renderer()
    cut = False
    for ax in figure.axes:  # a title centred on its panel, at most a little wider, never past the figure's edge
        box = ax.get_window_extent(renderer)
        middle = (box.x0 + box.x1) / 2
        cut |= fit_text(ax.title, min(box.width + 20, 2 * min(middle, figure.bbox.width - middle) - 8), renderer)
    if figure._suptitle is not None:
        cut |= fit_text(figure._suptitle, figure.bbox.width - 8, renderer)
    if cut:  # shorter titles: the layout again (saving lays it out too, but measuring needs it now)
        figure.draw_without_rendering()


# -- checks ---------------------------------------------------------------------------------
def _in_view(text: Any, ax: Any, axis: str) -> bool:
    """Whether a tick label's tick lies inside the axes' limits (matplotlib keeps labels for
    ticks beyond them, which it does not draw)."""
    where = text.get_position()[0 if axis == "x" else 1]
    low, high = sorted(ax.get_xlim() if axis == "x" else ax.get_ylim())
    slack = 1e-9 * max(1.0, abs(high - low))
    return bool(low - slack <= where <= high + slack)


def drawn_texts(figure: Any) -> list[Any]:
    """Every piece of text the figure draws: titles, axis and tick labels, legends, notes."""
    texts = [t for t in figure.texts]
    for legend in figure.legends:
        texts += [*legend.get_texts(), legend.get_title()]
    for ax in figure.axes:
        texts += [ax.title, ax._left_title, ax._right_title, ax.xaxis.label, ax.yaxis.label,
                  ax.xaxis.get_offset_text(), ax.yaxis.get_offset_text(), *ax.texts]
        texts += [t for t in ax.get_xticklabels() if _in_view(t, ax, "x")]
        texts += [t for t in ax.get_yticklabels() if _in_view(t, ax, "y")]
        if (legend := ax.get_legend()) is not None:
            texts += [*legend.get_texts(), legend.get_title()]
    return [t for t in texts if t.get_visible() and t.get_text().strip()]


def _has_data(ax: Any) -> bool:
    import numpy as np

    for artist in [*ax.patches, *ax.lines, *ax.collections]:
        if artist.get_gid() == GUIDE or not artist.get_visible():
            continue
        if hasattr(artist, "get_height"):  # a bar: seen when it rises from its baseline
            if math.isfinite(artist.get_height()) and artist.get_height() != 0:
                return True
            continue
        if hasattr(artist, "get_ydata") and np.isfinite(np.asarray(artist.get_ydata(), dtype=float)).any():
            return True
        if hasattr(artist, "get_offsets") and len(artist.get_offsets()) and np.isfinite(artist.get_offsets()).any():
            return True
    return False


def figure_problems(figure: Any) -> list[str]:
    """What a reader of the drawn ``figure`` would trip on: text boxes overlapping each other (by
    more than half a pixel both ways) or leaving the figure; panels with nothing to see (no
    point, no bar rising from its baseline: a panel of zeros), whose points a line joins, or
    whose bars start below the axis."""
    figure.draw_without_rendering()
    renderer = figure.canvas.get_renderer()
    boxes = [(t.get_text(), t.get_window_extent(renderer)) for t in drawn_texts(figure)]
    width, height = figure.bbox.width, figure.bbox.height
    problems = [f"{text!r} leaves the figure" for text, b in boxes
                if b.x0 < -0.5 or b.y0 < -0.5 or b.x1 > width + 0.5 or b.y1 > height + 0.5]
    for i, (text, a) in enumerate(boxes):
        for other, b in boxes[i + 1:]:
            if min(a.x1, b.x1) - max(a.x0, b.x0) > 0.5 and min(a.y1, b.y1) - max(a.y0, b.y0) > 0.5:
                problems.append(f"{text!r} overlaps {other!r}")
    for ax in figure.axes:
        if not _has_data(ax):
            problems.append(f"panel {ax.get_title()!r} has no data")
        if any(line.get_gid() != GUIDE and line.get_linestyle() not in ("None", "", " ") and len(line.get_xdata()) > 1
               for line in ax.lines):  # categories joined by a line read as a trend between them
            problems.append(f"panel {ax.get_title()!r} joins its points with a line")
        low, high = sorted(ax.get_ylim())
        if any(not low <= bar.get_y() <= high for bar in ax.patches if hasattr(bar, "get_height")):
            problems.append(f"panel {ax.get_title()!r} cuts its bars off from their baseline")
    return problems
