"""The plugin kit: helpers every plugin may use, on top of the contract.

Files (atomic writes, JSON and CSV reading with errors naming the file), checkpoints (weights
only), offline hub access, torchrun helpers and seeds, progress bars, region drawing, prompt
templates, CLI helpers for plugin commands, the shared task shapes (multiple choice, two-way
comparison, generate-then-score), metric input checks, exact match, and content-addressed
caches. Each module imports only the contract and the standard library, numpy, pillow and click.
"""

from abduct.kit.answers import ExactMatch, exact_match, normalize_answer
from abduct.kit.cache import EmbeddingCache, TextCache, default_cache_dir
from abduct.kit.checkpoints import (
    StoredSize,
    append_log,
    check_resume_signature,
    check_sizes_against_weights,
    hf_stored_shapes,
    load_weights_only,
    log_rows_through,
    settings_signature,
    stored_shapes,
)
from abduct.kit.cli import (
    NON_NEGATIVE,
    POSITIVE,
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
from abduct.kit.distributed import (
    PermutationStream,
    Ranks,
    average_gradients,
    current_ranks,
    is_small_on_cpu,
    one_thread_if,
    process_group,
    require_divisible_batch,
    seed_everything,
    seed_for,
    torch_seeded,
)
from abduct.kit.drawing import image_problem, load_rgb, render, require_regular_image
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
from abduct.kit.offline import (
    HubState,
    hub_access,
    hub_cache_dir,
    hub_file_cached,
    offline_requested,
    patched_hub,
    reachable,
    weights_unavailable,
)
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
    "Candidate", "Choice", "ContentKeys", "EmbeddingCache", "ExactMatch", "FiniteFloat", "NON_NEGATIVE", "POSITIVE", "GenerationItem", "HubState",
    "PermutationStream", "Ranks", "SEED", "StoredSize", "TextCache", "TwoWay", "accuracy", "append_log", "check_sizes_against_weights", "atomic_write_bytes",
    "atomic_write_json", "atomic_write_jsonl", "atomic_write_text", "average_gradients", "batched",
    "check_resume_signature", "check_template", "compare_two", "current_ranks", "default_cache_dir", "emit_json",
    "ensure_writable_dir", "exact_match", "fill", "first_argmax", "generate", "honour_umask", "hub_access",
    "hf_stored_shapes", "hub_cache_dir", "hub_file_cached", "image_problem", "load_rgb", "load_weights_only", "log_rows_through",
    "multiple_choice", "normalize_answer", "offline_requested", "option_pairs", "process_group", "progress",
    "reachable", "read_csv_cells", "read_published", "read_json", "read_keyed_predictions", "render", "report_problems",
    "require_dir", "require_divisible_batch", "require_file", "require_new_or_regular", "require_regular_image", "score_generations", "seed_everything", "seed_for",
    "settings_from", "settings_options", "settings_signature", "sha256_file", "stored_shapes", "strictly_higher", "subgroup", "torch_seeded", "is_small_on_cpu", "one_thread_if", "patched_hub",
    "unique_index", "validate_inputs", "weights_unavailable",
    "gold_margin", "ranks", "scored_texts",
]
