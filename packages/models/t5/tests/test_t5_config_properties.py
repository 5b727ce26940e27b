"""Property: a ``t5:DIR`` checkpoint whose Hugging Face ``config.json`` is mutated (values of
any JSON type, NaN, Infinity, keys removed or repeated, text cut short) loads, or is refused
in one line naming it (``abduct_testing.fuzzing.fuzz_checkpoint_file``)."""

from __future__ import annotations

from pathlib import Path

from abduct_t5._loading import build_tiny, load, save_checkpoint
from abduct_testing.fuzzing import fuzz_checkpoint_file


def write_checkpoint(directory: Path) -> None:
    save_checkpoint(*build_tiny(), directory, "clue: {context}")


test_fuzz_config = fuzz_checkpoint_file(write_checkpoint, "config.json", lambda directory: load(str(directory)))
