"""Building a model from its spec, and the engines through which everything calls it.

Decoding options (``max_new_tokens``, ``num_beams``, ``do_sample``, ``temperature``,
``top_p``) are the core's: they are taken out of the spec before the model's own options are
checked, and given only to models that generate. So are the prices (``price_in``,
``price_out``, per million tokens: ``abduct._engine.tokens.Prices``), which the engines carry.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from abduct._declare.options import bind_options
from abduct._declare.traits import ModelTraits, model_traits
from abduct._engine.generation import GenerationEngine
from abduct._engine.inputs import InputPolicy
from abduct._engine.scoring import ScoringEngine, Timer
from abduct._engine.tokens import Prices
from abduct._registry.registry import Registry, get_registry
from abduct.contract.errors import AbductError
from abduct.contract.protocols import Decoding
from abduct.contract.spec import Settings, Spec
from abduct.kit.cache import EmbeddingCache, default_cache_dir
from abduct.kit.content import ContentKeys
from abduct.kit.distributed import Ranks

DECODING_KEYS = tuple(f.name for f in fields(Decoding) if f.name != "seed")


@dataclass(frozen=True)
class LoadedModel:
    spec: Spec
    model: Any
    decoding: Decoding
    traits: ModelTraits = None  # type: ignore[assignment]  # read off the model when not given
    plugin: str | None = None  # the plugin that registered it, named with it in its faults
    prices: Prices | None = None  # price_in=, price_out= (per million tokens), when the spec gave them

    def __post_init__(self) -> None:
        if self.traits is None:
            object.__setattr__(self, "traits", model_traits(self.model, self.spec.name))

    @property
    def scores(self) -> bool:
        return self.traits.scores

    @property
    def generates(self) -> bool:
        return self.traits.generates

    @property
    def abilities(self) -> list[str]:
        return self.traits.abilities

    @property
    def fingerprint(self) -> str:
        """What identifies the model's outputs: its declared fingerprint, else its spec."""
        return self.traits.fingerprint or str(self.spec)


def load_model(spec: Spec | str, settings: Settings, registry: Registry) -> LoadedModel:
    """Build the model ``spec`` names; its decoding options are split off for generation."""
    spec = Spec.parse(spec) if isinstance(spec, str) else spec
    options = spec.option_dict()
    prices = Prices.pop(options, str(spec))
    decoding_given = {k: options.pop(k) for k in DECODING_KEYS if k in options}
    decoding = Decoding(seed=settings.seed, **bind_options("model", spec.name, Decoding, decoding_given))
    model_spec = Spec(spec.name, spec.argument, spec.tag, tuple(options.items()))
    model = registry.create("model", model_spec, settings)
    loaded = LoadedModel(spec, model, decoding, model_traits(model, spec.name), registry.get("model", spec.name).plugin,
                         prices)
    if decoding_given and not loaded.generates:
        raise AbductError(f"model '{spec.name}' does not generate; decoding options "
                          f"{', '.join(sorted(decoding_given))} do not apply")
    return loaded


@dataclass(frozen=True)
class Engines:
    """A model behind its engines: ``scoring`` when it scores, ``generation`` when it generates."""

    loaded: LoadedModel
    scoring: ScoringEngine | None
    generation: GenerationEngine | None
    policy: InputPolicy


def engine_for(
    model: LoadedModel | Spec | str,
    settings: Settings,
    *,
    registry: Registry | None = None,
    optional_inputs: Iterable[str] = (),
    cache_dir: Path | None = None,
    use_cache: bool = True,
    quiet: bool = True,
    label: str | None = None,
    decoding: Decoding | None = None,
    keys: ContentKeys | None = None,
    timer: Timer | None = None,
    ranks: Ranks | None = None,
) -> Engines:
    """The one wiring of model -> input policy -> cache -> engine, used by every caller.

    The engines share one input policy (what the model accepts, with ``optional_inputs`` the
    caller lets it go without), one timer and one set of content keys. Only a model with a
    fingerprint is cached (under ``cache_dir`` or abduct's default cache), as only it says what
    it is; a dual encoder caches embeddings, a generator its texts."""
    loaded = model if isinstance(model, LoadedModel) else load_model(model, settings, registry or get_registry())
    policy = InputPolicy(loaded.model, label or loaded.spec.name, optional_inputs)
    shared: dict[str, Any] = {"batch_size": settings.batch_size, "quiet": quiet, "policy": policy,
                              "keys": keys or ContentKeys(), "timer": timer or Timer(), "ranks": ranks or Ranks(),
                              "plugin": loaded.plugin}
    cached = use_cache and loaded.traits.fingerprint is not None
    root = cache_dir or default_cache_dir()
    scoring = generation = None
    if loaded.scores:
        cache = EmbeddingCache(root, loaded.fingerprint) if cached and loaded.traits.dual_encoder else None
        scoring = ScoringEngine(loaded.model, cache=cache, **shared)
    if loaded.generates:
        generation = GenerationEngine(loaded.model, decoding=decoding or loaded.decoding,
                                      cache_dir=root if cached else None, fingerprint=loaded.fingerprint,
                                      **shared)
    for engine in (scoring, generation):
        if engine is not None:
            engine.prices = loaded.prices
    return Engines(loaded, scoring, generation, policy)

