"""Specs: how a user names and configures any component.

One grammar for models, tasks, metrics and datasets::

    name[:argument][@tag][,key=value...]

e.g. ``random``, ``clip:ViT-B-16@openai,mode=plain``, ``clip:/runs/x/best.pt``,
``bertscore,model=roberta-large,num_layers=17``. A value holding a comma is quoted:
``prompt="an image, then {}"``. A trailing ``@tag`` counts only if it holds no path
separator, so ``clip:/data/run@3/ckpt.pt`` keeps its ``@``. Values stay text here; the
component's factory signature types them (``abduct.contract.options``).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field

from abduct._spec_text import SpecSyntaxError, format_spec, option_dict, parse_option, parse_spec
from abduct.contract.errors import AbductError


@dataclass(frozen=True)
class Spec:
    """A parsed ``name[:argument][@tag][,key=value...]``; options keep their text values."""

    name: str
    argument: str | None = None
    tag: str | None = None
    options: tuple[tuple[str, str], ...] = field(default=())

    @classmethod
    def parse(cls, text: str) -> Spec:
        """Read ``name[:argument][@tag][,key=value...]``; one-line errors for what is not one."""
        try:
            return cls(*parse_spec(text))
        except SpecSyntaxError as exc:
            raise AbductError(str(exc)) from None

    def with_options(self, pairs: tuple[str, ...] | list[str]) -> Spec:
        """This spec with ``key=value`` pairs added (the CLI's ``-o`` synonym)."""
        try:
            extra = tuple(parse_option(p, p) for p in pairs)
        except SpecSyntaxError as exc:
            raise AbductError(str(exc)) from None
        return Spec(self.name, self.argument, self.tag, self.options + extra)

    def option_dict(self) -> dict[str, str]:
        try:
            return option_dict(self.options, str(self))
        except SpecSyntaxError as exc:
            raise AbductError(str(exc)) from None

    def __str__(self) -> str:
        return format_spec(self.name, self.argument, self.tag, self.options)


@dataclass(frozen=True)
class Settings:
    """Run-time settings every factory receives (``--device``, ``--batch-size``, ``--seed``)."""

    device: str = "cpu"
    batch_size: int = 64
    seed: int = 0

    def torch_device(self) -> str:
        """``device`` checked, with ``auto`` resolved (cuda when torch sees a GPU, else cpu);
        one-line errors for an unknown device or cuda without a GPU. Only torch models call
        this, so only they import torch."""
        torch = importlib.import_module("torch")  # by name: the core does not depend on torch
        if self.device == "auto":
            return "cuda" if torch.cuda.is_available() else "cpu"
        try:
            kind = torch.device(self.device).type
        except (RuntimeError, ValueError):
            raise AbductError(f"unknown device '{self.device}' (expected cpu, cuda, cuda:N or auto)") from None
        if kind == "cuda" and not torch.cuda.is_available():
            raise AbductError(f"device '{self.device}' asked for, but torch sees no CUDA GPU (use --device cpu or auto)")
        return self.device
