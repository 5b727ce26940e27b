"""Model specs: ``name[:argument][@tag]``, e.g. ``random``, ``clip:ViT-B-16@openai``,
``clip:/path/to/checkpoint.pt``."""

from __future__ import annotations

from dataclasses import dataclass

from abduct.errors import AbductError


@dataclass(frozen=True)
class ModelSpec:
    name: str
    argument: str | None = None
    tag: str | None = None

    @classmethod
    def parse(cls, text: str) -> ModelSpec:
        """Split a spec. A trailing ``@tag`` counts only if it holds no path separator,
        so ``clip:/data/run@3/ckpt.pt`` keeps its ``@``."""
        text = text.strip()
        if not text:
            raise AbductError("empty model spec; expected name[:argument][@tag]")
        head, sep, rest = text.partition(":")
        tag = None
        if sep:
            argument: str | None = rest
        else:
            argument = None
            rest = head
        base, at, maybe_tag = rest.rpartition("@")
        if at and maybe_tag and "/" not in maybe_tag and "\\" not in maybe_tag:
            tag = maybe_tag
            if sep:
                argument = base
            else:
                head = base
        if not head:
            raise AbductError(f"model spec '{text}' has no name; expected name[:argument][@tag]")
        if sep and not argument:
            raise AbductError(f"model spec '{text}' has an empty argument after ':'")
        return cls(head, argument, tag)

    def __str__(self) -> str:
        out = self.name
        if self.argument is not None:
            out += f":{self.argument}"
        if self.tag is not None:
            out += f"@{self.tag}"
        return out


@dataclass(frozen=True)
class ModelOptions:
    """Run-time settings every model factory receives."""

    device: str = "cpu"
    batch_size: int = 64
    seed: int = 0
