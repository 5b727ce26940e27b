"""The official cross-validation arithmetic (``eval_crossval.py``), per fold and over folds.

Per fold, on its test split (x100 where the script prints fractions):

- matching: ``accuracy`` = share of items whose prediction equals the gold letter exactly
  (a prediction that is not the bare letter is wrong, never refused); ``n``;
- ranking: ``accuracy_overall``; ``accuracy_crowd`` over the items whose finalist is a
  ``crowd_winner``, ``accuracy_ny`` over all others (the editors' ``official_winner``);
  ``n_overall``, ``n_crowd``, ``n_ny``. An empty subset has no accuracy (the script prints NaN);
- explanation: ``bleu`` and ``rouge_l`` (``text.py``), ``rouge_l_mean``, ``n``.

Over folds (``fold=all``): each metric's **unweighted mean of the five per-fold values** (not
pooled over items), given only when all five folds were scored, as the script does; the
per-fold figures are kept under ``folds.<k>``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from abduct import AbductError, DataError
from abduct.kit import read_json
from abduct_nycc.records import LETTERS, N_FOLDS, NyccItem
from abduct_nycc.text import bleu, rouge_l


def _percent(hits: Sequence[bool]) -> float:
    return 100.0 * sum(hits) / len(hits)


def fold_values(task: str, items: Sequence[NyccItem], answers: Mapping[str, Any]) -> dict[str, Any]:
    """One fold's metrics from ``answers`` (``{instance_id: letter or explanation}``)."""
    if task == "explanation":
        predictions = [str(answers[i.instance_id]) for i in items]
        references = [i.explanation for i in items]
        median, mean = rouge_l(predictions, references)
        return {"bleu": bleu(predictions, references), "rouge_l": 100.0 * median, "rouge_l_mean": 100.0 * mean,
                "n": len(items)}
    letters = LETTERS[task]
    hits = [answers[i.instance_id] == letters[i.label] for i in items if i.label is not None]
    if task == "matching":
        return {"accuracy": _percent(hits), "n": len(hits)}
    crowd = [h for h, i in zip(hits, items) if i.winner_source == "crowd_winner"]
    ny = [h for h, i in zip(hits, items) if i.winner_source != "crowd_winner"]
    out: dict[str, Any] = {"accuracy_overall": _percent(hits)}
    if crowd:
        out["accuracy_crowd"] = _percent(crowd)
    if ny:
        out["accuracy_ny"] = _percent(ny)
    return {**out, "n_overall": len(hits), "n_crowd": len(crowd), "n_ny": len(ny)}


def by_fold(items: Sequence[NyccItem]) -> dict[int, list[NyccItem]]:
    groups: dict[int, list[NyccItem]] = {}
    for item in items:
        groups.setdefault(item.fold if item.fold is not None else -1, []).append(item)
    return dict(sorted(groups.items()))


def over_folds(per_fold: Mapping[int, Mapping[str, Any]]) -> dict[str, Any]:
    """The per-fold figures (``folds.<k>``) and, with all five folds, each metric's unweighted mean;
    one fold alone: its own figures."""
    out: dict[str, Any] = {"folds": {str(k): dict(v) for k, v in per_fold.items()}}
    if len(per_fold) == 1:
        return {**next(iter(per_fold.values())), **out}
    if sorted(per_fold) == list(range(N_FOLDS)):
        names = [k for k in per_fold[0] if all(k in v for v in per_fold.values())]
        for name in names:
            values = [float(per_fold[k][name]) for k in range(N_FOLDS)]
            out[name] = sum(values) / N_FOLDS if not name.startswith("n") else int(sum(values))
        out["folds_scored"] = N_FOLDS
    return out


def evaluate_folds(task: str, items: Sequence[NyccItem], answers: Mapping[str, Any]) -> dict[str, Any]:
    return over_folds({k: fold_values(task, group, answers) for k, group in by_fold(items).items()})


def read_official(path: Path, task: str, items: Sequence[NyccItem]) -> dict[str, Any]:
    """The official predictions file (a JSON object ``{instance_id: prediction}``; keys of other
    folds or splits ignored, as the script ignores them) checked against ``items``: a fold with a
    test instance lacking a prediction (the script skips such a fold), or an explanation that is
    empty (the script skips its fold) or not a string, is refused in one line."""
    data = read_json(Path(path), "predictions file")
    if not isinstance(data, dict):
        raise DataError(f"expected a JSON object {{instance_id: prediction}}, got {type(data).__name__}", file=path)
    for fold, group in by_fold(items).items():
        missing = [i.instance_id for i in group if i.instance_id not in data]
        if missing:
            raise DataError(f"fold {fold}: no prediction for {len(missing)} of its {len(group)} test instances "
                            f"(first: {missing[0]}); the official scorer skips such a fold and gives no mean",
                            file=path, record=missing[0])
        if task == "explanation":
            for item in group:
                value = data[item.instance_id]
                if not value or not isinstance(value, str):
                    raise DataError(f"fold {fold}: {'empty explanation' if not value else 'not a string'} "
                                    f"({value!r}); the official scorer skips a fold with an empty one", file=path,
                                    record=item.instance_id)
    return data


def check_fold(fold: str) -> int | None:
    """``0``..``4`` or ``all`` (None)."""
    if fold == "all":
        return None
    if fold in {str(k) for k in range(N_FOLDS)}:
        return int(fold)
    raise AbductError(f"fold must be 0, 1, 2, 3, 4 or all, not {fold!r}")

