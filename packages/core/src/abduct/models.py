"""Building a model from its spec: one namespace for scorers and generators.

Decoding options (``max_new_tokens``, ``num_beams``, ``do_sample``, ``temperature``,
``top_p``) are the core's: they are taken out of the spec before the model's own options are
checked, and given only to models that generate.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from abduct.errors import AbductError
from abduct.options import bind_options
from abduct.plugins import Registry
from abduct.protocols import SCORING_PROTOCOLS, Decoding, Generator
from abduct.spec import Settings, Spec

DECODING_KEYS = tuple(f.name for f in fields(Decoding) if f.name != "seed")


@dataclass(frozen=True)
class LoadedModel:
    spec: Spec
    model: Any
    decoding: Decoding

    @property
    def scores(self) -> bool:
        return isinstance(self.model, SCORING_PROTOCOLS)

    @property
    def generates(self) -> bool:
        return isinstance(self.model, Generator)

    @property
    def abilities(self) -> list[str]:
        return [name for name, able in (("score", self.scores), ("generate", self.generates)) if able]

    @property
    def fingerprint(self) -> str:
        return str(getattr(self.model, "fingerprint", self.spec))


def load_model(spec: Spec | str, settings: Settings, registry: Registry) -> LoadedModel:
    """Build the model ``spec`` names; its decoding options are split off for generation."""
    spec = Spec.parse(spec) if isinstance(spec, str) else spec
    options = spec.option_dict()
    decoding_given = {k: options.pop(k) for k in DECODING_KEYS if k in options}
    decoding = Decoding(seed=settings.seed, **bind_options("model", spec.name, Decoding, decoding_given))
    model_spec = Spec(spec.name, spec.argument, spec.tag, tuple(options.items()))
    model = registry.create("model", model_spec, settings)
    loaded = LoadedModel(spec, model, decoding)
    if not loaded.abilities:
        raise AbductError(f"model '{spec.name}' neither scores nor generates (see abduct.protocols)")
    if decoding_given and not loaded.generates:
        raise AbductError(f"model '{spec.name}' does not generate; decoding options "
                          f"{', '.join(sorted(decoding_given))} do not apply")
    return loaded
