"""``blackswan-gen``: BlackSwan's generative questions (Forecaster, Detective, Reporter), scored
as the authors' scripts score them.

**What the model sees and is asked** (``inputs.py``'s clips and clip sentence, then the
question: the record's own when it has one, else ours; the request follows the authors'
conventions, three one-sentence scenarios for Forecaster and Detective, one explanation of one
or two sentences for Reporter):

| task | clips | question (ours) | asked for |
|---|---|---|---|
| Forecaster | the pre-event clip | what could happen next? | three one-sentence predictions, numbered |
| Detective | the pre-event clip, then the post-event clip (the middle hidden) | what could have happened in between? | three one-sentence explanations, numbered |
| Reporter | the whole video, or the pre-event, event and post-event clips | what happened? | one or two sentences |

``setup=text`` gives the question alone, no video (the text-only row). The answer becomes a set
of responses with ``abduct_metrics.responses.split_responses``: list items (a Python or JSON
list, numbered or bulleted lines), else lines, else sentences for Forecaster and Detective; the
whole answer, one response, for Reporter. The references are the question's ``gt_ref_ans``.

**Metrics** (over all questions of the run, and per task under ``forecaster``, ``detective``
and ``reporter``, each with its ``n``):

- ``bertscore_hungarian_avg`` / ``_max`` (abduct-metrics' ``bertscore-hungarian``, the
  scorer of BlackSwan's ``metric/eval.py``): bert-score with ``distilbert-base-uncased`` at
  layer 5, no idf, no rescaling, gold sentence as candidate and response as reference,
  precision; gold and responses matched one to one (Hungarian); per question the mean and the
  maximum of the matched pairs; a question without responses scores 0.
- ``llm_match`` (with ``--judge``): the judge rates every gold x response pair from 1 to 5
  (``abduct_metrics.llm_match``: its prompt, ``Score:`` parsing, 2.5 for a question with no
  parsed rating); per question the mean of its ratings (``llm_match=mean``, the kept script) or
  the maximum (``llm_match=max``, the earlier GPT-4o script). The first ``judged_responses``
  responses of a question are judged (default 5; ``llm_match_unjudged`` counts the pairs left
  out). The core's judge decodes greedily; the authors' Llama-3.1-8B-Instruct judge sampled at
  temperature 0.4. ``llm_match_prompt=official`` (the default) asks and reads as the authors'
  script does; ``llm_match_prompt=hardened`` is abduct's prompt, which a response cannot talk
  into a score (``abduct_metrics.llm_match.PROMPTS``); results.json's judge block has its hash.

Every figure is a mean over questions; "overall" pools the questions of the three tasks (the
authors report per task only). Intervals resample questions, clustered by video.

Stages: ``generate-<task>-<half>`` (one generation per question; a choosing generator such as
``random`` is offered the reference answers of the same task's questions about videos of the
other half of the split, never its own, unless every video falls in one half), then, with
``--judge``, ``llm-match-r<j>``: the j-th response of every question that has one, against each of
its references (one judge call per reference, answers read as ratings: ``Judge(...,
answers="text")``); the judged item keeps its question's id, so ``--shard`` keeps it with its
generation.

With two ``--judge`` specs or more, ``details.judge_agreement``
(``abduct_modelkit.agreement.judge_agreement``) compares the judges' ratings of every gold x
response pair: each judge's mean rating (``score``), their Krippendorff's α (nominal: a 4 and a 5
disagree as much as a 1 and a 5), and each further judge against the first (Cohen's κ, the paired
difference of their mean ratings); the release has no human ratings, so none is compared with people.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, cast

from abduct import (
    COUNT,
    AbductError,
    Evaluation,
    Generate,
    Generated,
    GenerationItem,
    GenerationRequest,
    Judge,
    JudgeItem,
    Range,
    Records,
    RunInfo,
    Settings,
    Spec,
    Stage,
    TextPool,
    UnitScores,
    higher,
)
from abduct_blackswan.inputs import INPUT_OPTIONS, SETUPS, Setup, question_input
from abduct_blackswan.records import GenQuestion

TASKS = ("Forecaster", "Detective", "Reporter")
SET_TASKS = frozenset({"Forecaster", "Detective"})  # asked for three scenarios, split into responses
AVG, MAX, LLM = "bertscore_hungarian_avg", "bertscore_hungarian_max", "llm_match"
DEFAULT_BERTSCORE_MODEL = "distilbert-base-uncased"
QUESTIONS = {
    "Forecaster": "What could happen next?",
    "Detective": "What could have happened in between?",
    "Reporter": "What happened in the video?",
}
REQUESTS = {
    "Forecaster": "Give three different possibilities, one sentence each, as a numbered list.",
    "Detective": "Give three different possibilities, one sentence each, as a numbered list.",
    "Reporter": "Explain in one or two sentences.",
}
GENERATE = "generate"
JUDGE = "llm-match"
BERTSCORE_RANGE = higher(-1.0, 1.0)
LLM_RANGE = higher(1.0, 5.0)


def responses_of(task: str, answer: str) -> list[str]:
    """The answer as a set of responses: split into items for Forecaster and Detective, whole
    for Reporter."""
    from abduct_metrics.responses import split_responses

    return split_responses(answer, "items" if task in SET_TASKS else "none")


def half_of(video: str) -> int:
    """A stable half of the split for each video (sha256, not Python's salted hash)."""
    return hashlib.sha256(video.encode()).digest()[0] % 2


def _pool(questions: Sequence[GenQuestion], task: str, half: int) -> TextPool | None:
    """The other half's reference answers, as a choosing generator offers them: for Forecaster
    and Detective a question's references as one numbered list, for Reporter each one alone."""
    others = [q for q in questions if half_of(q.video) != half and q.references]
    others = others or [q for q in questions if q.references]  # every video in one half: a tiny split
    same_task = [q for q in others if q.task == task] or others
    if task in SET_TASKS:
        texts = ["\n".join(f"{k + 1}. {r}" for k, r in enumerate(q.references)) for q in same_task]
    else:
        texts = [r for q in same_task for r in q.references]
    return TextPool.of(texts) if texts else None


def _generated(records: Mapping[str, Records]) -> dict[str, Generated]:
    return {str(r.id): r for name, done in records.items() if name.startswith(GENERATE) for r in done}


class GenTask:
    """Forecaster, Detective and Reporter answers scored with BERTScore-Hungarian and, with a
    judge, LLM-match."""

    default_split = "validation"
    dataset = "blackswan-gen"
    limit_unit = "questions"
    optional_inputs = frozenset({"context"})  # random reads none of it; every model that answers does
    input_options = INPUT_OPTIONS
    metric_info = {
        AVG: BERTSCORE_RANGE, MAX: BERTSCORE_RANGE, LLM: LLM_RANGE,
        f"*.{AVG}": BERTSCORE_RANGE, f"*.{MAX}": BERTSCORE_RANGE, f"*.{LLM}": LLM_RANGE, "*.n": COUNT,
        "n": COUNT, "empty_answers": COUNT, "llm_match_pairs": COUNT, "llm_match_unparsed": COUNT,
        "llm_match_unjudged": COUNT,
    }

    def __init__(self, setup: Setup = "video", bertscore_model: str = DEFAULT_BERTSCORE_MODEL,
                 bertscore_layers: int | None = None, llm_match: str = "mean", judged_responses: int = 5,
                 llm_match_prompt: str = "official") -> None:
        if setup not in SETUPS:
            raise AbductError(f"setup must be one of {', '.join(SETUPS)}, got {setup!r}")
        self.setup: Setup = setup
        self.bertscore_model = bertscore_model
        self.bertscore_layers = bertscore_layers
        self.llm_match = llm_match
        self.judged_responses = judged_responses
        self.llm_match_prompt = llm_match_prompt

    def _bertscore(self, run: RunInfo) -> Any:
        options: dict[str, Any] = {"model": self.bertscore_model, "split": "lines"}
        if self.bertscore_layers is not None:
            options["num_layers"] = self.bertscore_layers
        return run.metric("bertscore-hungarian", **options)

    def request(self, question: GenQuestion) -> GenerationRequest:
        """The clips and the question (``inputs.question_input``), and what is asked for."""
        asked = question.question or QUESTIONS[question.task]
        return GenerationRequest(question_input(question.task, question.clips, asked, self.setup),
                                 REQUESTS[question.task])

    def plan(self, questions: Sequence[GenQuestion], run: RunInfo) -> list[Stage]:
        hidden = next((q for q in questions if not q.references), None)
        if hidden is not None:
            raise AbductError(f"blackswan-gen: question {hidden.id} ({hidden.file}, {hidden.place}) has no reference "
                              f"answers (gt_ref_ans): the {run.split} split hides them, so there is nothing to score "
                              "against; evaluate the validation split")
        try:  # a missing metric package or model fails before generating
            self._bertscore(run)
        except AbductError as exc:
            raise AbductError(f"{exc} (blackswan-gen takes it as blackswan-gen,bertscore_model=DIR[,bertscore_layers=N])"
                              ) from None
        corpus: Sequence[GenQuestion] = run.corpus
        stages = []
        for task in TASKS:
            for half in (0, 1):
                chosen = [q for q in questions if q.task == task and half_of(q.video) == half]
                if chosen:
                    items = [GenerationItem(q.id, self.request(q), q.references) for q in chosen]
                    stages.append(Stage(f"{GENERATE}-{task.lower()}-{half}", Generate(items, _pool(corpus, task, half))))
        if not run.judged:
            return stages
        return stages + [Stage(f"{JUDGE}-r{j + 1}", after=_judge(questions, j, self.llm_match_prompt)) for j in range(self.judged_responses)]

    def finish(self, questions: Sequence[GenQuestion], records: Mapping[str, Records], run: RunInfo) -> Evaluation:
        generated = _generated(records)
        scored = [q for q in questions if q.id in generated]
        said = {q.id: responses_of(q.task, generated[q.id].prediction) for q in scored}
        result = self._bertscore(run).compute({q.id: "\n".join(said[q.id]) for q in scored},
                                              {q.id: list(q.references) for q in scored})
        out = [{"id": q.id, "q_id": q.q_id, "task": q.task, "video": q.video, "prediction": generated[q.id].prediction,
                "responses": said[q.id], "references": list(q.references),
                AVG: result.per_sample[q.id][AVG], MAX: result.per_sample[q.id][MAX],
                "matched": [[int(i), int(j), s] for i, j, s in result.info["pairs"][q.id]]} for q in scored]
        details: dict[str, Any] = {
            "setup": self.setup, "questions": dict(QUESTIONS), "requests": dict(REQUESTS),
            "responses": "list items, lines or sentences for Forecaster and Detective; the whole answer for Reporter",
            "bertscore": {**result.info["configuration"], "hash": result.info["hash"]},
            "overall": "means over all questions of the run (the authors report each task alone)",
        }
        if run.judged:
            details["llm_match"] = _rate(out, records, self.llm_match, self.judged_responses, self.llm_match_prompt)
            if any(getattr(v, "others", None) for name, done in records.items() if name.startswith(f"{JUDGE}-")
                   for v in done):  # several --judge specs
                details["judge_agreement"] = _agreement(records, self.llm_match_prompt, run.settings.seed)
        else:
            details["llm_match"] = "not run (no --judge)"
        metrics, units = _tables(out, run.judged)
        metrics["empty_answers"] = sum(not r["responses"] for r in out)
        if run.judged:
            pairs = [r for record in out for r in record["llm_ratings"]]
            metrics["llm_match_pairs"] = len(pairs)
            metrics["llm_match_unparsed"] = sum(r["rating"] is None for r in pairs)
            metrics["llm_match_unjudged"] = sum(len(r["references"]) * max(0, len(r["responses"]) - self.judged_responses)
                                                for r in out)
        return Evaluation(metrics, out, details=details, units=units)

    def view(self, record: Mapping[str, Any], questions: Mapping[str, GenQuestion]) -> dict[str, Any] | None:
        """samples.html: the question, the responses, the references, the scores and the matching."""
        question = questions.get(str(record.get("id")))
        if question is None or "responses" not in record:
            return None
        texts = [{"label": question.task, "text": self.request(question).visual.context or ""}]
        texts += [{"label": f"response {k + 1}", "text": str(t)} for k, t in enumerate(record["responses"])]
        texts += [{"label": f"reference {k + 1}", "text": str(t)} for k, t in enumerate(record["references"])]
        fields: dict[str, Any] = {key: round(float(record[key]), 4) for key in (AVG, MAX, LLM) if key in record}
        fields["matched (reference-response: score)"] = "; ".join(
            f"{i + 1}-{j + 1}: {s:.3f}" for i, j, s in record.get("matched", []))
        fields["video"] = question.video
        return {"texts": texts, "fields": fields, "score": float(record[AVG]), "category": question.task}


def _judge(questions: Sequence[GenQuestion], response: int, prompt: str) -> Callable[[Mapping[str, Records]], Judge]:
    """The judge's stage for the ``response``-th response of every question that has one, against
    each of its references (one call per reference, the item keeping the question's id)."""
    from abduct_metrics.llm_match import PROMPTS

    def build(done: Mapping[str, Records]) -> Judge:
        generated = _generated(done)
        items = []
        for q in questions:
            if q.id not in generated or not q.references:
                continue
            said = responses_of(q.task, generated[q.id].prediction)
            if response < len(said):
                items.append(JudgeItem(q.id, said[response], tuple(q.references)))
        return Judge(items, PROMPTS[prompt], answers="text")

    return build


def _rate(out: list[dict[str, Any]], records: Mapping[str, Records], aggregation: str,
          judged_responses: int, prompt: str) -> dict[str, Any]:
    """Each question's ratings (``llm_ratings``) and LLM-match (``llm_match``), from the judge's
    stages; what results.json says of the setting."""
    from abduct_metrics.llm_match import NO_RATING, OFFICIAL_JUDGE, PROMPTS, READERS, parse_reason, question_score

    template, parse_score = PROMPTS[prompt], READERS[prompt]

    ratings: dict[str, list[dict[str, Any]]] = {r["id"]: [] for r in out}
    for name, done in records.items():
        if not name.startswith(f"{JUDGE}-"):
            continue
        response = int(name.rsplit("-r", 1)[1]) - 1
        for verdict in done:
            for gold, raw in enumerate(verdict.answers):
                ratings[str(verdict.id)].append({"reference": gold, "response": response, "rating": parse_score(raw),
                                                    "reason": parse_reason(raw), "raw": raw})
    for record in out:
        record["llm_ratings"] = sorted(ratings[record["id"]], key=lambda r: (r["reference"], r["response"]))
        record[LLM] = question_score([r["rating"] for r in record["llm_ratings"]], aggregation)  # type: ignore[arg-type]
    return {"aggregation": aggregation, "scale": "1-5", "no_rating": NO_RATING, "prompt": prompt, "template": template,
            "template_sha256": hashlib.sha256(template.encode()).hexdigest(), "judged_responses": judged_responses, "official_judge": OFFICIAL_JUDGE,
            "decoding": "greedy (abduct's judges); the official judge sampled at temperature 0.4"}


@dataclass(frozen=True)
class _Pair:
    """One gold x response pair's rating by a judge, as ``judge_agreement`` reads a judge's record
    (``others``: the further judges' ratings of the pair, by spec)."""

    id: str
    raw: str
    others: dict[str, _Pair] = field(default_factory=dict)


def _agreement(records: Mapping[str, Records], prompt: str, seed: int) -> dict[str, Any]:
    """Several judges' ratings of every gold x response pair (the units): each judge's mean rating,
    Krippendorff's α (nominal: the ratings 1-5 as categories) and each further judge against the
    first (κ, the paired difference of their mean ratings); an unparsed rating is left out."""
    from abduct_metrics.llm_match import READERS
    from abduct_modelkit.agreement import judge_agreement

    pairs = [_Pair(f"{v.id}/{name}/g{gold + 1}", raw,
                   {spec: _Pair("", other.answers[gold]) for spec, other in getattr(v, "others", {}).items()})
             for name, done in records.items() if name.startswith(f"{JUDGE}-")
             for v in done for gold, raw in enumerate(v.answers)]
    return judge_agreement(pairs, None, label=lambda pair: READERS[prompt](pair.raw),
                           score=lambda rating: float(cast(int, rating)), seed=seed)


def _tables(out: Sequence[Mapping[str, Any]], judged: bool) -> tuple[dict[str, Any], dict[str, UnitScores]]:
    """The means over all questions and per task, and the questions behind each (clustered by video)."""
    keys = (AVG, MAX, LLM) if judged else (AVG, MAX)

    def means(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        values = {k: sum(float(r[k]) for r in rows) / len(rows) for k in keys} if rows else {}
        return {**values, "n": len(rows)}

    video_of = {r["id"]: r["video"] for r in out}

    def units_of(rows: Sequence[Mapping[str, Any]], key: str) -> UnitScores:
        return UnitScores.means("question", {r["id"]: float(r[key]) for r in rows}, scale=1.0).clustered("video", video_of)

    metrics: dict[str, Any] = means(out)
    units = {key: units_of(out, key) for key in keys} if out else {}
    for task in TASKS:
        mine = [r for r in out if r["task"] == task]
        if mine:
            metrics[task.lower()] = means(mine)
            units.update({f"{task.lower()}.{key}": units_of(mine, key) for key in keys})
    return metrics, units


def make_gen_task(
    spec: Spec,
    settings: Settings,
    *,
    setup: Setup = "video",
    bertscore_model: str = DEFAULT_BERTSCORE_MODEL,
    bertscore_layers: int | None = None,
    llm_match: Literal["mean", "max"] = "mean",
    judged_responses: Annotated[int, Range(ge=1)] = 5,
    llm_match_prompt: Literal["official", "hardened"] = "official",
) -> GenTask:
    """``blackswan-gen[,setup=video|text][,bertscore_model=NAME|DIR][,bertscore_layers=N][,llm_match=mean|max]
    [,judged_responses=N][,llm_match_prompt=official|hardened]`` (``llm_match_prompt``: the authors' judge prompt or
    abduct's hardened one; ``bertscore_layers``: bert-score's layer for the model by default, 5 for
    distilbert-base-uncased)."""
    return GenTask(setup, bertscore_model, bertscore_layers, llm_match, judged_responses, llm_match_prompt)
