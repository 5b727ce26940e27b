"""``var``, ``var-explanation`` and ``var-premise``: generate, write the official submission, score it.

- ``var-explanation``: for each example, the masked hypothesis event's sentence from the chain
  of premise events (``inputs.chain_input``: the hypothesis slot carries only a mask);
- ``var-premise``: each premise event's sentence from that event's frames (``inputs.event_input``);
- ``var``: both, one submission with every counted event (the eval kit's full setting; its
  metrics add the ``observed_*`` and ``hypothesis_*`` sets).

Each writes ``submission.json`` in the eval kit's format into the run's output directory and
computes its metrics from exactly those entries with the official scorer (``scoring.py``), so
``abduct score var --predictions OUT/submission.json`` gives the same numbers. The ``TextPool``
offered to choosing generators (``random``) is the training split's sentences, or, without a
training file (the public release has val and test only here), the evaluated split's own.
With ``frames`` (the default), samples.html shows a frame strip per event of each chain
(``_strips``; ``details["frame_strips"]`` says how many and the seconds they took), kept in the
run's cache (``RunContext.cache_dir``) or, under ``--no-cache``, in a temporary folder removed
with the task once the page has linked or copied them.
Breakdowns: ``details["per_position"]`` (mean per-event CIDEr-D ×100 by event position in the
chain) and ``details["by_position"]`` (METEOR, ROUGE-L, CIDEr-D and n by position), plus
``details["by_videos"]`` (single- or multi-video chains).
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from abduct import COUNT, AbductError, Evaluation, GenerationRequest, RunContext, Settings, Spec, TextPool, higher
from abduct.kit import GenerationItem, generate
from abduct_var._strips import frame_strips
from abduct_var.inputs import DESCRIBE_PROMPT, EXPLAIN_PROMPT, chain_input, event_input, video_path
from abduct_var.loader import annotation_file, load_file, load_split
from abduct_var.records import VarEvent, VarExample
from abduct_var.scoring import BertScoreSettings, breakdown, event_key, score_entries, score_sets
from abduct_var.submission import Entry, build_submission, load_submission
from abduct_var.views import event_view

Part = Literal["all", "hypothesis", "premise"]
SUBMISSION = "submission.json"


def text_pool(data_dir: Path, split: str, evaluated: Sequence[VarExample]) -> tuple[TextPool, str]:
    """The training sentences when a training file exists (else the evaluated split's), and which."""
    source = evaluated
    name = split
    if split != "train":
        try:
            source, name = load_file(annotation_file(data_dir, "train")), "train"
        except AbductError:
            pass
    return TextPool.of([e.sentence.strip() for x in source for e in x.counted]), name


def items_for(examples: Sequence[VarExample], videos: Path, part: Part) -> list[tuple[GenerationItem, int, bool]]:
    """(item, position, is_hypothesis) for every event ``part`` generates, in chain order."""
    out = []
    for x in examples:
        for i, event in enumerate(x.counted):
            hypothesis = i == x.hypothesis
            if part == "hypothesis" and not hypothesis or part == "premise" and hypothesis:
                continue
            if hypothesis:
                request = GenerationRequest(chain_input(x, videos, masked=i), EXPLAIN_PROMPT)
            else:
                request = GenerationRequest(event_input(event, videos), DESCRIBE_PROMPT)
            out.append((GenerationItem(f"{x.id}#{i}", request, (event.sentence,)), i, hypothesis))
    return out


class VarTask:
    """One of the three VAR tasks (see the module docstring); ``part`` says which events."""

    default_split = "val"
    needs_answer_key = False
    # x100 as the eval kit prints; "*" also covers the observed_/hypothesis_ sets
    metric_info = {
        "*bleu_?": higher(0.0, 100.0), "*meteor": higher(0.0, 100.0), "*rouge_l": higher(0.0, 100.0),
        "*cider": higher(0.0, 1000.0),  # CIDEr-D x100: at most 1000
        "*bertscore_f1": higher(-100.0, 100.0),  # baseline-rescaled values can fall below 0
        "n_events": COUNT, "n_examples": COUNT,
    }
    optional_inputs = frozenset({"context"})  # the mask's text: a model may locate the gap by its slot alone

    def __init__(self, part: Part, *, videos: Path | None = None, separate: bool = False,
                 bertscore: BertScoreSettings | None = None, meteor: bool = True, frames: bool = True) -> None:
        self.part = part
        self.frames = frames
        self.meteor = meteor
        self.videos = videos
        self.separate = separate
        self.bertscore = bertscore
        self._seen: dict[str, VarExample] = {}  # what the last run evaluated, for sample_view
        self._strips: dict[tuple[str, tuple[float, float]], tuple[str, Path | None]] = {}  # (video id, span) -> (video, strip)
        self._scratch: tempfile.TemporaryDirectory[str] | None = None  # the strips' folder under --no-cache

    def sample_view(self, record: Mapping[str, Any]) -> dict[str, Any] | None:
        """samples.html: the generated sentence beside the chain's references, the event's scores,
        and (with ``frames``) a frame strip per event of the chain."""
        example = self._seen.get(str(record.get("example_id")))
        if example is None:
            return None
        return event_view(example, record, self._strip_of if self.frames else None)

    def _strip_of(self, event: VarEvent) -> tuple[str, Path | None] | None:
        return self._strips.get((event.video_id, event.span))

    def _draw_strips(self, examples: Sequence[VarExample], videos: Path, cache: Path | None) -> dict[str, Any]:
        """A strip per event of the evaluated chains (reused from the run's cache), and what it cost."""
        started = time.perf_counter()
        if cache is not None:
            folder = cache / "var-frames"
        else:
            self._scratch = self._scratch or tempfile.TemporaryDirectory(prefix="abduct-var-frames-")
            folder = Path(self._scratch.name)
        paths = {(e.video_id, e.span): str(video_path(videos, e.video_id)) for x in examples for e in x.counted}
        made = frame_strips([(path, span) for (_, span), path in paths.items()], folder)
        self._strips = {(vid, span): (path, made[path, span]) for (vid, span), path in paths.items()
                        if (path, span) in made}
        drawn = sum(strip is not None for _, strip in self._strips.values())
        return {"events": len(paths), "strips": drawn, "seconds": round(time.perf_counter() - started, 3)}

    def evaluate(self, run: RunContext) -> Evaluation:
        every, file = load_split(run.data_dir, run.split)
        examples = list(run.apply_limit(every))
        self._seen, self._strips = {x.id: x for x in examples}, {}
        videos = self.videos or run.data_dir / "videos"
        pool, pool_split = text_pool(run.data_dir, run.split, every)
        planned = items_for(examples, videos, self.part)
        # units of 8 events: a killed run loses little, and the model still sees batches
        records = generate(run, self.part, [item for item, _, _ in planned], pool, per_unit=8)
        entries = []
        for record, (item, position, hypothesis) in zip(records, planned):
            example_id = item.id.rsplit("#", 1)[0]
            entries.append(Entry(example_id, position, str(record["prediction"]), item.references[0], hypothesis))
        run.write_artifact(SUBMISSION, build_submission(entries))  # written with the results, only if the run finishes
        sets = score_sets(entries, separate=self.part == "all", bertscore=self.bertscore, meteor=self.meteor)
        metrics: dict[str, Any] = dict(sets["all"].values)
        units = sets["all"].units(entries)
        for name in ("observed", "hypothesis"):
            if name in sets:
                metrics.update({f"{name}_{k}": v for k, v in sets[name].values.items()})
                units.update(sets[name].units(entries, f"{name}_"))
        metrics["n_events"] = len(entries)
        metrics["n_examples"] = len({e.example_id for e in entries})
        per_event = sets["all"].per_event
        for record, entry in zip(records, entries):
            record.update(example_id=entry.example_id, position=entry.position, is_hypothesis=entry.is_hypothesis,
                          metrics=per_event[event_key(entry)])
        videos_of = {x.id: len(x.video_ids) for x in examples}
        by_position = breakdown(entries, per_event, {event_key(e): str(e.position) for e in entries})
        by_videos = breakdown(entries, per_event, {
            event_key(e): "one video" if videos_of[e.example_id] == 1 else "several videos" for e in entries})
        details: dict[str, Any] = {
            "per_position": {pos: row["cider"] for pos, row in by_position.items()},
            "by_position": by_position,
            "by_videos": by_videos,
            "pool": f"{len(pool.texts)} sentences of the {pool_split} split",
            "scale": "x100, as the VAR eval kit prints",
            "submission": SUBMISSION,
            "examples": _examples(entries, per_event),
        }
        if self.frames:
            details["frame_strips"] = self._draw_strips(examples, videos, run.cache_dir)
        return Evaluation(metrics, records, [file], details, units=units)

    def score_files(self, predictions: Path, answer_key: Path | None = None,
                    instance_ids: Path | None = None) -> dict[str, Any]:
        """The eval kit on a submission file: ``all`` (and ``observed``/``hypothesis`` with separate)."""
        if answer_key is not None:
            raise AbductError("a VAR submission carries its references: drop --answer-key "
                              "(`abduct var validate-submission` checks it against the annotations)")
        return score_entries(load_submission(predictions), separate=self.separate, bertscore=self.bertscore)


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
    def make(spec: Spec, settings: Settings, *, videos: Path | None = None, separate: bool = False,
             bertscore_model: Path | None = None, bertscore_layers: int = 17, bertscore_baseline: Path | None = None,
             bertscore_rescale: bool = True, meteor: bool = True, frames: bool = True) -> VarTask:
        return VarTask(part, videos=videos, separate=separate, meteor=meteor, frames=frames,
                       bertscore=_bertscore(bertscore_model, bertscore_layers, bertscore_baseline, bertscore_rescale))

    make.__doc__ = (f"``var{'' if part == 'all' else '-' + ('explanation' if part == 'hypothesis' else part)}"
                    "[,videos=DIR][,separate=true][,meteor=false][,frames=false][,bertscore_model=DIR,bertscore_layers=17,bertscore_baseline=TSV]``")
    return make


make_var = _factory("all")
make_explanation = _factory("hypothesis")
make_premise = _factory("premise")
