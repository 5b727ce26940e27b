"""``nleye-triplet`` and ``nleye-pairs``.

Both read the registered ``nleye`` dataset (``DIR/test_set.csv`` and the images, ``loader.py``;
``--dataset nleye,image_root=PATH`` moves the images) and take the option
``setup=images|text|captions`` (``records.py``: premise image with the hypothesis image as a
related input, the gold descriptions as text only, or the same text-only setup on captions
that the model ``captioner=SPEC`` wrote first, ``captions.py``: a ``captions`` stage, the
answering stage planned after it) and ``score_by=pair|similarity``: ``similarity`` scores a
hypothesis by the dot product of the dual encoder's premise and hypothesis image embeddings
(the issue's dual-encoder baseline; ``clip:tiny`` runs this way), a ``Custom`` step.

**Triplet** (stage ``triplet``). A scorer rates the two (premise, hypothesis) pairs once (a
``Compare``); shown in the file's order it picks the higher, a tie going to the hypothesis
shown first, and shown swapped likewise (so a scorer that ties always is never consistent;
otherwise a pair scorer's consistency equals its accuracy in either order). A model that
generates (``answer=auto``, the default, also ``random``) or any model with
``answer=generate`` is asked twice (a ``Generate`` of two requests per sample), with the
premise and both hypotheses in each order and ``PROMPT``; its answer must be ``1`` or ``2``
(optionally ``Hypothesis 2``, ``Image 1``, a final dot; case and spaces ignored): anything else
is wrong and counted in ``unparsed`` with its reason (``unparsed_rate`` over the answers read,
``unparsed_reasons``: ``abduct.kit.answers``; "several options" when it names both 1 and 2). ``answer=score`` makes a model that does both score
instead. In ``setup=text`` (and ``captions``) the descriptions are the request's context, which
``random`` does not read: its picks are then the same for every request (use ``nleye-pairs``
for its chance row).

**Pairs** (stage ``pairs``). One score per pair, a ``Compare``: correct iff the gold
hypothesis scores strictly higher.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np

from abduct import (
    COUNT,
    AbductError,
    Candidate,
    Compare,
    Compared,
    Custom,
    Evaluation,
    Generate,
    Generated,
    GenerationItem,
    GenerationRequest,
    MetricInfo,
    Records,
    Request,
    RunInfo,
    RunModels,
    Settings,
    Spec,
    Stage,
    TextPool,
    TwoWay,
    UnitScores,
    VisualInput,
    percent,
)
from abduct.kit import batched
from abduct.kit.answers import UNPARSED_INFO, unparsed_metrics, unparsed_reason
from abduct.kit.reasoning import reasoning_fields
from abduct_nleye.captions import CAPTION_PROMPT, answering, check_captioner, with_captions
from abduct_nleye.loader import load_csv, require_descriptions
from abduct_nleye.records import NleyeSample, Setup
from abduct_nleye.scoring import (
    by_category,
    pairs_values,
    score_pairs_file,
    score_triplet_file,
    triplet_values,
    with_tables,
)

PROMPT = ("The first image is the premise. Which of the two following images (hypotheses) is the more plausible "
          "outcome or explanation of the premise? Answer with 1 or 2 only.")
PROMPT_TEXT = ("Given the premise, which hypothesis is more plausible? Answer with 1 or 2 only.")
_ANSWER = re.compile(r"^(?:hypothesis|image|option)?\s*([12])\s*\.?$")
SWAPPED = "/swapped"  # the id suffix of a triplet's second request (a sample id holds no "/")
ScoreBy = Literal["pair", "similarity"]


def parse_answer(text: str) -> int | None:
    """1 or 2 from a generator's answer, strictly (see the module docstring); None otherwise."""
    match = _ANSWER.match(text.strip().lower())
    return int(match.group(1)) if match else None


def similarity_request(samples: Sequence[NleyeSample], model_name: str) -> Custom[Sequence[NleyeSample]]:
    """``score_by=similarity``: per sample the dot products of the dual encoder's premise
    embedding with each hypothesis's, as ``Compare``'s records (``{id, scores, gold, correct}``; see
    ``compared``)."""
    def step(models: RunModels, batch: Sequence[NleyeSample]) -> Records:
        engine = models.require_scorer()
        if not engine.is_dual_encoder:
            raise AbductError(f"score_by=similarity needs a dual encoder, and '{model_name}' is not one")
        premises = engine.encode_visual([VisualInput(s.premise_image) for s in batch]).astype(np.float64)
        hyps = engine.encode_visual([VisualInput(h) for s in batch for h in s.hypothesis_images])
        dots: np.ndarray = np.einsum("ij,ikj->ik", premises, hyps.astype(np.float64).reshape(len(batch), 2, -1))
        return [{"id": s.sample_id, "scores": sc, "gold": s.gold - 1, "correct": sc[s.gold - 1] > sc[2 - s.gold]}
                for s, sc in zip(batch, dots.tolist())]

    return Custom([(b[0].sample_id, b) for b in batched(samples, 16)], step, needs=frozenset({"score"}))


def compared(records: Records) -> list[Compared]:
    """A pairs stage's records as ``Compared``: a ``Compare``'s are; ``score_by=similarity``'s
    (a custom step's dicts) have its fields."""
    return [r if isinstance(r, Compared) else Compared(**r) for r in records]


class _NleyeTask:
    default_split = "test"
    dataset = "nleye"
    limit_unit = "samples"
    optional_inputs = frozenset({"context"})

    def __init__(self, setup: Setup = "images", score_by: ScoreBy = "pair", captioner: str | None = None) -> None:
        if setup != "images" and score_by == "similarity":
            raise AbductError("score_by=similarity compares images: it needs setup=images")
        check_captioner(setup, captioner)
        self.setup: Setup = setup
        self.score_by: ScoreBy = score_by
        self.captioner = captioner

    def view(self, record: Mapping[str, Any], examples: Mapping[str, NleyeSample]) -> dict[str, Any] | None:
        """samples.html: the premise and both hypotheses (gold marked), the category fields,
        what the model answered in each presentation order."""
        sample = examples.get(str(record.get("id")))
        if sample is None:
            return None
        texts = sample.hypothesis_texts or ("", "")
        images = [{"path": sample.premise_image, "caption": f"premise: {sample.premise_text or ''}"}]
        images += [{"path": path, "caption": f"hypothesis {k}{' (gold)' if k == sample.gold else ''}: {texts[k - 1]}"}
                   for k, path in ((1, sample.hypothesis_images[0]), (2, sample.hypothesis_images[1]))]
        fields = {"gold hypothesis": sample.gold, **sample.categories}
        if "order1" in record:
            fields.update({"answer, shown (1, 2)": record["order1"], "answer, shown (2, 1)": record["order2"]})
        view: dict[str, Any] = {"images": images, "fields": fields,
                                "category": sample.categories.get("reasoning_category")}
        if sample.explanation:
            view["texts"] = [{"label": "explanation", "text": sample.explanation}]
        if isinstance(record.get("scores"), list) and len(record["scores"]) == 2:
            s1, s2 = record["scores"]
            view["margin"] = (s1 - s2) if sample.gold == 1 else (s2 - s1)  # > 0: the gold hypothesis scored higher
        return view

    def _stages(self, name: str, examples: Sequence[NleyeSample], run: RunInfo,
                ask: Callable[[Sequence[NleyeSample]], Request]) -> list[Stage]:
        """The stage ``name`` asking ``ask(samples)`` (after the captions with setup=captions);
        setup=text refused in one line when the file has no descriptions."""
        if self.setup == "text" and run.corpus:
            require_descriptions(list(run.corpus), Path(run.corpus[0].file))
        return answering(name, examples, self.setup, self.captioner, ask)

    def _compare(self, samples: Sequence[NleyeSample], model_name: str) -> Request:
        """Both (premise, hypothesis) pairs of each sample scored: a ``Compare`` (score_by=pair)
        or the dual encoder's similarities; records ``{id, scores, gold (0/1), correct}``."""
        if self.score_by == "similarity":
            return similarity_request(samples, model_name)
        items = []
        for s in samples:
            (v1, t1), (v2, t2) = s.pair(1, self.setup), s.pair(2, self.setup)
            items.append(TwoWay(s.sample_id, Candidate(v1, t1), Candidate(v2, t2), s.gold - 1))
        return Compare(items, per_unit=16)

    def _details(self, **more: Any) -> dict[str, Any]:
        details: dict[str, Any] = {"setup": self.setup, **more}
        if self.setup == "captions":
            details.update(captioner=self.captioner, caption_prompt=CAPTION_PROMPT)
        return details


def _with_tables(info: dict[str, MetricInfo]) -> dict[str, MetricInfo]:
    """``info`` for the overall figures and for each category table (``scoring.with_tables``)."""
    return {**info, **{f"by_*.*.{key}": value for key, value in info.items()}}


class TripletTask(_NleyeTask):
    """Consistency accuracy: the gold hypothesis chosen in both presentation orders (random 25;
    each order alone, random 50)."""

    metric_info = _with_tables({
        "consistency_accuracy": percent(chance=25.0), "order1_accuracy": percent(chance=50.0),
        "order2_accuracy": percent(chance=50.0), "n": COUNT, **UNPARSED_INFO,
    })

    def __init__(self, setup: Setup = "images", score_by: ScoreBy = "pair",
                 answer: Literal["auto", "score", "generate"] = "auto", captioner: str | None = None) -> None:
        super().__init__(setup, score_by, captioner)
        self.answer = answer

    def asks(self, run: RunInfo) -> bool:
        """The model is asked (generates) rather than scored: ``answer=generate``, or ``auto``
        with a model that generates and ``score_by=pair``."""
        return self.answer == "generate" or (self.answer == "auto" and run.generates and self.score_by == "pair")

    def plan(self, examples: Sequence[NleyeSample], run: RunInfo) -> list[Stage]:
        if self.asks(run):
            prompt = PROMPT if self.setup == "images" else PROMPT_TEXT
            pool = TextPool.of(["1", "2"])

            def ask(samples: Sequence[NleyeSample]) -> Request:
                items = [GenerationItem(s.sample_id + ("" if first == 1 else SWAPPED),
                                        GenerationRequest(s.triplet(first, self.setup), prompt))
                         for s in samples for first in (1, 2)]
                return Generate(items, pool, per_unit=32)  # 16 samples, both orders, a unit (keyed by the first)

            return self._stages("triplet", examples, run, ask)
        return self._stages("triplet", examples, run, lambda samples: self._compare(samples, run.model_name))

    def finish(self, examples: Sequence[NleyeSample], records: Mapping[str, Records], run: RunInfo) -> Evaluation:
        asked = self.asks(run)
        if asked:
            generated: dict[str, Generated] = {str(r.id): r for r in records["triplet"]}
            rows = [self._answered(s, generated) for s in examples]
        else:
            scored = {str(r.id): r for r in compared(records["triplet"])}
            rows = [self._scored(s, scored[s.sample_id]) for s in examples]
        answers = with_captions(rows, records)
        table = {r["id"]: (r["gold"], r["order1"], r["order2"]) for r in answers}
        metrics = with_tables(examples, table, triplet_values)
        if asked:
            metrics.update(unparsed_metrics([self._reason(generated[s.sample_id + suffix])
                                             for s in examples for suffix in ("", SWAPPED)]))
        details = self._details(answered_by="generation" if asked else f"scores ({self.score_by})")
        unit = "triplet (both orders)"  # a triplet's two presentations stay together when resampled
        per_triplet = {"consistency_accuracy": UnitScores.means(unit, {r["id"]: r["order1"] == r["order2"] == r["gold"]
                                                                      for r in answers}),
                       "order1_accuracy": UnitScores.means(unit, {r["id"]: r["order1"] == r["gold"] for r in answers}),
                       "order2_accuracy": UnitScores.means(unit, {r["id"]: r["order2"] == r["gold"] for r in answers})}
        return Evaluation(metrics, answers, details=details, units=by_category(examples, per_triplet))

    @staticmethod
    def _scored(sample: NleyeSample, pair: Compared) -> dict[str, Any]:
        s1, s2 = pair.scores
        order1 = 1 if s1 >= s2 else 2  # shown (1, 2): a tie goes to the first shown, 1
        order2 = 2 if s2 >= s1 else 1  # shown (2, 1): a tie goes to the first shown, 2
        return {"id": sample.sample_id, "gold": sample.gold, "scores": [s1, s2], "order1": order1, "order2": order2,
                "consistent": order1 == order2 == sample.gold}

    @staticmethod
    def _answered(sample: NleyeSample, generated: Mapping[str, Generated]) -> dict[str, Any]:
        raw1 = generated[sample.sample_id].prediction
        raw2 = generated[sample.sample_id + SWAPPED].prediction
        shown1, shown2 = parse_answer(raw1), parse_answer(raw2)
        order1 = shown1  # shown (1, 2): position = hypothesis
        order2 = None if shown2 is None else 3 - shown2  # shown (2, 1): position 1 = hypothesis 2
        row = {"id": sample.sample_id, "gold": sample.gold, "outputs": [raw1, raw2], "order1": order1,
               "order2": order2, "consistent": order1 == order2 == sample.gold}
        ordered = (generated[sample.sample_id], generated[sample.sample_id + SWAPPED])
        reasons = [f"order {k}: {r}" for k, r in ((1, TripletTask._reason(ordered[0])),
                                                  (2, TripletTask._reason(ordered[1]))) if r]
        if reasons:
            row["unparsed"] = reasons
        thoughts = [f"order {k}: {kept['reasoning']}" for k, g in enumerate(ordered, 1)
                    if (kept := reasoning_fields(g.prediction))]
        if thoughts:  # both presentations' reasoning, in one folded text
            row["reasoning"] = "\n\n".join(thoughts)
        return row

    @staticmethod
    def _reason(made: Generated) -> str | None:
        """Why a generated answer was not read (None: it was)."""
        return unparsed_reason(made.prediction, parsed=parse_answer(made.prediction) is not None,
                               several={"1", "2"} <= set(made.prediction))

    def score_files(self, predictions: Path, answer_key: Path, instance_ids: Path | None = None) -> dict[str, Any]:
        """``{sample_id: [a, b]}`` against ``test_set.csv``."""
        return score_triplet_file(predictions, load_csv(answer_key))


class PairsTask(_NleyeTask):
    """Order-faithful accuracy: the gold pair's score strictly higher (ties count 0; random 50)."""

    metric_info = _with_tables({"accuracy": percent(chance=50.0), "ties": COUNT, "n": COUNT})

    def plan(self, examples: Sequence[NleyeSample], run: RunInfo) -> list[Stage]:
        return self._stages("pairs", examples, run, lambda samples: self._compare(samples, run.model_name))

    def finish(self, examples: Sequence[NleyeSample], records: Mapping[str, Records], run: RunInfo) -> Evaluation:
        answers = with_captions(compared(records["pairs"]), records)
        rows = {r["id"]: (r["gold"] + 1, r["scores"][0], r["scores"][1]) for r in answers}
        metrics = with_tables(examples, rows, pairs_values)
        units = {"accuracy": UnitScores.means("triplet", {r["id"]: r["scores"][r["gold"]] > r["scores"][1 - r["gold"]]
                                                          for r in answers})}
        return Evaluation(metrics, answers, details=self._details(score_by=self.score_by),
                          units=by_category(examples, units))

    def score_files(self, predictions: Path, answer_key: Path, instance_ids: Path | None = None) -> dict[str, Any]:
        """``{sample_id: [score_h1, score_h2]}`` against ``test_set.csv``."""
        return score_pairs_file(predictions, load_csv(answer_key))


def make_triplet(spec: Spec, settings: Settings, *, setup: Setup = "images", score_by: ScoreBy = "pair",
                 answer: Literal["auto", "score", "generate"] = "auto", captioner: str | None = None) -> TripletTask:
    """``nleye-triplet[,setup=images|text|captions][,score_by=pair|similarity][,answer=auto|score|generate]
    [,captioner=SPEC]`` (``captioner`` required by, and only with, ``setup=captions``)."""
    return TripletTask(setup, score_by, answer, captioner)


def make_pairs(spec: Spec, settings: Settings, *, setup: Setup = "images", score_by: ScoreBy = "pair",
               captioner: str | None = None) -> PairsTask:
    """``nleye-pairs[,setup=images|text|captions][,score_by=pair|similarity][,captioner=SPEC]``."""
    return PairsTask(setup, score_by, captioner)
