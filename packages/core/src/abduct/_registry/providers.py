"""Which distribution provides the components that tasks and trainers ask for by name, so
that a missing one is answered with the package to install instead of a bare "unknown" (the
command that installs it here: ``abduct.kit.install_command``), and the error for a name no
installed plugin registers."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

from abduct.contract.errors import AbductError
from abduct.kit.install import install_command

_FIRST_PARTY: dict[str, dict[str, tuple[str, ...]]] = {  # package -> kind -> names (test_first_steps checks it)
    "abduct-metrics": {"metric": ("bleu", "meteor", "rouge-l", "cider", "bertscore", "bertscore-hungarian", "bem"),
                       "command": ("metric",)},
    "abduct-sherlock": {"dataset": ("sherlock", "sherlock-localization", "sherlock-comparison", "sherlock-generation"),
                        "command": ("sherlock",),
                        "task": ("sherlock-retrieval", "sherlock-localization", "sherlock-comparison",
                                 "sherlock-generation")},
    "abduct-cosim": {"dataset": ("cosim",), "task": ("cosim",), "command": ("cosim",)},
    "abduct-nleye": {"dataset": ("nleye",), "command": ("nleye",), "model": ("dumb-pixel",),
                     "task": ("nleye-triplet", "nleye-pairs", "nleye-explanation")},
    "abduct-whoops": {"dataset": ("whoops", "whoops-identification"), "command": ("whoops",),
                      "task": ("whoops-captioning", "whoops-matching", "whoops-vqa", "whoops-identification",
                               "whoops-explanation")},
    "abduct-var": {"dataset": ("var",), "command": ("var",), "model": ("var-gen", "var-retrieval"),
                   "task": ("var", "var-explanation", "var-premise")},
    "abduct-blackswan": {"dataset": ("blackswan-mcq", "blackswan-yn", "blackswan-gen"), "command": ("blackswan",),
                         "task": ("blackswan-mcq", "blackswan-yn", "blackswan-gen"), "model": ("blackswan-colour",)},
    "abduct-nycc": {"dataset": ("nycc-matching", "nycc-ranking", "nycc-explanation"), "command": ("nycc",),
                    "task": ("nycc-matching", "nycc-ranking", "nycc-explanation")},
    "abduct-visualriddles": {"dataset": ("visualriddles",), "command": ("visualriddles",),
                             "task": ("visualriddles-mcq", "visualriddles-open", "visualriddles-judge")},
    "abduct-video": {"command": ("video",)},
    "abduct-clip": {"model": ("clip",), "command": ("train",)},
    "abduct-t5": {"model": ("t5",)},
    "abduct-lxmert": {"model": ("lxmert",)},
    "abduct-uniter": {"model": ("uniter",)},
    "abduct-vlm": {"model": ("vlm", "openai")},
    "abduct-lmms": {"model": ("lmms", "replay"), "command": ("export",)},
    "abduct-demo": {"command": ("demo",)},
    "abduct-launch": {"command": ("launch",)},
    "abduct-report": {"command": ("compare", "published")},
}
PROVIDERS: dict[tuple[str, str], str] = {
    (kind, name): package for package, kinds in _FIRST_PARTY.items() for kind, names in kinds.items() for name in names
}


class UnknownNameError(AbductError):
    """A task, model, metric or dataset name that no installed plugin registers."""

    def __init__(self, kind: str, name: str, known: Iterable[str], package: str | None = None,
                 install: str | None = None) -> None:
        """``package``: the first-party distribution that provides ``name``, when it is not
        installed; ``install``: the command that installs it (``pip install {package}`` if not given)."""
        known = sorted(known)
        self.kind, self.name, self.known = kind, name, known
        if package is not None:  # a first-party component whose package is not installed
            super().__init__(f"{kind} '{name}' comes with {package}, which is not installed: "
                             f"{install or f'pip install {package}'}")
            return
        close = difflib.get_close_matches(name, known, n=3, cutoff=0.5)
        hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
        listing = f" (known: {', '.join(known)})" if known and not close else ""
        if not known:
            listing = " (none installed; see `abduct plugins`)"
        super().__init__(f"unknown {kind} '{name}'{hint}{listing}")


def provider(kind: str, name: str) -> str | None:
    """The first-party distribution that provides ``name`` of ``kind`` ("task", "command", ...)."""
    return PROVIDERS.get((kind, name))


def not_installed(kind: str, name: str, needed_by: str) -> AbductError | None:
    """The one-line error for a known component that is not installed; None when unknown."""
    package = PROVIDERS.get((kind, name))
    if package is None:
        return None
    return AbductError(f"{needed_by} needs the {kind} '{name}', which comes with {package}: {install_command(package)}")
