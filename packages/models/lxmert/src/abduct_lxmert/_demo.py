"""The demo's ``sherlock-lxmert`` section (see ``abduct_regions.demo``)."""

from __future__ import annotations

from abduct_demo import DemoContext, DemoTable
from abduct_lxmert._model import FAMILY
from abduct_regions.demo import cross_encoder_section


def sherlock_lxmert(ctx: DemoContext) -> DemoTable:
    return cross_encoder_section(ctx, FAMILY, "Sherlock with LXMERT (cross-encoder on region features, clue region first)")
