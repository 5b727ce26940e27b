"""Which inputs a model takes, checked before it is called.

A model declares ``accepts`` (what it can use, from ``FEATURES``; default ``{"image"}``) and
``needs`` (what it cannot do without; default nothing). A task declares
``optional_inputs``: features its inputs carry that a model may go without and still be
evaluated as the benchmark intends (Sherlock's clue, which the paper's CLIP models never
see; the image and region, which its text-only T5 row never sees). Any other feature a
model does not accept is refused before the model is called, with one line naming the model
and what it lacks; optional features it does not accept are removed from its inputs and
listed in results.json (``inputs.ignored``) — never dropped silently. Where the task has an
option that gives its inputs without a refused feature (``input_options``), the refusal names
the task with that option (``blackswan-mcq,setup=text``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from abduct._declare.traits import model_traits
from abduct.contract.errors import AbductError
from abduct.contract.records import VisualInput


def _listing(features: Iterable[str]) -> str:
    return ", ".join(sorted(features)) or "nothing"


class InputPolicy:
    """Checks and trims every input on its way to one model; remembers what it removed."""

    def __init__(self, model: Any, model_name: str, optional: Iterable[str] = ()) -> None:
        self.model_name = model_name
        traits = model_traits(model, model_name)
        self.accepts, self.needs = traits.accepts, traits.needs
        self.optional = frozenset(optional)
        self.ignored: set[str] = set()
        self.remedies: Mapping[str, str] = {}  # feature -> the task spec whose inputs go without it

    def prepare(self, visual: VisualInput) -> VisualInput:
        """``visual`` as the model will see it; AbductError when it cannot take it."""
        present = visual.features()
        lacking = present - self.accepts - self.optional
        if lacking:
            raise AbductError(
                f"model '{self.model_name}' cannot take {_listing(lacking)} inputs, which this task gives "
                f"(it accepts {_listing(self.accepts)}){self._remedy(lacking)}"
            )
        unused = present - self.accepts
        if unused:
            self.ignored |= unused
            visual = visual.without(frozenset(unused))
        missing = self.needs - visual.features()
        if missing:
            raise AbductError(f"model '{self.model_name}' needs {_listing(missing)} inputs, which this task does not give")
        return visual

    def _remedy(self, lacking: Iterable[str]) -> str:
        covered = sorted(f for f in lacking if f in self.remedies)
        if not covered:
            return ""
        specs = ", ".join(dict.fromkeys(self.remedies[f] for f in covered))
        return f"; the task without {_listing(covered)} inputs is {specs}"

    def prepare_all(self, visuals: Iterable[VisualInput]) -> list[VisualInput]:
        return [self.prepare(v) for v in visuals]
