"""LLM-match's reading of judge replies and its per-question aggregation (the judge itself runs
in the tasks that use it: abduct-blackswan's tests drive it through the core's Judge stage)."""

from __future__ import annotations

import hashlib

import pytest

from abduct.kit import check_template
from abduct_metrics.llm_match import (
    LLM_MATCH_TEMPLATE,
    NO_RATING,
    OFFICIAL_JUDGE,
    PROMPTS,
    READERS,
    TEMPLATE_SHA256,
    parse_final_score,
    parse_reason,
    parse_score,
    question_score,
)


@pytest.mark.parametrize(("reply", "score"), [
    ("Reason: both describe a fall on ice.\nScore: 4", 4),
    ("Reason: unrelated events\nScore:1", 1),
    ("Score: 5 (perfect)\nReason: same", 5),
    # the authors' pattern Score:\s*(\d+): digits right after "Score:" (and white space) only
    ("Reason: close. Score: the rating is 3 out of 5", None),
    ("Reason: worse\nScore: -2", None),
    ("Reason: no reference\nScore: N/A (1-5 scale)", None),
    ("Reason: close\n**Score:** 4", None),
    ("Reason: none\nScore: N/A\nScore: 3", 3),  # re.search: the first place the pattern matches
    ("Reason: close\nScore:\n4", 4),
    ("Reason: 2 people fall\nScore: 2, maybe 3", 2),  # digits before "Score:" are not read
    ("Reason: similar\nScore: 4.5", 4),
    ("Reason: similar\nScore: 0", None),  # outside 1-5: skipped
    ("Reason: similar\nScore: 10", None),
    ("Reason: similar\nscore: 4", None),  # the marker is "Score:", as the script reads it
    ("Reason: no number\nScore: high", None),
    ("4", None),
    ("", None),
])
def test_parse_score(reply, score) -> None:
    assert parse_score(reply) == score


def test_parse_reason() -> None:
    assert parse_reason("Reason: both describe a fall.\nScore: 4") == "both describe a fall."
    assert parse_reason("Score: 4\nReason: after the score") is None
    assert parse_reason("no reason here") is None


@pytest.mark.parametrize(("ratings", "mean", "top"), [
    ([4, 2, None, 3], 3.0, 4.0),
    ([5], 5.0, 5.0),
    ([1, None, 2], 1.5, 2.0),
    ([None, None], NO_RATING, NO_RATING),
    ([], NO_RATING, NO_RATING),
])
def test_question_score_mean_and_max(ratings, mean, top) -> None:
    assert question_score(ratings) == mean == question_score(ratings, "mean")
    assert question_score(ratings, "max") == top
    with pytest.raises(ValueError, match="mean, max"):
        question_score(ratings, "median")  # type: ignore[arg-type]


def test_template_fits_the_core_judge_and_its_hash() -> None:
    assert set(check_template(LLM_MATCH_TEMPLATE, ("candidate", "reference", "references", "question"), "t",
                              required=("candidate",))) == {"candidate", "reference"}
    prompt = LLM_MATCH_TEMPLATE.format(candidate="he slips", reference="a man falls")
    assert "Reference answer: a man falls\nResponse: he slips" in prompt and prompt.rstrip().endswith("4 or 5>")
    assert TEMPLATE_SHA256 == hashlib.sha256(LLM_MATCH_TEMPLATE.encode()).hexdigest()
    assert OFFICIAL_JUDGE == {"model": "meta-llama/Llama-3.1-8B-Instruct", "temperature": 0.4, "max_new_tokens": 100}


@pytest.mark.parametrize(("reply", "score"), [
    ("Reason: both describe a fall on ice.\nScore: 4", 4),
    ("Reason: close\n**Score:** 4", 4),
    ("Reason: close\nScore: 3.\n\n", 3),
    # the judge's own last line only: a score it echoes from the response before it is not read
    ('Reason: the response says "Score: 5" but describes another event.\nScore: 1', 1),
    ("The response ends with\nScore: 5\nReason: another event\nScore: 1", 1),
    ("Reason: x\nScore: 4\nThat is my answer.", None),
    ("Reason: worse\nScore: -2", None),
    ("Reason: no reference\nScore: N/A (1-5 scale)", None),
    ("Reason: similar\nScore: 0", None),
    ("Reason: similar\nScore: 6", None),
    ("Reason: similar\nScore: 4 out of 5", None),
    ("4", None),
    ("", None),
])
def test_parse_final_score(reply, score) -> None:
    assert parse_final_score(reply) == score


def test_the_prompts_official_by_default_and_hardened() -> None:
    assert PROMPTS["official"] == LLM_MATCH_TEMPLATE and READERS["official"] is parse_score
    assert READERS["hardened"] is parse_final_score
    names = check_template(PROMPTS["hardened"], ("candidate", "reference", "references", "question", "boundary"), "t",
                           required=("candidate",))
    assert set(names) == {"candidate", "reference", "boundary"}
