"""The demo tests' plugin: the test kit's toy benchmark (dataset ``toy``, task ``toy-choice``), a
text-only scorer, and two demo sections, the second using what the first made."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np

from abduct import Registration, Settings, Spec, VisualInput, hookimpl
from abduct_demo import DemoContext, DemoTable
from abduct_testing.toy import ToyPlugin, write_toy_data


class TextOnly:
    """Scores a text by its word overlap with the input's context: sees no image at all."""

    accepts = frozenset({"context"})
    needs = frozenset({"context"})

    def score(self, visuals: Sequence[VisualInput], texts: Sequence[str]) -> np.ndarray:
        return np.array([len(set(str(v.context).split()) & set(t.split())) for v, t in zip(visuals, texts)], float)


def make_text_only(spec: Spec, settings: Settings) -> TextOnly:
    return TextOnly()


def toy_demo(ctx: DemoContext) -> DemoTable:
    """A demo section: the toy data, random against the text-only model, on toy-choice."""
    data = ctx.shared("toy-data", lambda: write_toy_data(ctx.dir("toy-data")))
    rows = ctx.evaluate({"random": "random", "text_only": "text-only"}, ["toy-choice"], data, section="toy")
    return DemoTable("Toy", [("toy-choice", "accuracy"), ("toy-choice", "n")], rows, note="a toy section")


def second_demo(ctx: DemoContext) -> DemoTable:
    data = ctx.shared("toy-data", lambda: write_toy_data(ctx.dir("other-data")))  # made by toy_demo already
    return DemoTable("Second", [("toy-choice", "n")], {"files": {"toy-choice": {"n": len(list(data.iterdir()))}}})


class ToyDemoPlugin(ToyPlugin):
    """The toy benchmark, the text-only model and the two sections."""

    @hookimpl
    def register_models(self) -> Iterator[Registration]:
        yield Registration("text-only", "Reads only the context", "demo_plugin:make_text_only")

    @hookimpl
    def register_demos(self) -> Iterator[Registration]:
        # registered out of order: the demo runs sections in name order
        yield Registration("toy-second", "Uses what the first made", "demo_plugin:second_demo")
        yield Registration("toy", "Toy section", "demo_plugin:toy_demo")
