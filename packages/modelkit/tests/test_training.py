"""abduct_modelkit.training: importing the kit never imports torch, seeds depend only on their
parts, and (where torch is installed) the helpers that use it."""

from __future__ import annotations

import subprocess
import sys

import pytest

from abduct import AbductError
from abduct.kit import Ranks
from abduct_modelkit import PermutationStream, one_thread_if, require_divisible_batch, seed_for


def test_importing_the_kit_imports_neither_torch_nor_the_hub() -> None:
    code = ("import sys, abduct_modelkit as k; heavy = {'torch', 'huggingface_hub', 'safetensors'} & set(sys.modules); "
            "print(sorted(heavy), k.seed_for(0, 1))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["[]", str(seed_for(0, 1))]


def test_seed_for_depends_only_on_its_parts_in_order() -> None:
    assert 0 <= seed_for(0, 1) < 2**63
    assert seed_for(0, 1) != seed_for(1, 0) and seed_for(3, 5, 7) == seed_for(3, 5, 7)


def test_a_global_batch_must_split_evenly_over_the_ranks() -> None:
    require_divisible_batch(8, Ranks(0, 4))
    with pytest.raises(AbductError, match="--batch-size 6 must be divisible by the 4 processes"):
        require_divisible_batch(6, Ranks(1, 4))


def test_permutation_stream_repeats_per_epoch_permutations() -> None:
    pytest.importorskip("torch")
    first = [PermutationStream(5, seed=3).index(p) for p in range(10)]
    resumed = PermutationStream(5, seed=3)
    assert [resumed.index(p) for p in range(5, 10)] == first[5:]  # a resumed run sees the same batches
    assert sorted(first[:5]) == sorted(first[5:]) == list(range(5))


def test_one_thread_if_restores_the_thread_count() -> None:
    torch = pytest.importorskip("torch")
    before = torch.get_num_threads()
    with one_thread_if(True):
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == before
