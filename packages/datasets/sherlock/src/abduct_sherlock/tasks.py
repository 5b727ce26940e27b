"""The Sherlock tasks: retrieval, localization and comparison (the paper's three), and
generation (abduct's own: the paper evaluates no generation).

Each reads its registered dataset (``dataset.py``: the examples, with the inputs a model is
given, see ``examples.py``), plans its work as resumable units — retrieval one score matrix
per chunk, localization one image's boxes, comparison groups of sources (``Custom`` steps
calling the run's scorer), generation batches of instances (``Generate``) — and computes its
metrics from the records in ``finish``. Each scores official-format prediction files
(``score_files``) exactly like the leaderboard. Which inputs a model may go without is
``records.OPTIONAL_INPUTS``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from abduct import (
    COUNT,
    TEXT_METRICS,
    AbductError,
    Custom,
    Evaluation,
    Generate,
    GenerationItem,
    GenerationRequest,
    MetricInfo,
    MetricResult,
    Records,
    RunInfo,
    RunModels,
    Settings,
    Spec,
    Stage,
    UnitScores,
    higher,
    lower,
    percent,
    reference,
)
from abduct.kit import score_generations
from abduct_sherlock import metrics, precision
from abduct_sherlock.examples import ComparisonExample, GenerationExample, LocalizationImage, require_val
from abduct_sherlock.keys import ComparisonKey, LocalizationKey, RetrievalKey, auto_image, source_result
from abduct_sherlock.predictions import load_predictions
from abduct_sherlock.records import OPTIONAL_INPUTS, SherlockInstance
from abduct_sherlock.views import comparison_view, localization_view

SCORES = frozenset({"score"})  # what the custom steps call of the model


class SherlockTask:
    """What the four tasks share: the validation split, and the inputs a model may go without."""

    default_split = "val"
    optional_inputs = OPTIONAL_INPUTS


def _unique(ids: list[str]) -> list[str]:
    """Unit ids as given, numbered only when one repeats (so they still pair across runs)."""
    return ids if len(set(ids)) == len(ids) else [f"{i}:{x}" for i, x in enumerate(ids)]


def _retrieval_units(records: Sequence[dict[str, Any]], per_chunk: dict[int, dict[str, float]],
                     image_of: Mapping[str, str]) -> dict[str, UnitScores]:
    """Retrieval's figures are means over chunks of means over a chunk's instances: an
    instance weighs N / (K n_k) (N instances, K chunks, n_k in its chunk), so that the plain
    mean of the weighted values is the official figure. Resampling instances with these
    weights approximates resampling each chunk on its own (chunks hold ~1,000 instances).
    An image's instances are resampled together (clustered by image, ``image_of`` its URL)."""
    weight = {k: len(records) / (len(per_chunk) * c["n"]) for k, c in per_chunk.items()}
    ids = [f"{r['split_idx']}:{r['instance_id']}" for r in records]
    unit = "retrieval instance (weighted within its chunk)"
    images = {i: image_of[r["instance_id"]] for i, r in zip(ids, records)}

    def weighted(value: Callable[[dict[str, Any]], float], scale: float) -> UnitScores:
        return UnitScores.means(unit, {i: weight[r["split_idx"]] * value(r) for i, r in zip(ids, records)},
                                scale).clustered("image", images)

    return {"im2txt": weighted(lambda r: r["im2txt_rank"], 1.0), "txt2im": weighted(lambda r: r["txt2im_rank"], 1.0),
            "p_at_1": weighted(lambda r: float(r["im2txt_rank"] == 1.0), 100.0)}


Chunk = tuple[int, list[SherlockInstance]]


def _chunks(instances: Sequence[SherlockInstance]) -> dict[int, list[SherlockInstance]]:
    """The instances of each retrieval chunk (``split_idx``), in file order."""
    chunks: dict[int, list[SherlockInstance]] = {}
    for inst in instances:
        if inst.split_idx is None:
            raise AbductError(f"instance {inst.instance_id} has no split_idx (its retrieval chunk)")
        chunks.setdefault(inst.split_idx, []).append(inst)
    return chunks


def score_chunk(models: RunModels, payload: Chunk) -> Records:
    """One chunk's score matrix: each instance's ranks both ways, and for the first
    ``TOP_PER_CHUNK`` the three inferences the model ranks highest."""
    k, members = payload
    sim = models.require_scorer().score_matrix([m.visual for m in members], [m.inference for m in members])
    im2txt, txt2im = metrics.diagonal_ranks(sim)
    records: Records = [
        {"instance_id": m.instance_id, "split_idx": k, "im2txt_rank": float(a), "txt2im_rank": float(b),
         "score": float(sim[i, i])}
        for i, (m, a, b) in enumerate(zip(members, im2txt, txt2im))
    ]
    for i, record in enumerate(records[:TOP_PER_CHUNK]):  # for the report's examples and the samples page
        top = [members[int(j)] for j in np.argsort(-sim[i], kind="stable")[:3]]
        record["top_inferences"] = [m.inference for m in top]
        record["top_inference_ids"] = [m.instance_id for m in top]
    return records


class RetrievalTask(SherlockTask):
    """Per validation chunk: im->txt and txt->im mean rank and P@1, averaged over chunks.
    Chance: a mean rank of (n + 1) / 2 and a P@1 of 100 / n in a chunk of n, averaged over
    chunks (declared per run, since it depends on the chunks' sizes). ``--limit`` counts chunks."""

    dataset = "sherlock"
    limit_unit = "chunks"
    metric_info: dict[str, MetricInfo] = {
        "im2txt": lower(1.0), "txt2im": lower(1.0), "p_at_1": percent(),
        "chunks": COUNT, "instances": COUNT, "chance_mean_rank": reference(1.0),
    }

    def example_id(self, example: SherlockInstance) -> str:
        return example.instance_id

    def select(self, examples: Sequence[SherlockInstance], limit: int) -> list[SherlockInstance]:
        """The instances of the first ``limit`` chunks (by ``split_idx``)."""
        kept = set(sorted({e.split_idx for e in examples}, key=lambda k: -1 if k is None else k)[:limit])
        return [e for e in examples if e.split_idx in kept]

    def plan(self, examples: Sequence[SherlockInstance], run: RunInfo) -> list[Stage]:
        require_val(run.split)
        chunks = _chunks(examples)
        units: list[tuple[str, Chunk]] = [(f"chunk-{k}", (k, chunks[k])) for k in sorted(chunks)]
        return [Stage("retrieval", Custom(units, score_chunk, SCORES))]

    def finish(self, examples: Sequence[SherlockInstance], records: Mapping[str, Records], run: RunInfo) -> Evaluation:
        ranked = records["retrieval"]
        per_chunk: dict[int, dict[str, float]] = {}
        for k in sorted({r["split_idx"] for r in ranked}):
            rows = [r for r in ranked if r["split_idx"] == k]
            values = metrics.retrieval_metrics(np.array([r["im2txt_rank"] for r in rows]),
                                               np.array([r["txt2im_rank"] for r in rows]))
            per_chunk[k] = {**values, "n": len(rows)}
        names = ("im2txt", "txt2im", "p_at_1")
        result: dict[str, Any] = {n: float(np.mean([c[n] for c in per_chunk.values()])) for n in names}
        result.update(chunks=len(per_chunk), instances=len(ranked),
                      chance_mean_rank=float(np.mean([(c["n"] + 1) / 2 for c in per_chunk.values()])))
        details = {"per_chunk": {str(k): v for k, v in per_chunk.items()},
                   "histograms": ["im2txt_rank", "txt2im_rank"],
                   "examples": _examples(examples, ranked)}
        rank, p1 = result["chance_mean_rank"], float(np.mean([100.0 / c["n"] for c in per_chunk.values()]))
        chance = {"im2txt": lower(1.0, chance=rank), "txt2im": lower(1.0, chance=rank), "p_at_1": percent(chance=p1)}
        images = {e.instance_id: e.image_url for e in examples}
        return Evaluation(result, ranked, [], details, chance, units=_retrieval_units(ranked, per_chunk, images))

    def view(self, record: Mapping[str, Any], examples: Mapping[str, SherlockInstance]) -> dict[str, Any] | None:
        """samples.html: the image with the clue's region drawn, the clue, the gold inference,
        the gold's ranks (right: ranked first among its chunk's inferences), the model's top three."""
        inst = examples.get(str(record.get("instance_id")))
        if inst is None:
            return None
        boxes = [[b.left, b.top, b.width, b.height, "clue"] for b in inst.region.boxes] if inst.region else []
        texts = [{"label": "clue", "text": inst.clue}, {"label": "gold inference", "text": inst.inference}]
        texts += [{"label": f"model's #{i + 1}" + (" (gold)" if tid == inst.instance_id else ""),
                   "text": examples[tid].inference if tid in examples else tid}
                  for i, tid in enumerate(record.get("top_inference_ids") or [])]
        return {"id": inst.instance_id, "images": [{"path": inst.image_path, "boxes": boxes, "size": [inst.width, inst.height]}],
                "texts": texts, "correct": record.get("im2txt_rank") == 1.0, "category": f"chunk {inst.split_idx}"}

    def score_files(self, predictions: Path, answer_key: Path, instance_ids: Path | None = None) -> dict[str, float]:
        key = RetrievalKey.read(answer_key)
        scores = load_predictions(predictions, set(key.test_ids), instance_ids)
        return key.score(scores)


TOP_PER_CHUNK = 20  # the instances of each chunk whose top three inferences predictions.jsonl keeps
EXAMPLES = 4


def _pick(candidates: Sequence[dict[str, Any]], right: Callable[[dict[str, Any]], bool]) -> list[dict[str, Any]]:
    """Up to ``EXAMPLES`` records, half right and half wrong where both exist, in their order."""
    wins = [c for c in candidates if right(c)]
    losses = [c for c in candidates if not right(c)]
    half = EXAMPLES // 2
    chosen = wins[: max(half, EXAMPLES - len(losses))] + losses[: max(half, EXAMPLES - len(wins))]
    return sorted(chosen, key=lambda c: candidates.index(c))[:EXAMPLES]


def _examples(instances: Sequence[SherlockInstance], records: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """report.html's qualitative examples: the image with the clue's region drawn, the gold
    inference, whether the model ranked it first, and the three it ranked highest."""
    by_id = {inst.instance_id: inst for inst in instances}
    out: list[dict[str, Any]] = []
    for record in _pick([r for r in records if "top_inference_ids" in r], lambda r: r["im2txt_rank"] == 1.0):
        inst = by_id[record["instance_id"]]
        boxes = [[b.left, b.top, b.width, b.height] for b in inst.region.boxes] if inst.region is not None else []
        lines = [f"gold: {inst.inference}"]
        lines += [f"#{i + 1}{' (gold)' if tid == inst.instance_id else ''}: {text}"
                  for i, (tid, text) in enumerate(zip(record["top_inference_ids"], record["top_inferences"]))]
        out.append({"image": inst.image_path, "boxes": boxes, "correct": record["im2txt_rank"] == 1.0,
                    "title": f"clue: {inst.clue} — gold ranked {record['im2txt_rank']:g}", "lines": lines})
    return out


# -- localization ---------------------------------------------------------------------------
def score_image(models: RunModels, image: LocalizationImage) -> Records:
    """One image's rows scored: the GT boxes' accuracy under the lapjv assignment (box i gets
    inference ``assignment[i]``) and the auto boxes' accuracy and oracle."""
    scores = dict(zip(image.ids, models.require_scorer().score_rows(image.visuals, image.texts).tolist()))
    record: dict[str, Any] = {"image": image.image}
    if image.gt is not None:
        record.update(metrics.gt_result(image.gt.matrix(scores)).record())  # box i gets inference assignment[i]
        record["boxes"] = image.gt.size
    if image.auto is not None:
        record["auto_accuracy"], record["auto_oracle"] = auto_image(image.auto, scores)
    return [record]


class LocalizationTask(SherlockTask):
    """GT boxes (one-to-one lapjv assignment per image) and auto boxes (best proposal, IoU > 0.5).
    Chance for GT boxes: a random assignment of an image's n boxes gets 1/n of them right, so
    100 x the mean of 1/n over images; the auto-box oracle is a property of the proposals.
    ``--limit`` counts images."""

    dataset = "sherlock-localization"
    limit_unit = "images"
    metric_info: dict[str, MetricInfo] = {
        "gt_accuracy": percent(), "auto_accuracy": percent(), "auto_oracle": reference(0.0, 100.0), "images": COUNT,
    }

    def plan(self, examples: Sequence[LocalizationImage], run: RunInfo) -> list[Stage]:
        require_val(run.split)
        units = [(f"{i}:{u.image}", u) for i, u in enumerate(examples)]
        return [Stage("localization", Custom(units, score_image, SCORES))]

    def finish(self, examples: Sequence[LocalizationImage], records: Mapping[str, Records], run: RunInfo) -> Evaluation:
        scored = records["localization"]
        result: dict[str, Any] = {}
        for name in ("gt_accuracy", "auto_accuracy", "auto_oracle"):
            values = [r[name] for r in scored if name in r]
            if values:
                result[name] = metrics.macro_percent(values)
        result["images"] = len(scored)
        boxes = [r["boxes"] for r in scored if "boxes" in r]
        chance = {"gt_accuracy": percent(chance=metrics.macro_percent([1.0 / b for b in boxes]))} if boxes else {}
        ids = _unique([str(r["image"]) for r in scored])
        per_image: dict[str, UnitScores] = {name: UnitScores.means("image", {i: r[name] for i, r in zip(ids, scored)})
                                            for name in ("gt_accuracy", "auto_accuracy") if name in result and all(name in r for r in scored)}
        source = "/".join(sorted({u.source for u in examples})) or "none"
        details = {"source": source, **_localization_plots(scored), "examples": _localization_examples(examples, scored),
                   **precision.summary(scored, "gt_accuracy", precision.GT_LOSS, "sherlock-localization")}
        return Evaluation(result, scored, [], details, chance, units=per_image)

    def view(self, record: Mapping[str, Any], examples: Mapping[str, LocalizationImage]) -> dict[str, Any] | None:
        """samples.html: the image with every GT box, each labelled with the box whose inference it got."""
        image = examples.get(str(record.get("image")))
        if image is None or image.gt is None:
            return None
        return localization_view(image.gt, dict(zip(image.ids, image.visuals)), dict(zip(image.ids, image.texts)), record)

    def score_files(self, predictions: Path, answer_key: Path, instance_ids: Path | None = None) -> dict[str, float]:
        key = LocalizationKey.read(answer_key)
        scores = load_predictions(predictions, key.test_ids, instance_ids)
        return key.score(scores, str(predictions))


def _localization_plots(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """report.html's plots: accuracy by how many boxes an image has (more boxes, harder), and
    the per-image accuracies' histograms."""
    by_boxes: dict[str, dict[str, float]] = {}
    for n in sorted({int(r["boxes"]) for r in records if "boxes" in r}):
        values = [r["gt_accuracy"] for r in records if r.get("boxes") == n]
        by_boxes[f"{n} boxes"] = {"gt_accuracy": metrics.macro_percent(values), "n": len(values)}
    fields = [f for f in ("gt_accuracy", "auto_accuracy") if any(f in r for r in records)]
    return {"by_boxes": by_boxes, "histograms": fields} if by_boxes else {"histograms": fields}


def _localization_examples(units: Sequence[LocalizationImage], records: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """report.html's examples: an image with every GT box numbered, and the inference the
    model's assignment gave each box, marked right when it is the box's own."""
    by_image = {str(r["image"]): r for r in records if "assignment" in r}
    shown = [(u, by_image[u.image]) for u in units if u.gt is not None and u.image in by_image]
    out = []
    for record in _pick([r for _, r in shown], lambda r: r["gt_accuracy"] == 1.0):
        unit = next(x for x, r in shown if r is record)
        assert unit.gt is not None
        where = {unit.gt.cells[t]: k for k, t in enumerate(unit.ids) if t in unit.gt.cells}
        first = unit.visuals[0]
        boxes, lines = [], []
        for i, j in enumerate(record["assignment"]):
            region = unit.visuals[where[(i, i)]].region
            boxes += [[b.left, b.top, b.width, b.height, str(i + 1)] for b in (region.boxes if region else ())]
            lines.append(f"box {i + 1} {'✓' if i == j else '✗'} {unit.texts[where[(i, j)]]}")
        out.append({"image": first.media, "boxes": boxes, "correct": record["gt_accuracy"] == 1.0, "lines": lines,
                    "title": f"{record['boxes']} boxes, {100 * record['gt_accuracy']:.0f}% assigned their own inference"})
    return out


# -- comparison -----------------------------------------------------------------------------
def score_sources(models: RunModels, batch: Sequence[ComparisonExample]) -> Records:
    """A group of sources scored together: each source's agreement with the annotators and its
    candidates' scores, in annotation order."""
    rows = [row for example in batch for row in example.candidates]
    scored = models.require_scorer().score_rows([r.visual for r in rows], [r.inference for r in rows]).tolist()
    scores = dict(zip([r.test_id for r in rows], scored))
    return [{"source": e.source.input_iid, "candidates": len(e.source.candidates), **source_result(e.source, scores),
             "scores": [scores[t] for t, _, _ in e.source.candidates]} for e in batch]


class ComparisonTask(SherlockTask):
    """Pairwise accuracy against two annotators' Likert judgments, with human and oracle figures.
    Each candidate row shows its source's image and region with the source's clue (``Input_iid``).
    The accuracy is chance-corrected, (share of pairs ordered like the annotator - 0.5) x 2 x 100:
    random is 0, the range -100..100. ``--limit`` counts sources."""

    dataset = "sherlock-comparison"
    limit_unit = "source instances"
    metric_info: dict[str, MetricInfo] = {
        "accuracy": higher(-100.0, 100.0, chance=0.0), "human": reference(-100.0, 100.0),
        "oracle": reference(-100.0, 100.0), "sources": COUNT,
    }

    sources_per_unit = 8

    def plan(self, examples: Sequence[ComparisonExample], run: RunInfo) -> list[Stage]:
        require_val(run.split)
        size = self.sources_per_unit
        batches = [list(examples[i : i + size]) for i in range(0, len(examples), size)]
        return [Stage("comparison", Custom([(b[0].source.input_iid, b) for b in batches], score_sources, SCORES))]

    def finish(self, examples: Sequence[ComparisonExample], records: Mapping[str, Records], run: RunInfo) -> Evaluation:
        scored = records["comparison"]
        result: dict[str, Any] = {n: metrics.macro_percent([r[n] for r in scored]) for n in ("accuracy", "human", "oracle")}
        result["sources"] = len(scored)
        units = {"accuracy": UnitScores.means("comparison source", {r["source"]: r["accuracy"] for r in scored})}
        details = {"histograms": ["accuracy"], "examples": _comparison_examples(examples, scored),
                   **precision.summary(scored, "accuracy", precision.COMPARISON_LOSS, "sherlock-comparison")}
        return Evaluation(result, scored, [], details, units=units)

    def view(self, record: Mapping[str, Any], examples: Mapping[str, ComparisonExample]) -> dict[str, Any] | None:
        """samples.html: the source's image, region and clue, its candidates with scores and ratings."""
        example = examples.get(str(record.get("source")))
        if example is None:
            return None
        rows = example.rows
        return comparison_view(example.source, {t: r.visual for t, r in rows.items()},
                               {t: r.inference for t, r in rows.items()}, record)

    def score_files(self, predictions: Path, answer_key: Path, instance_ids: Path | None = None) -> dict[str, float]:
        key = ComparisonKey.read(answer_key)
        scores = load_predictions(predictions, key.test_ids, instance_ids)
        return key.score(scores, str(predictions))


def _comparison_examples(examples: Sequence[ComparisonExample], records: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """report.html's examples: a source's image and region, and its candidate inferences in
    the model's order with the two annotators' ratings (the model agrees with them when its
    order follows theirs)."""
    by_source = {e.source.input_iid: e for e in examples}
    out = []
    for record in _pick([r for r in records if "scores" in r and r["source"] in by_source], lambda r: r["accuracy"] > 0):
        example = by_source[record["source"]]
        source, rows = example.source, example.rows
        ranked = sorted(zip(record["scores"], source.candidates), key=lambda c: -c[0])
        visual = rows[source.candidates[0][0]].visual
        boxes = [[b.left, b.top, b.width, b.height] for b in visual.region.boxes] if visual.region else []
        lines = [f"model {score:.3g} · annotators {a:g}/{b:g}: {rows[tid].inference}" for score, (tid, a, b) in ranked]
        out.append({"image": visual.media, "boxes": boxes, "lines": lines,
                    "title": f"clue: {example.clue} — agreement {100 * record['accuracy']:.0f} "
                             f"(annotators with each other {100 * record['human']:.0f})"})
    return out


# -- generation (abduct's own task) ----------------------------------------------------------
CAPTION_METRICS: dict[str, dict[str, Any]] = {"bleu": {}, "cider": {}, "rouge-l": {}, "meteor": {}}
# The figures the task reports, from the metrics' corpus values (score_generations' keys).
REPORTED = {"bleu4": "bleu.bleu_4", "cider": "cider", "rouge_l": "rouge-l", "meteor": "meteor"}
GENERATION_INFO: dict[str, MetricInfo] = {
    "bleu4": TEXT_METRICS["bleu_4"], "cider": TEXT_METRICS["cider"], "rouge_l": TEXT_METRICS["rouge_l"],
    "meteor": TEXT_METRICS["meteor"], "instances": COUNT,
    **{f"bertscore.{key}": info for key, info in TEXT_METRICS.items() if key.startswith("bertscore")},
}


def generation_units(results: Mapping[str, MetricResult]) -> dict[str, UnitScores]:
    """Per-instance data of the reported figures: BLEU-4 from its n-gram statistics, CIDEr-D,
    ROUGE-L and BERTScore from their per-instance values (their corpus values are the means).
    METEOR gets none: pycocoevalcap's corpus METEOR is METEOR's own aggregate over the pooled
    alignment statistics, not a mean of sentence scores, and is not recomputed from them."""
    out: dict[str, UnitScores] = {}
    if "bleu" in results and "bleu_statistics" in results["bleu"].info:
        # x100, the scale of every text metric (TEXT_METRICS)
        out["bleu4"] = UnitScores.corpus("instance", "bleu-4", results["bleu"].info["bleu_statistics"], 100.0)
    means = [("cider", "cider", "cider"), ("rouge_l", "rouge-l", "rouge_l"),
             *((f"bertscore.{key}", "bertscore", key) for key in ("bertscore_precision", "bertscore_recall",
                                                                  "bertscore_f1"))]
    for figure, metric, key in means:
        if metric in results:
            notes = results[metric].info.get("interval_notes", {})
            out[figure] = UnitScores.means("instance", {i: row[key] for i, row in results[metric].per_sample.items()},
                                           1.0, notes.get(key, ""))
    return out


class GenerationTask(SherlockTask):
    """Generate the inference of each validation observation from its (image, region, clue)
    and score it against the annotated inference: BLEU-4, CIDEr-D, ROUGE-L, METEOR (and
    BERTScore when given a local model directory). abduct's own task: the Sherlock paper
    evaluates no generation. Generators that choose rather than write (``random``) pick from
    the training split's inferences (the dataset's pool, when the training file is there)."""

    dataset = "sherlock-generation"
    limit_unit = "instances"
    items_per_unit = 16  # generated, then stored together (the resume granularity)
    metric_info = GENERATION_INFO

    def __init__(self, *, prompt: str | None = None, bertscore_model: Path | None = None,
                 bertscore_layers: int | None = None) -> None:
        self.prompt = prompt
        self.bertscore_model = bertscore_model
        self.bertscore_layers = bertscore_layers

    def metrics(self) -> dict[str, dict[str, Any]]:
        chosen = dict(CAPTION_METRICS)
        if self.bertscore_model is not None:
            options: dict[str, Any] = {"model": str(self.bertscore_model)}
            if self.bertscore_layers is not None:
                options["num_layers"] = self.bertscore_layers
            chosen["bertscore"] = options
        return chosen

    def plan(self, examples: Sequence[GenerationExample], run: RunInfo) -> list[Stage]:
        require_val(run.split)
        items = [GenerationItem(e.instance.instance_id, GenerationRequest(e.instance.visual, self.prompt),
                                (e.instance.inference,)) for e in examples]
        pool = examples[0].pool if examples else None  # the same pool on every example
        return [Stage("generation", Generate(items, pool, per_unit=self.items_per_unit))]

    def finish(self, examples: Sequence[GenerationExample], records: Mapping[str, Records], run: RunInfo) -> Evaluation:
        generated = records["generation"]
        results: dict[str, MetricResult] = {}
        values = score_generations(run, generated, self.metrics(), keep=results)
        result: dict[str, Any] = {name: values[key] for name, key in REPORTED.items()}
        result.update({k: v for k, v in values.items() if k.startswith("bertscore")})
        result["instances"] = len(generated)
        return Evaluation(result, generated, [], {"metrics": values}, units=generation_units(results))

    def score_files(self, predictions: Path, answer_key: Path, instance_ids: Path | None = None) -> dict[str, float]:
        raise AbductError("sherlock-generation has no official format (it is abduct's own task); "
                          "score generated texts with `abduct metric NAME --predictions P --references R`")


# -- factories (abduct's one shape: factory(spec, settings, *, options)) ----------------------
def make_retrieval(spec: Spec, settings: Settings) -> RetrievalTask:
    return RetrievalTask()


def make_localization(spec: Spec, settings: Settings) -> LocalizationTask:
    return LocalizationTask()


def make_comparison(spec: Spec, settings: Settings) -> ComparisonTask:
    return ComparisonTask()


def make_generation(spec: Spec, settings: Settings, *, prompt: str | None = None,
                    bertscore_model: Path | None = None, bertscore_layers: int | None = None) -> GenerationTask:
    """``sherlock-generation[,prompt=TEXT][,bertscore_model=DIR][,bertscore_layers=N]``: BERTScore is
    added only with a local model directory (it needs weights; nothing is downloaded)."""
    if bertscore_model is not None and not Path(bertscore_model).is_dir():
        raise AbductError(f"sherlock-generation: bertscore_model {bertscore_model} is not a directory "
                          "(a local Hugging Face model, e.g. roberta-large)")
    return GenerationTask(prompt=prompt, bertscore_model=bertscore_model, bertscore_layers=bertscore_layers)
