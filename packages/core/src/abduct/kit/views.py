"""Pieces of a task's ``sample_view`` (what ``samples.html`` shows of one record) that several
tasks share: candidates listed with the model's scores and ranks, and the gold's margin."""

from __future__ import annotations

from collections.abc import Sequence


def ranks(scores: Sequence[float]) -> list[int]:
    """1 for the highest score; a tie goes to the earlier candidate (as ``first_argmax`` picks)."""
    order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
    out = [0] * len(scores)
    for rank, i in enumerate(order, start=1):
        out[i] = rank
    return out


def scored_texts(name: str | Sequence[str], texts: Sequence[str], scores: Sequence[float] | None,
                 gold: int | Sequence[int] | None = None) -> list[dict[str, str]]:
    """One text block per candidate: ``"{name} {k} · score s · rank r · gold"`` (k from 1), or
    each candidate's own name when ``name`` is a list."""
    golds = {gold} if isinstance(gold, int) else set(gold or ())
    ranked = ranks(scores) if scores is not None else []
    out = []
    for i, text in enumerate(texts):
        label = f"{name} {i + 1}" if isinstance(name, str) else name[i]
        if scores is not None and i < len(scores):
            label += f" · score {scores[i]:.4g} · rank {ranked[i]}"
        out.append({"label": label + (" · gold" if i in golds else ""), "text": text})
    return out


def gold_margin(scores: Sequence[float], gold: int) -> float | None:
    """The gold's score minus the best other one: above 0 when the model ranks the gold first."""
    others = [s for i, s in enumerate(scores) if i != gold]
    return float(scores[gold] - max(others)) if others and 0 <= gold < len(scores) else None
