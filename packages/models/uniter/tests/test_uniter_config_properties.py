"""Property: a UNITER checkpoint whose ``config.json`` or ``abduct_regions.json`` is mutated
(values of any JSON type, NaN, Infinity, keys removed or repeated, text cut short) loads, or
is refused in one line naming it (``abduct_testing.fuzzing.fuzz_checkpoint_file``)."""

from __future__ import annotations

from pathlib import Path

from abduct_regions.family import TINY_INPUTS, load_network
from abduct_regions.scoring import SETTINGS_FILE
from abduct_testing.fuzzing import fuzz_checkpoint_file
from abduct_uniter._model import CONFIG_FILE, FAMILY


def write_checkpoint(directory: Path) -> None:
    net, tokenizer = FAMILY.build_tiny(0)
    FAMILY.save_dir(net, tokenizer, directory)
    TINY_INPUTS.save(directory)


def load(directory: Path) -> None:
    load_network(FAMILY, str(directory))


test_fuzz_config = fuzz_checkpoint_file(write_checkpoint, CONFIG_FILE, load, max_examples=10)
test_fuzz_region_settings = fuzz_checkpoint_file(write_checkpoint, SETTINGS_FILE, load)
