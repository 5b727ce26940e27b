"""Training pairs from a registered dataset, for any trainer (CLIP, T5, ...)."""

from __future__ import annotations

from pathlib import Path

from abduct._registry.providers import UnknownNameError, not_installed
from abduct._registry.registry import Registry, get_registry
from abduct.contract.errors import AbductError
from abduct.contract.protocols import PairDataset
from abduct.contract.records import GroundedText
from abduct.contract.spec import Settings, Spec


def load_pairs(dataset: str, data_dir: Path, split: str, settings: Settings,
               registry: Registry | None = None) -> list[GroundedText]:
    """``split``'s (visual, text) pairs from the dataset ``dataset`` names (a spec); one-line
    errors when it is not installed, its plugin is broken, or it offers no pairs."""
    name = Spec.parse(dataset).name
    registry = registry or get_registry()
    try:
        component = registry.create("dataset", dataset, settings)
    except UnknownNameError:
        broken = [p.error for p in registry.plugins if p.name == name and p.error]
        if broken:
            raise AbductError(f"dataset '{name}': its plugin failed to load ({broken[0]}); see `abduct plugins`") from None
        missing = not_installed("dataset", name, "training")
        if missing is None:
            raise
        raise missing from None
    if not isinstance(component, PairDataset):
        raise AbductError(f"dataset '{name}' does not offer training pairs "
                          "(no pairs(data_dir, split); see abduct.PairDataset)")
    return list(component.pairs(Path(data_dir), split))
