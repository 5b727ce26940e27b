"""The demo's ``sherlock-uniter`` section (see ``abduct_regions.demo``)."""

from __future__ import annotations

from abduct_demo import DemoContext, DemoTable
from abduct_regions.demo import cross_encoder_section
from abduct_uniter._model import FAMILY


def sherlock_uniter(ctx: DemoContext) -> DemoTable:
    return cross_encoder_section(ctx, FAMILY, "Sherlock with UNITER (single-stream over text and region features)")
