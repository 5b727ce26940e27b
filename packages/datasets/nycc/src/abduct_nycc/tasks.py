"""``nycc-matching``, ``nycc-ranking`` and ``nycc-explanation``.

Options shared by the three: ``fold=all|0..4`` (default ``all``: the split ``test`` of the five
folds, each fold scored on its own test split and the unweighted mean over folds reported, as
``eval_crossval.py`` does; ``fold=k``: split ``fold<k>-test`` alone) and ``input=pixels|description``
(what the model sees: the cartoon, or the annotations as text — the release's
``from_description`` string, which needs the description configs, the default).

**Matching / ranking.** A model that **scores** (CLIP-style image-text models, cross-encoders)
gets a ``Choose``: each caption scored given the cartoon (or the description), the highest wins,
ties to the first. A model that **generates** (``answer=auto`` when it can, or ``answer=generate``)
is asked with the captions as letters and its answer read as the authors' leaderboard script
reads it (``answers.py``; an unread answer takes the script's default letter and is counted in
``unparsed``). The letters chosen are written as the official prediction file
``<task>_predictions.json`` (``{instance_id: letter}``), which is also the leaderboard submission
on ``--split leaderboard``.

**Explanation.** The model is asked to explain the joke of the cartoon and its winning caption;
``bleu`` and ``rouge_l`` as the official scorer computes them (``text.py``). A generator that
retrieves (``random``, ``retrieve:...``) picks from the reference explanations of the *other*
folds. With ``--judge SPEC`` the judge compares the generated explanation with the reference and
names the better one (the paper's human head-to-head, asked of a model), in both orders
(``judge_order=both``, the default: generated as ``A``, then as ``B``; agreeing answers score 1
or 0, differing ones 0.5) or once (``judge_order=fixed``, generated as ``A``):
``judge_preference`` is the mean ×100, ``judge_order_consistency`` the share of items whose two
answers agree. With two ``--judge`` specs or more, ``details.judge_agreement``
(``abduct_modelkit.agreement``) holds, on the first order's answers, each judge's preference (its
``score``), their Krippendorff's α on the A/B verdicts, and each further judge against the first:
Cohen's κ and the paired difference of their preferences; the release has no human preference
labels, so none is compared with people.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from abduct import (
    COUNT,
    AbductError,
    Choice,
    Choose,
    Evaluation,
    Generate,
    GenerationItem,
    GenerationRequest,
    Judge,
    JudgeItem,
    MetricInfo,
    Records,
    RunInfo,
    Settings,
    Spec,
    Stage,
    TextPool,
    UnitScores,
    higher,
    percent,
)
from abduct.kit import scored_texts
from abduct.kit.answers import UNPARSED_INFO, unparsed_metrics
from abduct_nycc.answers import official_letter
from abduct_nycc.records import LETTERS, NyccItem
from abduct_nycc.scoring import by_fold, check_fold, evaluate_folds, read_official

Input = Literal["pixels", "description"]
AnswerMode = Literal["auto", "score", "generate"]
INSTRUCTION = ('Think briefly if you like, then end your reply with "Final Answer: X", X being the letter '
               "of your choice.")
QUESTIONS = {"matching": "Which of these captions was written for this New Yorker cartoon?",
             "ranking": "Which of these two captions for this New Yorker cartoon is the funnier one (the finalist)?"}
EXPLAIN = "Explain, in two or three sentences, why this caption of the New Yorker cartoon is funny."
JUDGE_TEMPLATE = ("A New Yorker cartoon has the caption: {question}\nExplanation A: {candidate}\n"
                  "Explanation B: {reference}\nWhich explanation of the joke is better? Answer with A or B only.")
# The same question with the two explanations swapped: with ``judge_order=both`` the judge is
# asked in both orders, so a judge that favours a position cannot favour the generated text.
SWAPPED_TEMPLATE = ("A New Yorker cartoon has the caption: {question}\nExplanation A: {reference}\n"
                    "Explanation B: {candidate}\nWhich explanation of the joke is better? Answer with A or B only.")
JUDGE_STAGE, SWAPPED_STAGE = "judge", "judge-swapped"
JudgeOrder = Literal["both", "fixed"]


def _with_folds(info: Mapping[str, MetricInfo]) -> dict[str, MetricInfo]:
    return {**info, **{f"folds.*.{k}": v for k, v in info.items()}, "folds_scored": COUNT}


class _NyccTask:
    limit_unit = "instances"
    optional_inputs = frozenset({"context"})
    kind = ""

    def __init__(self, fold: str = "all", input: Input = "pixels") -> None:
        if input not in ("pixels", "description"):
            raise AbductError(f"input must be pixels or description, not {input!r}")
        self.fold = check_fold(str(fold))
        self.input: Input = input
        self.default_split = "test" if self.fold is None else f"fold{self.fold}-test"
        self.dataset = f"nycc-{self.kind}"

    def _visual_check(self, items: Sequence[NyccItem]) -> None:
        if self.input == "description" and items and items[0].description is None:
            raise AbductError(f"input=description reads the from_description column, which the pixels configs "
                              f"lack: use --dataset nycc-{self.kind},configs=description")

    def score_files(self, predictions: Path, answer_key: Path, instance_ids: Path | None = None) -> dict[str, Any]:
        """The official predictions file (``{instance_id: prediction}``) against ``--answer-key DATA``
        (the repo copy): the test split of ``fold=`` (default all five) of the description
        configs, the ones ``eval_crossval.py`` reads (``scoring.read_official``)."""
        from abduct_nycc.dataset import NyccDataset

        items = NyccDataset(self.kind).load(Path(answer_key), self.default_split, pictures=False)
        answers = read_official(predictions, self.kind, items)
        return evaluate_folds(self.kind, items, answers)


class ChoiceTask(_NyccTask):
    def __init__(self, fold: str = "all", input: Input = "pixels", answer: AnswerMode = "auto") -> None:
        super().__init__(fold, input)
        self.answer: AnswerMode = answer
        self.letters = LETTERS[self.kind]

    def asks(self, run: RunInfo) -> bool:
        return self.answer == "generate" or (self.answer == "auto" and run.generates)

    def prompt(self, item: NyccItem) -> str:
        listed = "\n".join(f"{letter}: {text}" for letter, text in zip(self.letters, item.choices))
        return f"{QUESTIONS[self.kind]}\n{listed}\n{INSTRUCTION}"

    def plan(self, examples: Sequence[NyccItem], run: RunInfo) -> list[Stage]:
        self._visual_check(examples)
        if self.asks(run):
            pool = TextPool.of([f"Final Answer: {letter}" for letter in self.letters])
            items = [GenerationItem(i.id, GenerationRequest(i.visual(self.input), self.prompt(i))) for i in examples]
            return [Stage("generate", Generate(items, pool, per_unit=16))]
        return [Stage("choose", Choose([Choice(i.id, i.visual(self.input), i.choices, i.label) for i in examples],
                                       per_unit=16))]

    def finish(self, examples: Sequence[NyccItem], records: Mapping[str, Records], run: RunInfo) -> Evaluation:
        generated = "generate" in records
        found = {str(r.id): r for r in records["generate" if generated else "choose"]}
        answers: dict[str, str] = {}
        predictions, reasons = [], []
        for item in examples:
            record = found[item.id]
            row: dict[str, Any] = {"id": item.id, "fold": item.fold,
                                   "label": None if item.label is None else self.letters[item.label]}
            if generated:
                letter, read = official_letter(record.prediction, self.letters)
                reason = None if read else ("empty" if not record.prediction.strip() else "no option found")
                reasons.append(reason)
                row.update(output=record.prediction, **({"unparsed": reason} if reason else {}))
            else:
                letter = self.letters[record.choice]
                row["scores"] = record.scores
            answers[item.id] = row["answer"] = letter
            row["correct"] = None if item.label is None else letter == row["label"]
            if item.winner_source:
                row["winner_source"] = item.winner_source
            predictions.append(row)
        labelled = [i for i in examples if i.label is not None]
        metrics: dict[str, Any] = evaluate_folds(self.kind, labelled, answers) if labelled else {"instances": len(examples)}
        if generated:
            metrics.update(unparsed_metrics(reasons))
        units = {}
        if len(by_fold(labelled)) == 1:  # one fold: its accuracy is a mean over instances
            key = "accuracy" if self.kind == "matching" else "accuracy_overall"
            units[key] = UnitScores.means("instance", {r["id"]: bool(r["correct"]) for r in predictions
                                                       if r["correct"] is not None})
        details = {"answered_by": "generation" if generated else "scores", "input": self.input,
                   "fold": "all" if self.fold is None else self.fold, "scale": "x100"}
        if generated:
            details["instruction"] = INSTRUCTION
        return Evaluation(metrics, predictions, details=details, units=units,
                          artifacts={f"{self.kind}_predictions.json": answers})

    def view(self, record: Mapping[str, Any], examples: Mapping[str, NyccItem]) -> dict[str, Any] | None:
        item = examples.get(str(record.get("id")))
        if item is None:
            return None
        texts = scored_texts(list(self.letters), item.choices, record.get("scores"), item.label)
        if "output" in record:
            texts.append({"label": "answer given", "text": str(record["output"])})
        view: dict[str, Any] = {"texts": texts, "correct": record.get("correct"),
                                "fields": {"fold": item.fold, "answer": record.get("answer"),
                                           "label": record.get("label")}}
        if item.image:
            view["images"] = [{"path": item.image, "caption": f"contest {item.contest_number}"}]
        if item.winner_source:
            view["category"] = item.winner_source
        return view


class MatchingTask(ChoiceTask):
    """Five captions, one written for the cartoon: accuracy (chance 20)."""

    kind = "matching"
    metric_info = _with_folds({"accuracy": percent(chance=20.0), "n": COUNT, "instances": COUNT,
                               **UNPARSED_INFO})


class RankingTask(ChoiceTask):
    """Two captions, the finalist and an okay one: accuracy overall and by finalist source (chance 50)."""

    kind = "ranking"
    metric_info = _with_folds({**{f"accuracy_{k}": percent(chance=50.0) for k in ("overall", "crowd", "ny")},
                               **{f"n_{k}": COUNT for k in ("overall", "crowd", "ny")}, "instances": COUNT,
                               **UNPARSED_INFO})


_LETTER = re.compile(r"^\W*([AB])\b")


def preference(raw: str, swapped: bool = False) -> bool | None:
    """True: the judge names the generated explanation (A, or B when the order was ``swapped``),
    False: the reference; None: neither letter, read strictly."""
    match = _LETTER.match(raw.strip())
    return None if match is None else (match.group(1) == "A") != swapped


def both_orders(first: bool | None, swapped: bool | None) -> float | None:
    """One item's preference for the generated explanation from its two orders: 1 or 0 when the
    verdicts agree, 0.5 when they disagree (the position decided: a tie, as MT-Bench's pairwise
    judge counts it), None when either answer was unread."""
    if first is None or swapped is None:
        return None
    return float(first) if first == swapped else 0.5


class ExplanationTask(_NyccTask):
    """Explain the joke: sacreBLEU and ROUGE-L (bootstrap median) against the reference; a judge's preference."""

    kind = "explanation"
    metric_info = _with_folds({"bleu": higher(0.0, 100.0), "rouge_l": higher(0.0, 100.0),
                               "rouge_l_mean": higher(0.0, 100.0), "n": COUNT,
                               "judge_preference": percent(), "judge_unparsed": COUNT,
                               "judge_order_consistency": percent()})

    def __init__(self, fold: str = "all", input: Input = "pixels", judge_order: JudgeOrder = "both") -> None:
        super().__init__(fold, input)
        if judge_order not in ("both", "fixed"):
            raise AbductError(f"judge_order={judge_order!r}: use both (each item judged in both orders) or fixed")
        self.judge_order = judge_order

    def _request(self, item: NyccItem) -> GenerationRequest:
        return GenerationRequest(item.visual(self.input), f'Caption: "{item.caption}"\n{EXPLAIN}')

    def plan(self, examples: Sequence[NyccItem], run: RunInfo) -> list[Stage]:
        self._visual_check(examples)
        corpus = list(run.corpus) or list(examples)
        stages = []
        for fold, group in by_fold(examples).items():
            pool = TextPool.of([i.explanation for i in corpus if i.fold != fold])
            items = [GenerationItem(i.id, self._request(i), (i.explanation,)) for i in group]
            stages.append(Stage(f"explanation-fold{fold}", Generate(items, pool if pool.texts else None, per_unit=64)))
        if not run.judged:
            return stages
        names = [s.name for s in stages]
        captions = {i.id: i.caption for i in examples}

        def judged(template: str) -> Callable[[Mapping[str, Records]], Judge]:
            def items(done: Mapping[str, Records]) -> Judge:
                made = [r for name in names for r in done[name]]
                return Judge([JudgeItem(r.id, r.prediction, tuple(r.references), question=captions[r.id])
                              for r in made], template, answers="text")
            return items

        judging = [Stage(JUDGE_STAGE, after=judged(JUDGE_TEMPLATE))]
        if self.judge_order == "both":
            judging.append(Stage(SWAPPED_STAGE, after=judged(SWAPPED_TEMPLATE)))
        return [*stages, *judging]

    def finish(self, examples: Sequence[NyccItem], records: Mapping[str, Records], run: RunInfo) -> Evaluation:
        made = {str(r.id): r.prediction for name, done in records.items()
                if name not in (JUDGE_STAGE, SWAPPED_STAGE) for r in done}
        empty = [i.id for i in examples if not made[i.id].strip()]
        if empty:  # the official scorer skips a fold with an empty explanation; here it is said
            raise AbductError(f"{len(empty)} generated explanation(s) are empty (first: {empty[0]}); the official "
                              "scorer skips a fold holding one, so no figure is given")
        metrics = evaluate_folds(self.kind, examples, made)
        predictions = [{"id": i.id, "fold": i.fold, "caption": i.caption, "prediction": made[i.id],
                        "reference": i.explanation} for i in examples]
        details: dict[str, Any] = {"input": self.input, "prompt": EXPLAIN, "scale": "x100",
                                   "fold": "all" if self.fold is None else self.fold,
                                   "rouge_l": "rougeL F, median of 1000 bootstrap means, numpy seed 1 per fold",
                                   "bleu": "sacreBLEU corpus score, defaults (13a, exp smoothing)"}
        units = {}
        if JUDGE_STAGE in records:
            first = {str(v.id): preference(v.raw) for v in records[JUDGE_STAGE]}
            verdicts: dict[str, float | None] = {k: None if v is None else float(v) for k, v in first.items()}
            details["judge_template"] = JUDGE_TEMPLATE
            details["judge_order"] = "fixed: the generated explanation is A"
            if SWAPPED_STAGE in records:
                swapped = {str(v.id): preference(v.raw, swapped=True) for v in records[SWAPPED_STAGE]}
                verdicts = {k: both_orders(first[k], swapped[k]) for k in first}  # the same items, swapped
                both_read = [k for k in first if first[k] is not None and swapped[k] is not None]
                if both_read:
                    agree = sum(first[k] == swapped[k] for k in both_read)
                    metrics["judge_order_consistency"] = 100.0 * agree / len(both_read)
                details["judge_swapped_template"] = SWAPPED_TEMPLATE
                details["judge_order"] = ("both: each item judged with the generated explanation as A, then as B; "
                                          "an item scores 1 or 0 when the two verdicts agree, 0.5 when they differ")
                for row in predictions:
                    row["judge_prefers_generated_swapped"] = swapped[row["id"]]
            for row in predictions:
                row["judge_prefers_generated"] = first[row["id"]]
                row["judge_preference"] = verdicts[row["id"]]
            read = {k: v for k, v in verdicts.items() if v is not None}
            metrics["judge_preference"] = 100.0 * sum(read.values()) / len(read) if read else 0.0
            metrics["judge_unparsed"] = len(verdicts) - len(read)
            units["judge_preference"] = UnitScores.means("instance", read)
            if any(getattr(v, "others", None) for v in records[JUDGE_STAGE]):  # several --judge specs
                from abduct_modelkit.agreement import judge_agreement

                details["judge_agreement"] = judge_agreement(records[JUDGE_STAGE], None,
                                                             label=lambda v: preference(v.raw), seed=run.settings.seed)
        return Evaluation(metrics, predictions, details=details, units=units)


def make_matching(spec: Spec, settings: Settings, *, fold: str = "all", input: Input = "pixels",
                  answer: AnswerMode = "auto") -> MatchingTask:
    """``nycc-matching[,fold=all|0..4][,input=pixels|description][,answer=auto|score|generate]``."""
    return MatchingTask(fold, input, answer)


def make_ranking(spec: Spec, settings: Settings, *, fold: str = "all", input: Input = "pixels",
                 answer: AnswerMode = "auto") -> RankingTask:
    """``nycc-ranking[,fold=all|0..4][,input=pixels|description][,answer=auto|score|generate]``."""
    return RankingTask(fold, input, answer)


def make_explanation(spec: Spec, settings: Settings, *, fold: str = "all", input: Input = "pixels",
                     judge_order: JudgeOrder = "both") -> ExplanationTask:
    """``nycc-explanation[,fold=all|0..4][,input=pixels|description][,judge_order=both|fixed]``."""
    return ExplanationTask(fold, input, judge_order)
