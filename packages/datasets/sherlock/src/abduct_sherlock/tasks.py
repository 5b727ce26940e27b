"""The Sherlock tasks: retrieval, localization and comparison (the paper's three), and
generation (abduct's own: the paper evaluates no generation).

Each evaluates a scorer on a data directory in the released layout (``layout.py``) through
the runner's resumable units and computes its metrics from the stored per-unit records, and
scores official-format prediction files (``score_files``) exactly like the leaderboard.

Every input is the image, the clue's region and the clue as context (``SherlockInstance.visual``).
The leaderboard instance files carry no clue, so their rows are joined to the validation
annotation file by instance id: a comparison row gets the clue of its source (``Input_iid``),
a GT localization row the clue of the instance whose box it is. Auto-box rows are detector
proposals, which no annotator described: they have no clue (no context). An instance id
missing from the annotation file is an error (one line), never a silent input without a clue.
Which of these inputs a model may go without is ``records.OPTIONAL_INPUTS``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from abduct import (
    COUNT,
    TEXT_METRICS,
    AbductError,
    Evaluation,
    GenerationRequest,
    MetricInfo,
    MetricResult,
    Region,
    RunContext,
    Settings,
    Spec,
    TextPool,
    UnitScores,
    VisualInput,
    higher,
    lower,
    percent,
    reference,
)
from abduct.kit import GenerationItem, generate, score_generations
from abduct_sherlock import metrics
from abduct_sherlock.build import group_by_image, region_iou
from abduct_sherlock.keys import (
    AutoImage,
    ComparisonKey,
    ComparisonSource,
    GTImage,
    LocalizationKey,
    RetrievalKey,
    auto_image,
    source_result,
)
from abduct_sherlock.layout import AUTOBOX_FILE, ImageRoots, annotation_file, leaderboard_files
from abduct_sherlock.leaderboard import LeaderboardRow, read_instances
from abduct_sherlock.loader import load_instances
from abduct_sherlock.predictions import load_predictions
from abduct_sherlock.records import OPTIONAL_INPUTS, SherlockInstance
from abduct_sherlock.views import comparison_view, localization_view

DATASET = "sherlock"  # the registered dataset, so that its options (--dataset sherlock,vg_root=...) apply


def _check_split(run: RunContext) -> None:
    if run.split != "val":
        raise AbductError(f"Sherlock tasks evaluate the validation split (public answer keys), not '{run.split}'")


class Clues:
    """The clue of each instance of a split's annotation file, for joining leaderboard rows."""

    def __init__(self, data_dir: Path, split: str) -> None:
        self.file = annotation_file(data_dir, split)
        self.by_id = {inst.instance_id: inst.clue for inst in load_instances(data_dir, split)}

    def of(self, instance_id: str, source: Path) -> str:
        clue = self.by_id.get(instance_id)
        if clue is None:
            raise AbductError(f"{source}: instance {instance_id} is not in {self.file.name}, "
                              "so its clue (the model's context) cannot be found")
        return clue

    def visual(self, visual: VisualInput, instance_id: str, source: Path) -> VisualInput:
        """``visual`` with the clue of ``instance_id`` as its context."""
        return replace(visual, context=self.of(instance_id, source))


class SherlockTask:
    """What the three tasks share: the validation split, and the inputs a model may go without."""

    default_split = "val"
    optional_inputs = OPTIONAL_INPUTS


def _unique(ids: list[str]) -> list[str]:
    """Unit ids as given, numbered only when one repeats (so they still pair across runs)."""
    return ids if len(set(ids)) == len(ids) else [f"{i}:{x}" for i, x in enumerate(ids)]


def _retrieval_units(records: Sequence[dict[str, Any]], per_chunk: dict[int, dict[str, float]]) -> dict[str, UnitScores]:
    """Retrieval's figures are means over chunks of means over a chunk's instances: an
    instance weighs N / (K n_k) (N instances, K chunks, n_k in its chunk), so that the plain
    mean of the weighted values is the official figure. Resampling instances with these
    weights approximates resampling each chunk on its own (chunks hold ~1,000 instances)."""
    weight = {k: len(records) / (len(per_chunk) * c["n"]) for k, c in per_chunk.items()}
    ids = [f"{r['split_idx']}:{r['instance_id']}" for r in records]
    unit = "retrieval instance (weighted within its chunk)"

    def weighted(value: Callable[[dict[str, Any]], float], scale: float) -> UnitScores:
        return UnitScores.means(unit, {i: weight[r["split_idx"]] * value(r) for i, r in zip(ids, records)}, scale)

    return {"im2txt": weighted(lambda r: r["im2txt_rank"], 1.0), "txt2im": weighted(lambda r: r["txt2im_rank"], 1.0),
            "p_at_1": weighted(lambda r: float(r["im2txt_rank"] == 1.0), 100.0)}


class RetrievalTask(SherlockTask):
    """Per validation chunk: im->txt and txt->im mean rank and P@1, averaged over chunks.
    Chance: a mean rank of (n + 1) / 2 and a P@1 of 100 / n in a chunk of n, averaged over
    chunks (declared per run, since it depends on the chunks' sizes)."""

    metric_info: dict[str, MetricInfo] = {
        "im2txt": lower(1.0), "txt2im": lower(1.0), "p_at_1": percent(),
        "chunks": COUNT, "instances": COUNT, "chance_mean_rank": reference(1.0),
    }

    _seen: dict[str, SherlockInstance] = {}  # what the last run evaluated, for sample_view

    def sample_view(self, record: Mapping[str, Any]) -> dict[str, Any] | None:
        """samples.html: the image with the clue's region drawn, the clue, the gold inference,
        the gold's ranks (right: ranked first among its chunk's inferences), the model's top three."""
        inst = self._seen.get(str(record.get("instance_id")))
        if inst is None:
            return None
        boxes = [[b.left, b.top, b.width, b.height, "clue"] for b in inst.region.boxes] if inst.region else []
        texts = [{"label": "clue", "text": inst.clue}, {"label": "gold inference", "text": inst.inference}]
        texts += [{"label": f"model's #{i + 1}" + (" (gold)" if tid == inst.instance_id else ""),
                   "text": self._seen[tid].inference if tid in self._seen else tid}
                  for i, tid in enumerate(record.get("top_inference_ids") or [])]
        return {"id": inst.instance_id, "images": [{"path": inst.image_path, "boxes": boxes, "size": [inst.width, inst.height]}],
                "texts": texts, "correct": record.get("im2txt_rank") == 1.0, "category": f"chunk {inst.split_idx}"}

    def evaluate(self, run: RunContext) -> Evaluation:
        _check_split(run)
        engine = run.require_scorer()
        instances = run.dataset(DATASET).load(run.data_dir, run.split)
        self._seen = {inst.instance_id: inst for inst in instances}
        chunks: dict[int, list[SherlockInstance]] = {}
        for inst in instances:
            assert inst.split_idx is not None
            chunks.setdefault(inst.split_idx, []).append(inst)
        units = run.apply_limit([(f"chunk-{k}", (k, chunks[k])) for k in sorted(chunks)], "chunks")

        def score_chunk(payload: tuple[int, list[SherlockInstance]]) -> list[dict[str, Any]]:
            k, members = payload
            sim = engine.score_matrix([m.visual for m in members], [m.inference for m in members])
            im2txt, txt2im = metrics.diagonal_ranks(sim)
            records = [
                {"instance_id": m.instance_id, "split_idx": k, "im2txt_rank": float(a), "txt2im_rank": float(b),
                 "score": float(sim[i, i])}
                for i, (m, a, b) in enumerate(zip(members, im2txt, txt2im))
            ]
            for i, record in enumerate(records[:TOP_PER_CHUNK]):  # for the report's examples and the samples page
                top = [members[int(j)] for j in np.argsort(-sim[i], kind="stable")[:3]]
                record["top_inferences"] = [m.inference for m in top]
                record["top_inference_ids"] = [m.instance_id for m in top]
            return records

        records = run.map_units("retrieval", units, score_chunk)
        per_chunk: dict[int, dict[str, float]] = {}
        for k in sorted({r["split_idx"] for r in records}):
            rows = [r for r in records if r["split_idx"] == k]
            values = metrics.retrieval_metrics(np.array([r["im2txt_rank"] for r in rows]),
                                               np.array([r["txt2im_rank"] for r in rows]))
            per_chunk[k] = {**values, "n": len(rows)}
        names = ("im2txt", "txt2im", "p_at_1")
        result: dict[str, Any] = {n: float(np.mean([c[n] for c in per_chunk.values()])) for n in names}
        result.update(chunks=len(per_chunk), instances=len(records),
                      chance_mean_rank=float(np.mean([(c["n"] + 1) / 2 for c in per_chunk.values()])))
        details = {"per_chunk": {str(k): v for k, v in per_chunk.items()},
                   "histograms": ["im2txt_rank", "txt2im_rank"],
                   "examples": _examples(instances, records)}
        rank, p1 = result["chance_mean_rank"], float(np.mean([100.0 / c["n"] for c in per_chunk.values()]))
        chance = {"im2txt": lower(1.0, chance=rank), "txt2im": lower(1.0, chance=rank), "p_at_1": percent(chance=p1)}
        return Evaluation(result, records, [annotation_file(run.data_dir, run.split)], details, chance,
                          units=_retrieval_units(records, per_chunk))

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
class _ImageUnit:
    """One image's GT and auto-box rows to score, with how to read the accuracies off them."""

    def __init__(self, image: str) -> None:
        self.image = image
        self.visuals: list[VisualInput] = []
        self.texts: list[str] = []
        self.ids: list[str] = []
        self.gt: GTImage | None = None
        self.auto: AutoImage | None = None

    def add(self, tid: str, visual: VisualInput, text: str) -> None:
        self.ids.append(tid)
        self.visuals.append(visual)
        self.texts.append(text)


def _units_from_leaderboard(data_dir: Path, split: str, files: dict[str, Path]) -> list[_ImageUnit]:
    """GT rows get the clue of the instance whose box they show (``inst_id`` of the key's
    correct row for that ``bbox_idx``); auto rows (proposals) get none."""
    key = LocalizationKey.read(files["answer_key"])
    rows = {r.test_id: r for r in read_instances(files["instances"], ImageRoots.for_data_dir(data_dir))}
    clues = Clues(data_dir, split) if key.gt else None
    units: dict[str, _ImageUnit] = {}

    def unit(image: str) -> _ImageUnit:
        return units.setdefault(image, _ImageUnit(image))

    def row(tid: str) -> LeaderboardRow:
        if tid not in rows:
            raise AbductError(f"{files['instances']}: test id {tid} of the answer key has no instance row")
        return rows[tid]

    for g in key.gt:
        assert clues is not None
        u = unit(g.image)
        u.gt = g
        for tid, (box, _) in g.cells.items():
            r = row(tid)
            u.add(tid, clues.visual(r.visual, g.box_owners[box], files["answer_key"]), r.inference)
    for a in key.auto:
        u = unit(a.image)
        u.auto = a
        for entries in a.inferences.values():
            for tid, _ in entries:
                r = row(tid)
                u.add(tid, r.visual, r.inference)
    return list(units.values())


def _units_from_annotations(data_dir: Path, split: str,
                            instances: Sequence[SherlockInstance] | None = None) -> list[_ImageUnit]:
    """GT rows from the annotation file (every box x every inference of an image) and, when
    ``sherlock_val_autoboxes.json`` exists, auto rows (every proposal x every inference)."""
    from abduct_sherlock.proposals import read_proposals

    if instances is None:
        instances = load_instances(data_dir, split)
    proposal_file = Path(data_dir) / AUTOBOX_FILE
    proposals = read_proposals(proposal_file) if proposal_file.is_file() else {}
    units = []
    for url, group in group_by_image(instances).items():
        u = _ImageUnit(url)
        u.gt = GTImage(url, len(group), box_owners={i: inst.instance_id for i, inst in enumerate(group)})
        for i, box_owner in enumerate(group):
            for j, inf_owner in enumerate(group):
                tid = f"gt/{i}/{j}"
                u.gt.cells[tid] = (i, j)
                u.add(tid, box_owner.visual, inf_owner.inference)
        if proposals.get(url):
            u.auto = AutoImage(url)
            for j, inf_owner in enumerate(group):
                entries = u.auto.inferences.setdefault(inf_owner.instance_id, [])
                for p, box in enumerate(proposals[url]):
                    tid = f"auto/{p}/{j}"
                    entries.append((tid, region_iou(box, inf_owner.region)))
                    u.add(tid, VisualInput(inf_owner.image_path, Region((box,))), inf_owner.inference)
        units.append(u)
    return units


class LocalizationTask(SherlockTask):
    """GT boxes (one-to-one lapjv assignment per image) and auto boxes (best proposal, IoU > 0.5).
    Chance for GT boxes: a random assignment of an image's n boxes gets 1/n of them right, so
    100 x the mean of 1/n over images; the auto-box oracle is a property of the proposals."""

    metric_info: dict[str, MetricInfo] = {
        "gt_accuracy": percent(), "auto_accuracy": percent(), "auto_oracle": reference(0.0, 100.0), "images": COUNT,
    }
    _seen: dict[str, _ImageUnit] = {}  # what the last run evaluated, for sample_view

    def sample_view(self, record: Mapping[str, Any]) -> dict[str, Any] | None:
        """samples.html: the image with every GT box, each labelled with the box whose inference it got."""
        unit = self._seen.get(str(record.get("image")))
        if unit is None or unit.gt is None:
            return None
        return localization_view(unit.gt, dict(zip(unit.ids, unit.visuals)), dict(zip(unit.ids, unit.texts)), record)

    def evaluate(self, run: RunContext) -> Evaluation:
        _check_split(run)
        engine = run.require_scorer()
        files = leaderboard_files(run.data_dir, run.split, "localization")
        if files["answer_key"].is_file() and files["instances"].is_file():
            units = _units_from_leaderboard(run.data_dir, run.split, files)
            source = "leaderboard"
            data_files = [files["instances"], files["answer_key"], annotation_file(run.data_dir, run.split)]
        else:
            units = _units_from_annotations(run.data_dir, run.split, run.dataset(DATASET).load(run.data_dir, run.split))
            source, data_files = "annotations", [annotation_file(run.data_dir, run.split)]
            if (run.data_dir / AUTOBOX_FILE).is_file():
                data_files.append(run.data_dir / AUTOBOX_FILE)
        selected = run.apply_limit(units, "images")
        self._seen = {u.image: u for u in selected}

        def score_image(u: _ImageUnit) -> list[dict[str, Any]]:
            scores = dict(zip(u.ids, engine.score_rows(u.visuals, u.texts).tolist()))
            record: dict[str, Any] = {"image": u.image}
            if u.gt is not None:
                matrix = u.gt.matrix(scores)
                record["gt_accuracy"] = metrics.gt_accuracy(matrix)
                record["boxes"] = u.gt.size
                record["assignment"] = [int(j) for j in metrics.assignment(matrix)]  # box i -> inference j
            if u.auto is not None:
                record["auto_accuracy"], record["auto_oracle"] = auto_image(u.auto, scores)
            return [record]

        records = run.map_units("localization", [(f"{i}:{u.image}", u) for i, u in enumerate(selected)], score_image)
        result: dict[str, Any] = {}
        for name in ("gt_accuracy", "auto_accuracy", "auto_oracle"):
            values = [r[name] for r in records if name in r]
            if values:
                result[name] = metrics.macro_percent(values)
        result["images"] = len(records)
        boxes = [r["boxes"] for r in records if "boxes" in r]
        chance = {"gt_accuracy": percent(chance=metrics.macro_percent([1.0 / b for b in boxes]))} if boxes else {}
        ids = _unique([str(r["image"]) for r in records])
        per_image: dict[str, UnitScores] = {name: UnitScores.means("image", {i: r[name] for i, r in zip(ids, records)})
                                            for name in ("gt_accuracy", "auto_accuracy") if name in result and all(name in r for r in records)}
        details = {"source": source, **_localization_plots(records),
                   "examples": _localization_examples(selected, records)}
        return Evaluation(result, records, data_files, details, chance, units=per_image)

    def score_files(self, predictions: Path, answer_key: Path, instance_ids: Path | None = None) -> dict[str, float]:
        key = LocalizationKey.read(answer_key)
        scores = load_predictions(predictions, key.test_ids, instance_ids)
        return key.score(scores)


def _localization_plots(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """report.html's plots: accuracy by how many boxes an image has (more boxes, harder), and
    the per-image accuracies' histograms."""
    by_boxes: dict[str, dict[str, float]] = {}
    for n in sorted({int(r["boxes"]) for r in records if "boxes" in r}):
        values = [r["gt_accuracy"] for r in records if r.get("boxes") == n]
        by_boxes[f"{n} boxes"] = {"gt_accuracy": metrics.macro_percent(values), "n": len(values)}
    fields = [f for f in ("gt_accuracy", "auto_accuracy") if any(f in r for r in records)]
    return {"by_boxes": by_boxes, "histograms": fields} if by_boxes else {"histograms": fields}


def _localization_examples(units: Sequence[_ImageUnit], records: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
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
class ComparisonTask(SherlockTask):
    """Pairwise accuracy against two annotators' Likert judgments, with human and oracle figures.
    Each candidate row shows its source's image and region with the source's clue (``Input_iid``).
    The accuracy is chance-corrected, (share of pairs ordered like the annotator - 0.5) x 2 x 100:
    random is 0, the range -100..100."""

    metric_info: dict[str, MetricInfo] = {
        "accuracy": higher(-100.0, 100.0, chance=0.0), "human": reference(-100.0, 100.0),
        "oracle": reference(-100.0, 100.0), "sources": COUNT,
    }

    sources_per_unit = 8
    _seen: tuple[dict[str, ComparisonSource], dict[str, LeaderboardRow]] = ({}, {})  # for sample_view

    def sample_view(self, record: Mapping[str, Any]) -> dict[str, Any] | None:
        """samples.html: the source's image, region and clue, its candidates with scores and ratings."""
        sources, rows = self._seen
        source = sources.get(str(record.get("source")))
        if source is None:
            return None
        tids = [tid for tid, _, _ in source.candidates]
        return comparison_view(source, {t: rows[t].visual for t in tids}, {t: rows[t].inference for t in tids}, record)

    def evaluate(self, run: RunContext) -> Evaluation:
        _check_split(run)
        engine = run.require_scorer()
        files = leaderboard_files(run.data_dir, run.split, "comparison")
        key = ComparisonKey.read(files["answer_key"])
        read = {r.test_id: r for r in read_instances(files["instances"], ImageRoots.for_data_dir(run.data_dir))}
        clues = Clues(run.data_dir, run.split)
        rows: dict[str, LeaderboardRow] = {}
        for source in key.sources:
            for tid, _, _ in source.candidates:
                if tid not in read:
                    raise AbductError(f"{files['instances']}: test id {tid} of the answer key has no instance row")
                r = read[tid]
                rows[tid] = replace(r, visual=clues.visual(r.visual, source.input_iid, files["answer_key"]))
        sources = run.apply_limit(key.sources, "source instances")
        self._seen = ({s.input_iid: s for s in sources}, rows)
        batches = [sources[i : i + self.sources_per_unit] for i in range(0, len(sources), self.sources_per_unit)]

        def score_batch(batch: Sequence[Any]) -> list[dict[str, Any]]:
            tids = [t for s in batch for t, _, _ in s.candidates]
            chosen: list[LeaderboardRow] = [rows[t] for t in tids]
            scores = dict(zip(tids, engine.score_rows([r.visual for r in chosen], [r.inference for r in chosen]).tolist()))
            return [{"source": s.input_iid, "candidates": len(s.candidates), **source_result(s, scores),
                     "scores": [scores[t] for t, _, _ in s.candidates]} for s in batch]

        records = run.map_units("comparison", [(b[0].input_iid, b) for b in batches], score_batch)
        result: dict[str, Any] = {n: metrics.macro_percent([r[n] for r in records]) for n in ("accuracy", "human", "oracle")}
        result["sources"] = len(records)
        units = {"accuracy": UnitScores.means("comparison source", {r["source"]: r["accuracy"] for r in records})}
        details = {"histograms": ["accuracy"], "examples": _comparison_examples(sources, rows, records, clues)}
        return Evaluation(result, records, [files["instances"], files["answer_key"], clues.file], details, units=units)

    def score_files(self, predictions: Path, answer_key: Path, instance_ids: Path | None = None) -> dict[str, float]:
        key = ComparisonKey.read(answer_key)
        scores = load_predictions(predictions, key.test_ids, instance_ids)
        return key.score(scores)


def _comparison_examples(sources: Sequence[Any], rows: Mapping[str, LeaderboardRow],
                         records: Sequence[dict[str, Any]], clues: Clues) -> list[dict[str, Any]]:
    """report.html's examples: a source's image and region, and its candidate inferences in
    the model's order with the two annotators' ratings (the model agrees with them when its
    order follows theirs)."""
    by_source = {s.input_iid: s for s in sources}
    out = []
    for record in _pick([r for r in records if "scores" in r and r["source"] in by_source], lambda r: r["accuracy"] > 0):
        source = by_source[record["source"]]
        ranked = sorted(zip(record["scores"], source.candidates), key=lambda c: -c[0])
        visual = rows[source.candidates[0][0]].visual
        boxes = [[b.left, b.top, b.width, b.height] for b in visual.region.boxes] if visual.region else []
        lines = [f"model {score:.3g} · annotators {a:g}/{b:g}: {rows[tid].inference}" for score, (tid, a, b) in ranked]
        out.append({"image": visual.media, "boxes": boxes, "lines": lines,
                    "title": f"clue: {clues.by_id.get(source.input_iid, '')} — agreement {100 * record['accuracy']:.0f} "
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
        out["bleu4"] = UnitScores.corpus("instance", "bleu-4", results["bleu"].info["bleu_statistics"])
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
    the training split's inferences."""

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

    def evaluate(self, run: RunContext) -> Evaluation:
        _check_split(run)
        run.require_generator()
        dataset = run.dataset(DATASET)
        instances = run.apply_limit(dataset.load(run.data_dir, run.split), "instances")
        items = [GenerationItem(inst.instance_id, GenerationRequest(inst.visual, self.prompt), (inst.inference,))
                 for inst in instances]
        train_file = annotation_file(run.data_dir, "train")
        pool = None
        data_files = [annotation_file(run.data_dir, run.split)]
        if train_file.is_file():
            pool = TextPool.of([inst.inference for inst in dataset.load(run.data_dir, "train")])
            data_files.append(train_file)
        records = generate(run, "generation", items, pool, per_unit=self.items_per_unit)
        results: dict[str, MetricResult] = {}
        values = score_generations(run, records, self.metrics(), keep=results)
        result: dict[str, Any] = {name: values[key] for name, key in REPORTED.items()}
        result.update({k: v for k, v in values.items() if k.startswith("bertscore")})
        result["instances"] = len(records)
        return Evaluation(result, records, data_files, {"metrics": values}, units=generation_units(results))

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
