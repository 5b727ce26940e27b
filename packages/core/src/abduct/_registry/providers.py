"""Which distribution provides the components that tasks and trainers ask for by name, so
that a missing one is answered with the package to install instead of a bare "unknown"."""

from __future__ import annotations

from abduct.contract.errors import AbductError

PROVIDERS: dict[tuple[str, str], str] = {
    **{("metric", name): "abduct-metrics" for name in ("bleu", "meteor", "rouge-l", "cider", "bertscore", "bem")},
    ("dataset", "sherlock"): "abduct-sherlock",
    ("dataset", "cosim"): "abduct-cosim",
    ("dataset", "nleye"): "abduct-nleye",
}


def not_installed(kind: str, name: str, needed_by: str) -> AbductError | None:
    """The one-line error for a known component that is not installed; None when unknown."""
    package = PROVIDERS.get((kind, name))
    if package is None:
        return None
    return AbductError(f"{needed_by} needs the {kind} '{name}', which comes with {package}: pip install {package}")
