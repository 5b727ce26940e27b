"""The WHOOPS! figures from per-sample records, and official-format prediction files.

Every value is on the paper's scale (x100): ``bleu_4``, ``cider``, ``exact_match`` and ``bem``
as the metrics give them (every text metric is x100), ``specificity`` and ``accuracy`` percentages.

Prediction files (``abduct score whoops-<task> --predictions P --answer-key KEY``, KEY being
``whoops_dataset.csv``, a release directory, ``metadata.csv`` or a parquet file):

- captioning: ``{image_id: caption}``;
- vqa: ``{image_id: [answer, ...]}``, one answer per question, in the file's question order;
- matching: ``{image_id: [[detailed, underspecified], ...]}``, one pair of scores per
  under-specified caption, in the file's order (the detailed caption is ``selected_caption``).

Every image of the key needs an entry, and every entry an image of the key; a bad value is
a DataError naming the file, the image id and the field.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from abduct import DataError, Metric, Settings, Spec, UnitScores
from abduct.host import get_registry
from abduct.kit import read_keyed_predictions
from abduct_whoops.common import Records, group_tables
from abduct_whoops.loader import load_answer_key
from abduct_whoops.records import WhoopsImage
from abduct_whoops.splits import N_FOLDS, make_folds

MetricMaker = Callable[..., Metric]
Units = dict[str, UnitScores]
UNIT = "image"  # what the intervals resample: an image, its questions together


def registry_metric(settings: Settings | None = None) -> MetricMaker:
    """Metrics by name from the process's registry, with the default settings: for a script that
    calls the scorers alone (``abduct score`` gives ``score_files`` its registry's metrics)."""
    def make(name: str, **options: Any) -> Metric:
        metric: Metric = get_registry().create("metric", Spec(name), settings or Settings(), **options)
        return metric
    return make


def caption_scores(metric: MetricMaker, records: Sequence[Mapping[str, Any]]) -> tuple[dict[str, float], Units]:
    """``bleu_4`` and ``cider`` (x100) of ``records`` (``{image_id, prediction, references}``), and
    their per-image data: BLEU's sufficient statistics, CIDEr-D's per-image scores (the corpus
    value is their mean; the document frequencies stay the full set's)."""
    from abduct_metrics.captions import CIDER_FIXED_DF

    predictions = {str(r["image_id"]): str(r["prediction"]) for r in records}
    references = {str(r["image_id"]): list(r["references"]) for r in records}
    predictions, references = _ptb_once(predictions, references)
    bleu = metric("bleu").compute(predictions, references)
    cider = metric("cider").compute(predictions, references)
    units = {"bleu_4": UnitScores.corpus(UNIT, "bleu-4", bleu.info["bleu_statistics"], 100.0),
             "cider": UnitScores.means(UNIT, {k: v["cider"] for k, v in cider.per_sample.items()}, 1.0,
                                       CIDER_FIXED_DF)}
    return {"bleu_4": float(bleu.corpus["bleu_4"]), "cider": float(cider.corpus["cider"])}, units


def _ptb_once(predictions: dict[str, str], references: dict[str, list[str]]) -> tuple[dict[str, str], dict[str, list[str]]]:
    """The texts as PTB tokens (``PtbTokens``, which the caption metrics score as given), each
    set in one tokenizer call in the order and blocks each metric would tokenise it in: BLEU and
    CIDEr then share one tokenisation, where each would start Java twice. Anything but plain
    strings is left to the metrics, whose checks name what is wrong."""
    texts = [*predictions.values(), *(r for group in references.values() for r in group)]
    if not predictions or any(type(t) is not str for t in texts) or any(not group for group in references.values()):
        return predictions, references
    from abduct_metrics.captions import ptb_tokenize  # Java runs here, not at import

    ids = list(predictions)
    tokens = ptb_tokenize([predictions[k] for k in ids])
    flat = iter(ptb_tokenize([r for k in ids for r in references[k]]))
    return dict(zip(ids, tokens)), {k: [next(flat) for _ in references[k]] for k in ids}


def caption_values(metric: MetricMaker, records: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    return caption_scores(metric, records)[0]


def vqa_scores(metric: MetricMaker, records: Sequence[Mapping[str, Any]],
               bem_model: Path | None) -> tuple[dict[str, float], Units]:
    """``exact_match`` (x100, the core's normalisation) and, given a BEM model, ``bem`` (x100;
    exact match first, BEM only when it fails) over ``records`` (``{id, image_id, prediction,
    answer, question}``, one per question), and their per-image data: (matched, questions)."""
    predictions = {str(r["id"]): str(r["prediction"]) for r in records}
    references = {str(r["id"]): [str(r["answer"])] for r in records}
    image_of = {str(r["id"]): str(r["image_id"]) for r in records}
    results = {"exact_match": metric("exact-match").compute(predictions, references)}
    if bem_model is not None:
        questions = {str(r["id"]): str(r["question"]) for r in records}
        results["bem"] = metric("bem", model=bem_model).compute(predictions, references, questions)
    values = {key: float(result.corpus[key]) for key, result in results.items()}
    units = {key: UnitScores.pooled(UNIT, "ratio", {k: (row[key], 1.0) for k, row in result.per_sample.items()},
                                    image_of) for key, result in results.items()}
    return values, units


def vqa_values(metric: MetricMaker, records: Sequence[Mapping[str, Any]], bem_model: Path | None) -> dict[str, float]:
    return vqa_scores(metric, records, bem_model)[0]


def specificity_values(records: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """``specificity``: 100 x the share of comparisons whose detailed caption scores strictly
    higher than the under-specified one (a tie counts 0); ``ties``: how many tied."""
    if not records:
        return {"specificity": 0.0, "ties": 0.0}
    wins = sum(1 for r in records if r["scores"][0] > r["scores"][1])
    ties = sum(1 for r in records if r["scores"][0] == r["scores"][1])
    return {"specificity": 100.0 * wins / len(records), "ties": float(ties)}


def _fold_groups(key: Sequence[WhoopsImage]) -> dict[str, set[str]]:
    folds = make_folds([image.image_id for image in key])
    return {f"fold{k}": set(folds.part(k, "test")) for k in range(N_FOLDS)}


def _entries(path: Path, key: Sequence[WhoopsImage]) -> dict[str, Any]:
    # values are checked per record by the callers (non-finite numbers included)
    return read_keyed_predictions(path, [image.image_id for image in key], shape="keyed by image_id", noun="image")


def _list_of(value: Any, needed: int, unit: str, expected: str, path: Path, image_id: str, field: str) -> list[Any]:
    """``value`` if it is a list of ``needed`` items, else the one-line error naming the record."""
    if not isinstance(value, list) or len(value) != needed:
        got = f"{len(value)} {unit}" if isinstance(value, list) else type(value).__name__
        raise DataError(f"expected {expected}, got {got}", file=path, record=image_id, field=field)
    return value


def _with_tables(key: Sequence[WhoopsImage], records: Records, compute: Callable[[Records], dict[str, float]],
                 image_of: Callable[[Mapping[str, Any]], str]) -> dict[str, Any]:
    category = {image.image_id: image.commonsense_category for image in key}
    metrics, details = group_tables(category, _fold_groups(key), records, compute, image_of)
    return {**metrics, **details}


def score_captions(path: Path, answer_key: Path, metric: MetricMaker | None = None) -> dict[str, Any]:
    key = [image for image in load_answer_key(answer_key) if image.crowd_captions]
    data = _entries(path, key)
    records: Records = []
    for image in key:
        value = data[image.image_id]
        if not isinstance(value, str):
            raise DataError(f"expected a caption (a string), got {type(value).__name__}", file=path,
                            record=image.image_id, field="caption")
        records.append({"image_id": image.image_id, "prediction": value, "references": list(image.crowd_captions)})
    make = metric or registry_metric()
    return _with_tables(key, records, lambda rs: caption_values(make, rs), lambda r: str(r["image_id"]))


def qa_records(image: WhoopsImage, answers: Sequence[str]) -> Records:
    return [{"id": f"{image.image_id}#{k}", "image_id": image.image_id, "question": q, "answer": a,
             "prediction": p} for k, ((q, a), p) in enumerate(zip(image.question_answering_pairs, answers))]


def score_vqa(path: Path, answer_key: Path, bem_model: Path | None = None,
              metric: MetricMaker | None = None) -> dict[str, Any]:
    key = [image for image in load_answer_key(answer_key) if image.question_answering_pairs]
    data = _entries(path, key)
    records: Records = []
    for image in key:
        needed = len(image.question_answering_pairs)
        value = _list_of(data[image.image_id], needed, "answers", f"a list of {needed} answers (one per question)",
                         path, image.image_id, "answers")
        for k, answer in enumerate(value):
            if not isinstance(answer, str):
                raise DataError(f"expected a string, got {answer!r}", file=path, record=image.image_id,
                                field=f"answers[{k}]")
        records.extend(qa_records(image, value))
    make = metric or registry_metric()
    return _with_tables(key, records, lambda rs: vqa_values(make, rs, bem_model), lambda r: str(r["image_id"]))


def score_matching(path: Path, answer_key: Path) -> dict[str, Any]:
    key = [image for image in load_answer_key(answer_key) if image.crowd_underspecified_captions]
    data = _entries(path, key)
    records: Records = []
    for image in key:
        needed = len(image.crowd_underspecified_captions)
        value = _list_of(data[image.image_id], needed, "pairs",
                         f"a list of {needed} [detailed, underspecified] score pairs", path, image.image_id, "scores")
        for k, pair in enumerate(value):
            if not isinstance(pair, list) or len(pair) != 2 or not all(
                    isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x) for x in pair):
                raise DataError(f"expected [detailed, underspecified] finite numbers, got {pair!r}", file=path,
                                record=image.image_id, field=f"scores[{k}]")
            records.append({"id": f"{image.image_id}#{k}", "image_id": image.image_id,
                            "scores": [float(pair[0]), float(pair[1])]})
    return _with_tables(key, records, specificity_values, lambda r: str(r["image_id"]))
