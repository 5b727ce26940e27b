"""The plugin kit: helpers every plugin may use, on top of the contract.

Files (atomic writes, JSON and CSV reading with errors naming the file), torchrun ranks and
seeds, progress bars, image reading and checks, prompt templates, CLI helpers for plugin
commands, the shared task shapes (multiple choice, two-way comparison, generate-then-score),
metric input checks, exact match, and content-addressed caches. Each module imports only the
contract and the standard library, numpy, pillow and click.

What only packages that load weights or train networks share (checkpoints, offline hub access,
training helpers, region rendering) is the abduct-modelkit distribution's (``abduct_modelkit``);
its names still import from here until abduct 0.3, with a DeprecationWarning.
"""

import importlib
import warnings
from typing import Any

from abduct.contract.errors import AbductError
from abduct.kit.answers import ExactMatch, exact_match, normalize_answer
from abduct.kit.cache import EmbeddingCache, TextCache, default_cache_dir
from abduct.kit.cli import (
    NON_NEGATIVE,
    POSITIVE,
    RESAMPLE_COUNT,
    SEED,
    FiniteFloat,
    emit_json,
    option_pairs,
    report_problems,
    settings_from,
    settings_options,
    subgroup,
)
from abduct.kit.content import ContentKeys, unique_index
from abduct.kit.distributed import Ranks, current_ranks, process_group, seed_everything
from abduct.kit.drawing import image_problem, load_rgb, require_regular_image
from abduct.kit.install import install_command
from abduct.kit.io import (
    atomic_write_bytes,
    atomic_write_json,
    atomic_write_jsonl,
    atomic_write_text,
    ensure_writable_dir,
    honour_umask,
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
    Candidate,
    Choice,
    GenerationItem,
    TwoWay,
    accuracy,
    batched,
    compare_two,
    first_argmax,
    generate,
    gold_margin,
    multiple_choice,
    ranks,
    score_generations,
    scored_texts,
    strictly_higher,
)
from abduct.kit.templates import check_template, fill

__all__ = [
    "Candidate", "Choice", "ContentKeys", "EmbeddingCache", "ExactMatch", "FiniteFloat", "NON_NEGATIVE", "POSITIVE", "RESAMPLE_COUNT", "GenerationItem",
    "Ranks", "SEED", "TextCache", "TwoWay", "accuracy", "atomic_write_bytes",
    "atomic_write_json", "atomic_write_jsonl", "atomic_write_text", "batched",
    "check_template", "compare_two", "current_ranks", "default_cache_dir", "emit_json",
    "ensure_writable_dir", "exact_match", "fill", "first_argmax", "generate", "honour_umask",
    "image_problem", "install_command", "load_rgb",
    "multiple_choice", "normalize_answer", "option_pairs", "process_group", "progress",
    "read_csv_cells", "read_published", "read_json", "read_keyed_predictions", "report_problems",
    "require_dir", "require_file", "require_new_or_regular", "require_regular_image", "score_generations", "seed_everything",
    "settings_from", "settings_options", "sha256_file", "strictly_higher", "subgroup",
    "unique_index", "validate_inputs",
    "gold_margin", "ranks", "scored_texts",
]

# Names of the model side of the kit, moved to abduct-modelkit: forwarded for one release, as
# abduct/__init__.py forwards its own moved names. By name, through importlib: the core never
# imports a plugin distribution (.importlinter's core-without-torch).
_MODELKIT = "abduct_modelkit"
_MOVED = frozenset({
    "HubState", "PermutationStream", "StoredSize", "append_log", "average_gradients", "check_resume_signature",
    "check_sizes_against_weights", "hf_stored_shapes", "hub_access", "hub_cache_dir", "hub_file_cached",
    "is_small_on_cpu", "load_weights_only", "log_rows_through", "offline_requested", "one_thread_if", "patched_hub",
    "reachable", "render", "require_divisible_batch", "seed_for", "settings_signature", "stored_shapes",
    "torch_seeded", "weights_unavailable",
})


def __getattr__(name: str) -> Any:
    if name not in _MOVED:
        raise AttributeError(f"module 'abduct.kit' has no attribute '{name}'")
    try:
        home = importlib.import_module(_MODELKIT)
    except ImportError:
        # not an AttributeError: `from abduct.kit import X` would replace it with a bare "cannot import name"
        raise AbductError(f"abduct.kit.{name} moved to {_MODELKIT}.{name}, which is not installed: "
                          f"{install_command('abduct-modelkit')}") from None
    warnings.warn(f"abduct.kit.{name} moved to {_MODELKIT}.{name} ({install_command('abduct-modelkit')}); "
                  f"abduct.kit.{name} is removed in abduct 0.3", DeprecationWarning, stacklevel=2)
    return getattr(home, name)
