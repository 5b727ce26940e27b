"""The plugin kit: helpers every plugin may use, on top of the contract.

Files (atomic writes, JSON and CSV reading with errors naming the file), torchrun ranks and
seeds, progress bars, image reading and checks, prompt templates, CLI helpers for plugin
commands, the shared task shapes (multiple choice, two-way comparison, generate-then-score),
metric input checks, exact match, and content-addressed caches. Each module imports only the
contract and the standard library, numpy, pillow and click.

What only packages that load weights or train networks share (checkpoints, offline hub access,
training helpers, region rendering) is the abduct-modelkit distribution's (``abduct_modelkit``).
The items of the shared shapes (``Choice``, ``TwoWay``, ...) are the contract's: import them from ``abduct``.
"""

from abduct.kit.answers import exact_match
from abduct.kit.cache import EmbeddingCache, default_cache_dir
from abduct.kit.cli import (
    NON_NEGATIVE,
    POSITIVE,
    RESAMPLE_COUNT,
    SEED,
    emit_json,
    option_pairs,
    report_problems,
    settings_from,
    settings_options,
    subgroup,
)
from abduct.kit.content import ContentKeys
from abduct.kit.distributed import Ranks, current_ranks, process_group, seed_everything
from abduct.kit.drawing import image_problem, load_rgb, require_regular_image
from abduct.kit.install import install_command
from abduct.kit.io import (
    atomic_write_bytes,
    atomic_write_json,
    atomic_write_text,
    building_folder,
    read_csv_cells,
    read_json,
    read_keyed_predictions,
    require_dir,
    require_file,
    require_new_or_regular,
    sha256_file,
)
from abduct.kit.metric_inputs import validate_inputs
from abduct.kit.progress_bars import progress
from abduct.kit.published import read_published
from abduct.kit.shapes import (
    accuracy,
    batched,
    score_generations,
    scored_texts,
)
from abduct.kit.templates import check_template

__all__ = [
    "ContentKeys", "EmbeddingCache", "NON_NEGATIVE", "POSITIVE", "RESAMPLE_COUNT",
    "Ranks", "SEED", "accuracy", "atomic_write_bytes",
    "atomic_write_json", "atomic_write_text", "batched", "building_folder",
    "check_template", "current_ranks", "default_cache_dir", "emit_json",
    "exact_match",
    "image_problem", "install_command", "load_rgb",
    "option_pairs", "process_group", "progress",
    "read_csv_cells", "read_published", "read_json", "read_keyed_predictions", "report_problems",
    "require_dir", "require_file", "require_new_or_regular", "require_regular_image", "score_generations", "seed_everything",
    "settings_from", "settings_options", "sha256_file", "subgroup",
    "validate_inputs",
    "scored_texts",
]
