"""A model the composed models' tests wrap."""

from __future__ import annotations

from collections.abc import Sequence

from abduct import Decoding, GenerationRequest, TextPool


class Parrot:
    """Generates its prompt back: a model that does not score."""

    def generate(self, requests: Sequence[GenerationRequest], decoding: Decoding, pool: TextPool | None) -> list[str]:
        return [r.prompt or "" for r in requests]
