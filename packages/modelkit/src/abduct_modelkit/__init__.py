"""The model side of abduct's plugin kit: what packages that load weights or train networks
share, and the one part of the kit that touches torch or the Hugging Face hub. It is a
distribution of its own (abduct-modelkit) so that ``abduct.kit``, which every plugin uses,
stays free of both; torch and ``huggingface_hub`` are imported by name when a helper is
called, never when this package is imported.

Checkpoints (``abduct_modelkit.checkpoints``): ``load_weights_only``, ``stored_shapes``,
``hf_stored_shapes``, ``check_sizes_against_weights``, ``StoredSize``, ``honour_umask``; resuming and logging a
training run: ``settings_signature``, ``check_resume_signature``, ``log_rows_through``,
``append_log``.

Offline hub access (``abduct_modelkit.offline``): ``hub_access``, ``HubState``, ``patched_hub``,
``hub_cache_dir``, ``hub_file_cached``, ``offline_requested``, ``reachable``,
``weights_unavailable``.

Training and seeds (``abduct_modelkit.training``): the skeleton every trainer's run shares
(``TrainConfig``, ``TrainingRun``, ``rank_device``, ``train_val_pairs``), ``average_gradients``,
``require_divisible_batch``, ``PermutationStream``, ``seed_for``, ``torch_seeded``,
``is_small_on_cpu``, ``one_thread_if``. The ranks (``Ranks``, ``current_ranks``,
``process_group``) and ``seed_everything`` are ``abduct.kit``'s: the runner uses them.

Regions as a model sees them (``abduct_modelkit.drawing``): ``render``, ``highlight``,
``context_only``, ``position_only``, ``region_only``.

Agreement between raters (``abduct_modelkit.agreement``, imported by name, not re-exported here):
Cohen's κ, Krippendorff's α, the confusion table, the judge-agreement block.
"""

from abduct_modelkit.checkpoints import (
    StoredSize,
    append_log,
    check_resume_signature,
    check_sizes_against_weights,
    hf_stored_shapes,
    honour_umask,
    load_weights_only,
    log_rows_through,
    settings_signature,
    stored_shapes,
)
from abduct_modelkit.drawing import context_only, highlight, position_only, region_only, render
from abduct_modelkit.offline import (
    HubState,
    hub_access,
    hub_cache_dir,
    hub_file_cached,
    offline_requested,
    patched_hub,
    reachable,
    weights_unavailable,
)
from abduct_modelkit.training import (
    PermutationStream,
    TrainConfig,
    TrainingRun,
    average_gradients,
    is_small_on_cpu,
    one_thread_if,
    rank_device,
    require_divisible_batch,
    seed_for,
    torch_seeded,
    train_val_pairs,
)

__all__ = [
    "HubState", "PermutationStream", "StoredSize", "TrainConfig", "TrainingRun", "append_log", "average_gradients", "check_resume_signature",
    "check_sizes_against_weights", "context_only", "hf_stored_shapes", "highlight", "honour_umask", "hub_access", "hub_cache_dir",
    "hub_file_cached", "is_small_on_cpu", "load_weights_only", "log_rows_through", "offline_requested",
    "one_thread_if", "patched_hub", "position_only", "rank_device", "reachable", "region_only", "render", "require_divisible_batch",
    "seed_for", "settings_signature", "stored_shapes", "torch_seeded", "train_val_pairs", "weights_unavailable",
]
