"""Prompt templates: defaults, overrides, one-line errors, which likelihood a score is."""

from __future__ import annotations

import pytest

from abduct import AbductError, Box, Region, VisualInput
from abduct.host import build_registry
from abduct_vlm.prompts import REGION_NOTE, Prompts, media_count, tidy, visual_parts
from abduct_vlm.testing import FakeOpenAIServer


def test_an_unknown_placeholder_is_one_line_before_loading() -> None:
    with pytest.raises(AbductError) as err:
        Prompts(template="{prompt} about {clue}")
    assert str(err.value) == "template has an unknown placeholder '{clue}' (known: {context}, {prompt}, {region})"
    with pytest.raises(AbductError, match="score_template has an unknown placeholder '{text}'"):
        Prompts(score_template="{text}")
    with pytest.raises(AbductError, match="answer_template .{context. is malformed"):
        Prompts(answer_template="{context")
    with pytest.raises(AbductError, match="non-empty"):
        Prompts(answer=" ")


def test_the_spec_overrides_a_template() -> None:
    with pytest.raises(AbductError, match="unknown placeholder '{nope}'"):
        build_registry().create("model", 'openai:m,base_url=http://x/v1,template="{nope}"')
    with FakeOpenAIServer() as server:  # the model asks the server what it serves when built
        model = build_registry().create("model", f'openai:m,base_url={server.base_url},template="Q: {{prompt}}"')
    assert model.prompts.generation(VisualInput(context="c"), "why?") == "Q: why?"


def test_defaults_fill_region_context_and_prompt() -> None:
    prompts = Prompts()
    region = Region((Box(1, 1, 4, 4),))
    with_all = prompts.generation(VisualInput("a.jpg", region, context="a wet street"), "What happened?")
    assert with_all == f"{REGION_NOTE} a wet street\nWhat happened?"
    assert prompts.generation(VisualInput("a.jpg"), None) == prompts.question
    assert tidy("  a   b \n\n c  ") == "a b\n\nc"


def test_a_text_is_scored_as_the_answer_and_images_by_a_fixed_answer() -> None:
    prompts = Prompts()
    visual = VisualInput("a.jpg", context="clue")
    prompt, answer = prompts.scoring(visual, "it rained")
    assert answer == "it rained" and prompt.startswith("clue")
    prompt, answer = prompts.scoring(VisualInput("p.jpg", related=(VisualInput("h.jpg"),)), "")
    assert answer == "yes" and "Answer yes or no" in prompt
    asked = Prompts(score="answer", answer_template="Is '{text}' plausible? Answer yes or no.", answer="Yes")
    assert asked.scoring(visual, "it rained") == ("Is 'it rained' plausible? Answer yes or no.", "Yes")
    with pytest.raises(AbductError, match="score=text scores a candidate text"):
        Prompts(score="text").scoring(visual, "")


def test_images_come_in_order_premise_then_hypotheses() -> None:
    visual = VisualInput("p.jpg", related=(VisualInput("h1.jpg"), VisualInput("h2.jpg")))
    assert [p.media for p in visual_parts(visual)] == ["p.jpg", "h1.jpg", "h2.jpg"]
    assert media_count([visual, VisualInput(context="text only")]) == 3
