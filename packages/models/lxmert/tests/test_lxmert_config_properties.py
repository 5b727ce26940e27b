"""Property: an LXMERT checkpoint whose Hugging Face ``config.json`` is mutated (values of any
JSON type, NaN, Infinity, keys removed or repeated, text cut short) loads, or is refused in
one line naming it (``abduct_testing.fuzzing.fuzz_checkpoint_file``)."""

from __future__ import annotations

from pathlib import Path

from abduct_lxmert._model import FAMILY
from abduct_regions.family import load_network
from abduct_testing.fuzzing import fuzz_checkpoint_file


def write_checkpoint(directory: Path) -> None:
    FAMILY.save_dir(*FAMILY.build_tiny(0), directory)


def load(directory: Path) -> None:
    load_network(FAMILY, str(directory))


test_fuzz_config = fuzz_checkpoint_file(write_checkpoint, "config.json", load)
