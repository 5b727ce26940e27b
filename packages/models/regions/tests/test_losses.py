"""The losses by hand, and the batches: a pure function of (seed, step), split across ranks."""

from __future__ import annotations

import math

import torch

from abduct import VisualInput
from abduct.kit import Ranks
from abduct_regions.training import Example, Stream, choice_loss, triplet_loss


def test_triplet_loss_by_hand() -> None:
    positive = torch.tensor([1.0, 0.5])
    other_text = torch.tensor([0.9, 0.0])
    other_visual = torch.tensor([0.0, 0.6])
    # row 0: max(0, .2 - 1 + .9) + max(0, .2 - 1 + 0) = 0.1; row 1: 0 + max(0, .2 - .5 + .6) = 0.3
    assert math.isclose(float(triplet_loss(positive, other_text, other_visual, 0.2)), 0.2, rel_tol=1e-6)


def test_choice_loss_is_cross_entropy_over_choices() -> None:
    scores = torch.tensor([[2.0, 0.0, 0.0, 0.0]])
    expected = -math.log(math.exp(2) / (math.exp(2) + 3))
    assert math.isclose(float(choice_loss(scores, torch.tensor([0]))), expected, rel_tol=1e-6)


def examples(n: int) -> list[Example]:
    return [Example(VisualInput(f"{i // 2}.jpg"), (f"text {i}",)) for i in range(n)]


def test_batches_depend_only_on_seed_and_step_and_ranks_split_them() -> None:
    data = examples(10)
    whole = Stream(data, 4, seed=3, ranks=Ranks())
    again = Stream(data, 4, seed=3, ranks=Ranks())
    assert whole.batch(7) == again.batch(7)
    assert whole.batch(2) != Stream(data, 4, seed=4, ranks=Ranks()).batch(2)
    halves = [Stream(data, 4, seed=3, ranks=Ranks(r, 2)).batch(5) for r in range(2)]
    mine, partners = whole.batch(5)
    assert halves[0][0] + halves[1][0] == mine and halves[0][1] + halves[1][1] == partners
    for example, partner in zip(mine, partners):  # negatives: another text and another image
        assert partner.texts != example.texts and partner.visual.media != example.visual.media
