"""WHOOPS! (commonsense-defying images, Bitton-Guetta et al., ICCV 2023) for abduct."""

from abduct_whoops.loader import Release, load_answer_key, load_release
from abduct_whoops.records import WhoopsImage
from abduct_whoops.splits import FOLD_SEED, Folds, make_folds

__all__ = ["FOLD_SEED", "Folds", "Release", "WhoopsImage", "load_answer_key", "load_release", "make_folds"]
