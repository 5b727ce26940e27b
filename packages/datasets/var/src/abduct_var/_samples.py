"""What the generator learns from and is asked: a chain of slots with one target.

A sample is a list of rows into an event-embedding table (``-1`` for the masked hypothesis
slot) and the target slot. The explanation sample of an example is its counted chain with the
hypothesis masked and targeted; each premise event gives a one-slot sample (the ``var-premise``
task shows one event at a time). Requests become samples the same way (``samples_for_requests``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import torch

from abduct import AbductError, GenerationRequest
from abduct_var._encode import Event, EventEncoder, slot_event
from abduct_var._net import PAD
from abduct_var.inputs import chain_slots, event_input
from abduct_var.records import MAX_EVENTS, VarExample


@dataclass(frozen=True)
class Sample:
    rows: tuple[int, ...]
    target: int
    sentence: str = ""


def training_samples(examples: Sequence[VarExample], videos: Path) -> tuple[list[Sample], list[Event]]:
    """The samples of ``examples`` and the events their rows index, in first-seen order."""
    events: dict[Event, int] = {}

    def row(i: int, x: VarExample) -> int:
        slot = event_input(x.counted[i], videos)
        event = slot_event(slot)
        assert event is not None
        return events.setdefault(event, len(events))

    samples = []
    for x in examples:
        rows = tuple(-1 if i == x.hypothesis else row(i, x) for i in range(len(x.counted)))
        samples.append(Sample(rows, x.hypothesis, x.counted[x.hypothesis].sentence))
        samples.extend(Sample((row(i, x),), 0, x.counted[i].sentence) for i in x.premise_positions)
    return samples, list(events)


def samples_for_requests(requests: Sequence[GenerationRequest]) -> tuple[list[Sample], list[Event]]:
    """A request's slots as a sample: the masked slot is the target, else the first slot."""
    events: dict[Event, int] = {}
    samples = []
    for request in requests:
        slots = chain_slots(request.visual)[:MAX_EVENTS]
        rows, target = [], None
        for i, slot in enumerate(slots):
            event = slot_event(slot)
            if event is None:
                if target is not None:
                    raise AbductError("a VAR chain has one masked slot, this request has several")
                target = i
                rows.append(-1)
            else:
                rows.append(events.setdefault(event, len(events)))
        samples.append(Sample(tuple(rows), 0 if target is None else target))
    return samples, list(events)


def embed(encoder: EventEncoder, events: Sequence[Event],
          standard: tuple[torch.Tensor, torch.Tensor] | None = None) -> torch.Tensor:
    """The embedding table, standardised by ``standard`` (mean, std), with a zero row last
    (what ``-1`` rows index).

    Standardising matters: a random-init or frozen CLIP tower gives embeddings that share a
    large common direction (cosine above 0.99 between any two events of the synthetic corpus under clip:tiny), and the differences
    that carry colour and shape are small next to it."""
    table = torch.from_numpy(encoder.encode(events))
    if standard is not None:
        table = (table - standard[0]) / standard[1]
    return torch.cat([table, torch.zeros((1, encoder.dim))])


def standardisation(table: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-dimension mean and standard deviation of the training events' embeddings."""
    return table.mean(0), table.std(0).clamp_min(1e-6)


def collate(samples: Sequence[Sample], table: torch.Tensor,
            tokens: Sequence[Sequence[int]] | None = None) -> dict[str, torch.Tensor]:
    width = max(len(s.rows) for s in samples)
    rows = torch.full((len(samples), width), -1, dtype=torch.long)
    padding = torch.ones((len(samples), width), dtype=torch.bool)
    masked = torch.zeros((len(samples), width), dtype=torch.bool)
    for i, s in enumerate(samples):
        rows[i, : len(s.rows)] = torch.tensor(s.rows)
        padding[i, : len(s.rows)] = False
        masked[i, : len(s.rows)] = torch.tensor([r < 0 for r in s.rows])
    batch = {"events": table[rows], "masked": masked, "padding": padding,
             "target": torch.tensor([s.target for s in samples])}
    if tokens is not None:
        longest = max(len(t) for t in tokens)
        ids = torch.full((len(tokens), longest), PAD, dtype=torch.long)
        for i, t in enumerate(tokens):
            ids[i, : len(t)] = torch.tensor(t)
        batch["tokens"] = ids
    return batch
