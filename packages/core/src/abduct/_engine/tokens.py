"""The token ledger: what a model's calls cost, counted per engine and added up per stage.

A model that knows what its calls cost keeps a running ``usage`` mapping (optional; a served
model reads the server's ``usage``, a local generator counts what it generated):

- ``requests``: answers made anew (sent to a server, generated);
- ``cached``: answers read back from the model's own cache (no tokens);
- ``prompt``, ``completion``, ``reasoning``: tokens (reasoning tokens are part of the
  completion tokens, as the OpenAI API counts them; 0 where not given).

The engines read it before and after each call. A model without it is counted by items: each
item computed is a request, with no tokens. Answers from the engines' caches are ``cached``.

Prices (``price_in=``, ``price_out=``: per million prompt and completion tokens, core options of
any model spec, as decoding options are) turn tokens into a cost: results.json's ``tokens.cost``
when every model of the run has them, and ``--budget cost=X``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, fields
from typing import Any

from abduct.contract.errors import AbductError

KEYS = ("requests", "cached", "prompt", "completion", "reasoning")


@dataclass
class Tokens:
    requests: int = 0
    cached: int = 0
    prompt: int = 0
    completion: int = 0
    reasoning: int = 0

    @property
    def spent(self) -> int:
        """The tokens a budget counts: prompt and completion (reasoning is within completion)."""
        return self.prompt + self.completion

    def add(self, other: Tokens) -> None:
        for f in fields(self):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))

    def minus(self, other: Tokens) -> Tokens:
        return Tokens(**{f.name: getattr(self, f.name) - getattr(other, f.name) for f in fields(self)})

    def as_dict(self) -> dict[str, int]:
        return asdict(self)

    @property
    def empty(self) -> bool:
        return not any(self.as_dict().values())

    @classmethod
    def of(cls, values: Mapping[str, Any]) -> Tokens:
        """From a usage mapping or a results.json block; what is missing or not a count is 0."""
        return cls(**{k: int(v) for k, v in values.items()
                      if k in KEYS and isinstance(v, int) and not isinstance(v, bool) and v >= 0})


PRICE_KEYS = ("price_in", "price_out")


@dataclass(frozen=True)
class Prices:
    """What a model's tokens cost, per million prompt (``price_in``) and completion tokens."""

    prompt: float
    completion: float

    def cost(self, tokens: Tokens) -> float:
        return (tokens.prompt * self.prompt + tokens.completion * self.completion) / 1e6

    @classmethod
    def pop(cls, options: dict[str, str], who: str) -> Prices | None:
        """The prices ``options`` give (taken out of them), None when they give none; one line for
        one without the other, or a value that is not a finite number of at least 0."""
        given = {k: options.pop(k) for k in PRICE_KEYS if k in options}
        if not given:
            return None
        if len(given) == 1:
            missing = next(k for k in PRICE_KEYS if k not in given)
            raise AbductError(f"{who}: {next(iter(given))}= needs {missing}= too (prices per million tokens)")
        values = []
        for key, text in given.items():
            try:
                value = float(text)
            except ValueError:
                value = math.nan
            if not math.isfinite(value) or value < 0:
                raise AbductError(f"{who}: {key}={text} is not a price (a number of at least 0, per million tokens)")
            values.append(value)
        return cls(values[0], values[1])


def model_usage(model: object) -> Tokens | None:
    """The model's running ``usage``, or None where it keeps none."""
    usage = getattr(model, "usage", None)
    return Tokens.of(usage) if isinstance(usage, Mapping) else None


def total(ledgers: Iterable[Tokens]) -> Tokens:
    out = Tokens()
    for ledger in ledgers:
        out.add(ledger)
    return out


def ledger_block(stages: Mapping[str, Tokens], judge: Tokens | None, cost: float | None = None) -> dict[str, Any]:
    """results.json's ``tokens``: per stage, the judge's apart, the total of both, and ``cost`` (at
    the models' prices) when every model has prices."""
    block: dict[str, Any] = {"stages": {stage: t.as_dict() for stage, t in stages.items()}}
    if judge is not None:
        block["judge"] = judge.as_dict()
    block["total"] = total([*stages.values(), *([judge] if judge is not None else [])]).as_dict()
    if cost is not None:
        block["cost"] = round(cost, 9)
    return block


def run_ledger(stage_tokens: Mapping[str, Tokens], model: Iterable[Tokens], judge: Tokens | None,
               cost: float | None = None) -> dict[str, Any]:
    """results.json's ``tokens`` of a run: per stage (``stage_tokens``), the judge apart; what the
    model's engines spent (``model``) outside any stage's units (a task's own calls) counts under
    the stage ``other``."""
    stages = {stage: t for stage, t in stage_tokens.items() if not t.empty}
    outside = total(model).minus(total(stage_tokens.values()))
    if not outside.empty:
        stages["other"] = outside
    return ledger_block(stages, judge, cost)


def added_blocks(blocks: Iterable[Mapping[str, Any] | None]) -> dict[str, Any]:
    """Shards' ``tokens`` blocks added up (``abduct merge``), or the invocations' of a resumed run; a
    shard without one counts nothing; ``cost`` only when every block has one."""
    stages: dict[str, Tokens] = {}
    judge: Tokens | None = None
    costs: list[float | None] = []
    for block in blocks:
        if not isinstance(block, Mapping):
            continue
        given = block.get("cost")
        costs.append(float(given) if isinstance(given, (int, float)) and not isinstance(given, bool) else None)
        for stage, values in (block.get("stages") or {}).items():
            stages.setdefault(stage, Tokens()).add(Tokens.of(values))
        if isinstance(block.get("judge"), Mapping):
            judge = judge or Tokens()
            judge.add(Tokens.of(block["judge"]))
    cost = sum(c for c in costs if c is not None) if costs and None not in costs else None
    return ledger_block(stages, judge, cost)


def summary_line(block: Mapping[str, Any]) -> str:
    """The end-of-run summary's line after ``tokens:``: ``1,234 (prompt 1,000, completion 234) in 10 requests, 2 cached``."""
    def said(t: Tokens) -> str:
        if not t.spent:  # a model that counts no tokens (a scorer, a plugin's model): its calls and cache hits
            return f"none counted ({t.requests:,} answers computed, {t.cached:,} from a cache)"
        parts = f"prompt {t.prompt:,}, completion {t.completion:,}" + (
            f", of which reasoning {t.reasoning:,}" if t.reasoning else "")
        return f"{t.spent:,} ({parts}) in {t.requests:,} requests, {t.cached:,} cached"

    line = said(Tokens.of(block.get("total") or {}))
    if isinstance(block.get("judge"), Mapping):
        line += f"; judge: {said(Tokens.of(block['judge']))}"
    if isinstance(block.get("cost"), (int, float)):
        line += f"; cost {block['cost']:.6g} at the given prices"
    return line
