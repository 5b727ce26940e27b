"""``var``, ``var-explanation`` and ``var-premise``: generate, write the official submission, score it.

- ``var-explanation``: for each example, the masked hypothesis event's sentence from the chain
  of premise events (``inputs.chain_input``: the hypothesis slot carries only a mask);
- ``var-premise``: each premise event's sentence from that event's frames (``inputs.event_input``);
- ``var``: both, one submission with every counted event (the eval kit's full setting; its
  metrics add the ``observed_*`` and ``hypothesis_*`` sets).

Each reads the ``var`` dataset (``dataset.VarDataset``: its ``videos=DIR`` option says where the
videos are) and plans one ``Generate`` stage, named ``all``, ``hypothesis`` or ``premise`` after
the events it generates, in units of 8 events; ``finish`` builds ``submission.json`` in the eval
kit's format (an ``Evaluation`` artifact, written beside results.json) and computes the metrics
from exactly those entries with the official scorer (``scoring.py``), so ``abduct score var
--predictions OUT/submission.json`` gives the same numbers. The ``TextPool`` offered to choosing
generators (``random``) is the dataset's pool: the training split's sentences, or, without a
training file (the public release has val and test only here), the evaluated split's own.
With ``frames`` (the default), a ``frames`` stage (a Custom step) draws a frame strip per event
of the evaluated chains (``_strips``; ``details["frame_strips"]`` says how many and the seconds
they took), kept in the run's cache (``RunModels.cache_dir``), and samples.html (``view``) shows
them for each event's chain.
Breakdowns: ``details["per_position"]`` (mean per-event CIDEr-D ×100 by event position in the
chain) and ``details["by_position"]`` (METEOR, ROUGE-L, CIDEr-D and n by position), plus
``details["by_videos"]`` (single- or multi-video chains).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any, Literal

from abduct import (
    COUNT,
    TEXT_METRICS,
    AbductError,
    Custom,
    Evaluation,
    Generate,
    Generated,
    GenerationItem,
    GenerationRequest,
    Records,
    RunInfo,
    RunModels,
    ScoreContext,
    Settings,
    Spec,
    Stage,
    TextPool,
)
from abduct_var import _strips
from abduct_var.inputs import DESCRIBE_PROMPT, EXPLAIN_PROMPT, chain_input, event_file, event_input
from abduct_var.records import SentencePool, VarEvent, VarExample
from abduct_var.scoring import KEYS, BertScoreSettings, breakdown, event_key, score_entries, score_sets
from abduct_var.submission import Entry, build_submission, load_submission
from abduct_var.views import event_view

Part = Literal["all", "hypothesis", "premise"]
SUBMISSION = "submission.json"
FRAMES_STAGE = "frames"
STRIPS_PER_UNIT = 256  # events drawn per unit of the frames stage (one frame sampler each)


def text_pool(examples: Sequence[VarExample], split: str) -> tuple[TextPool, str]:
    """The pool the dataset gave ``examples`` (the training sentences, else the split's own), and
    its split; for examples read without it, the sentences of ``examples``, of ``split``."""
    shared = next((x.pool for x in examples if x.pool is not None), None)
    if shared is None:
        shared = SentencePool(split, tuple(e.sentence.strip() for x in examples for e in x.counted))
    return TextPool.of(shared.sentences), shared.split


def items_for(examples: Sequence[VarExample], part: Part) -> list[tuple[GenerationItem, int, bool]]:
    """(item, position, is_hypothesis) for every event ``part`` generates, in chain order."""
    out = []
    for x in examples:
        for i, event in enumerate(x.counted):
            hypothesis = i == x.hypothesis
            if part == "hypothesis" and not hypothesis or part == "premise" and hypothesis:
                continue
            if hypothesis:
                request = GenerationRequest(chain_input(x, None, masked=i), EXPLAIN_PROMPT)
            else:
                request = GenerationRequest(event_input(event), DESCRIBE_PROMPT)
            out.append((GenerationItem(f"{x.id}#{i}", request, (event.sentence,)), i, hypothesis))
    return out


def video_clusters(examples: Sequence[VarExample]) -> dict[str, str]:
    """Each example's cluster for the intervals: its video, joined with every other example that
    shares one (a chain of several videos links theirs), named by the cluster's smallest video id."""
    parent: dict[str, str] = {}

    def root(video: str) -> str:
        while parent.setdefault(video, video) != video:
            video = parent[video]
        return video

    for example in examples:
        for video in example.video_ids[1:]:
            low, high = sorted((root(example.video_ids[0]), root(video)))
            parent[high] = low
    return {x.id: root(x.video_ids[0]) for x in examples}


def frames_stage(examples: Sequence[VarExample]) -> Stage:
    """Draw a strip per distinct event of ``examples``, the first ``MAX_STRIPS`` of them."""
    events = list(dict.fromkeys((event_file(e), e.span) for x in examples for e in x.counted))[: _strips.MAX_STRIPS]
    units = [(f"{_strips.PROCESS}-{start // STRIPS_PER_UNIT}", tuple(events[start:start + STRIPS_PER_UNIT]))
             for start in range(0, len(events), STRIPS_PER_UNIT)]
    return Stage(FRAMES_STAGE, Custom(units, draw_strips))


def draw_strips(models: RunModels, events: tuple[_strips.Event, ...]) -> Records:
    """The frames stage's step: the strips of ``events`` in the run's cache (``var-frames``) and
    the page folder; one record: how many events, how many strips, the seconds it took."""
    started = time.perf_counter()
    cache = models.cache_dir / "var-frames" if models.cache_dir is not None else None
    drawn = _strips.draw_for_page(events, cache)
    return [{"events": len(events), "strips": drawn, "seconds": time.perf_counter() - started}]


def _strip_of(event: VarEvent) -> tuple[str, Path | None] | None:
    return _strips.shown(event_file(event), event.span)


class VarTask:
    """One of the three VAR tasks (see the module docstring); ``part`` says which events."""

    default_split = "val"
    dataset = "var"
    needs_answer_key = False
    # x100 as the eval kit prints (as every text metric); "*" also covers the observed_/hypothesis_ sets
    metric_info = {
        **{f"*{key}": TEXT_METRICS[key] for key in (*KEYS, "bertscore_f1")},
        "n_events": COUNT, "n_examples": COUNT,
    }
    optional_inputs = frozenset({"context"})  # the mask's text: a model may locate the gap by its slot alone

    def __init__(self, part: Part, *, separate: bool | None = None, bertscore: BertScoreSettings | None = None,
                 meteor: bool = True, frames: bool = True) -> None:
        self.part = part
        self.frames = frames
        self.meteor = meteor
        self.separate = separate  # None: not given (``abduct score var --separate`` gives it)
        self.bertscore = bertscore

    def view(self, record: Mapping[str, Any], examples: Mapping[str, Any]) -> dict[str, Any] | None:
        """samples.html: the generated sentence beside the chain's references, the event's scores,
        and (with ``frames``) a frame strip per event of the chain."""
        example = examples.get(str(record.get("example_id")))
        if not isinstance(example, VarExample):
            return None
        return event_view(example, record, _strip_of if self.frames else None)

    def plan(self, examples: Sequence[VarExample], run: RunInfo) -> list[Stage]:
        if self.separate is not None:
            scored = "var scores the observed and hypothesis sets always" if self.part == "all" \
                else "this task scores its events as one set"
            raise AbductError(f"separate= is an option of `abduct score var --separate`, not of abduct eval: {scored}")
        pool, _ = text_pool(run.corpus or examples, run.split)
        items = [item for item, _, _ in items_for(examples, self.part)]
        # units of 8 events: a killed run loses little, and the model still sees batches
        stages = [Stage(self.part, Generate(items, pool, per_unit=8))]
        if self.frames:
            stages.append(frames_stage(examples))
        return stages

    def finish(self, examples: Sequence[VarExample], records: Mapping[str, Records], run: RunInfo) -> Evaluation:
        planned = items_for(examples, self.part)
        generated: dict[str, Generated] = {str(r.id): r for r in records[self.part]}
        entries = []
        for item, position, hypothesis in planned:
            example_id = item.id.rsplit("#", 1)[0]
            entries.append(Entry(example_id, position, generated[item.id].prediction, item.references[0],
                                 hypothesis))
        sets = score_sets(entries, separate=self.part == "all", bertscore=self.bertscore, meteor=self.meteor,
                          metric=run.metric)
        metrics: dict[str, Any] = dict(sets["all"].values)
        units = sets["all"].units(entries)
        for name in ("observed", "hypothesis"):
            if name in sets:
                metrics.update({f"{name}_{k}": v for k, v in sets[name].values.items()})
                units.update(sets[name].units(entries, f"{name}_"))
        clusters = video_clusters(run.corpus or examples)  # on the whole split: the same under --limit
        units = {metric: scores.clustered("video", clusters) for metric, scores in units.items()}
        metrics["n_events"] = len(entries)
        metrics["n_examples"] = len({e.example_id for e in entries})
        per_event = sets["all"].per_event
        predictions = [{**asdict(generated[item.id]), "example_id": entry.example_id, "position": entry.position,
                        "is_hypothesis": entry.is_hypothesis, "metrics": per_event[event_key(entry)]}
                       for (item, _, _), entry in zip(planned, entries)]
        videos_of = {x.id: len(x.video_ids) for x in examples}
        by_position = breakdown(entries, per_event, {event_key(e): str(e.position) for e in entries})
        by_videos = breakdown(entries, per_event, {
            event_key(e): "one video" if videos_of[e.example_id] == 1 else "several videos" for e in entries})
        pool, pool_split = text_pool(run.corpus or examples, run.split)
        details: dict[str, Any] = {
            "per_position": {pos: row["cider"] for pos, row in by_position.items()},
            "by_position": by_position,
            "by_videos": by_videos,
            "pool": f"{len(pool.texts)} sentences of the {pool_split} split",
            "scale": "x100, as the VAR eval kit prints",
            "submission": SUBMISSION,
            "examples": _examples(entries, per_event),
        }
        if FRAMES_STAGE in records:
            drawn = records[FRAMES_STAGE]
            details["frame_strips"] = {
                "events": len({(event_file(e), e.span) for x in examples for e in x.counted}),
                "strips": sum(int(r["strips"]) for r in drawn),
                "seconds": round(sum(float(r["seconds"]) for r in drawn), 3)}
        return Evaluation(metrics, predictions, [], details, units=units,
                          artifacts={SUBMISSION: build_submission(entries)})

    def score_files(self, predictions: Path, answer_key: Path | None = None, instance_ids: Path | None = None,
                    *, context: ScoreContext | None = None) -> dict[str, Any]:
        """The eval kit on a submission file: ``all`` (and ``observed``/``hypothesis`` with separate)."""
        if answer_key is not None:
            raise AbductError("a VAR submission carries its references: drop --answer-key "
                              "(`abduct var validate-submission` checks it against the annotations)")
        return score_entries(load_submission(predictions), separate=bool(self.separate), bertscore=self.bertscore,
                             metric=context.metric if context is not None else None)


EXAMPLES = 4


def _examples(entries: Sequence[Entry], per_event: dict[str, dict[str, float]]) -> list[dict[str, Any]]:
    """report.html's examples: generated sentences beside their references with their scores,
    the hypothesis events (the abductive gaps) first, then observed ones."""
    chosen = sorted(entries, key=lambda e: not e.is_hypothesis)[:EXAMPLES]
    out = []
    for entry in chosen:
        scores = per_event.get(event_key(entry), {})
        shown = ", ".join(f"{name} {value:.3g}" for name, value in scores.items() if isinstance(value, (int, float)))
        out.append({"title": f"{entry.example_id}, event {entry.position}"
                             f" ({'hypothesis' if entry.is_hypothesis else 'observed'})",
                    "lines": [f"generated: {entry.sentence}", f"reference: {entry.gt_sentence}", *([shown] if shown else [])]})
    return out


def _bertscore(model: Path | None, layers: int, baseline: Path | None, rescale: bool) -> BertScoreSettings | None:
    if model is None:
        if baseline is not None:
            raise AbductError("bertscore_baseline applies only with bertscore_model=DIR")
        return None
    return BertScoreSettings(model, layers, baseline, rescale)


def _factory(part: Part) -> Any:
    def make(spec: Spec, settings: Settings, *, separate: bool | None = None,
             bertscore_model: Path | None = None, bertscore_layers: int = 17, bertscore_baseline: Path | None = None,
             bertscore_rescale: bool = True, meteor: bool = True, frames: bool = True) -> VarTask:
        return VarTask(part, separate=separate, meteor=meteor, frames=frames,
                       bertscore=_bertscore(bertscore_model, bertscore_layers, bertscore_baseline, bertscore_rescale))

    make.__doc__ = (f"``var{'' if part == 'all' else '-' + ('explanation' if part == 'hypothesis' else part)}"
                    "[,meteor=false][,frames=false][,bertscore_model=DIR,bertscore_layers=17,bertscore_baseline=TSV]"
                    "[,separate=true (abduct score)]``; the videos' folder is the dataset's: --dataset var,videos=DIR")
    return make


make_var = _factory("all")
make_explanation = _factory("hypothesis")
make_premise = _factory("premise")
