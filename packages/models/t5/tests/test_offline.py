"""``t5:NAME`` on a machine without network: one line in seconds naming what was looked for;
a model in the hub cache loads with no network call."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import torch

from abduct import AbductError
from abduct.host import Registry
from abduct_t5._loading import build_tiny, load, save_checkpoint, weights_hash
from abduct_testing import fast_one_line_failure, hub_snapshot, unreachable_hub


@pytest.fixture
def no_hub(tmp_path: Path) -> Iterator[Path]:
    with unreachable_hub(tmp_path / "hf-cache") as cache:
        yield cache


def test_an_uncached_hub_name_fails_in_seconds_with_one_line(no_hub: Path, tmp_path: Path, pair_data: Path,
                                                              test_registry: Registry) -> None:
    err = fast_one_line_failure(["eval", "toy-match", "--model", "t5:google/t5-v1_1-small", "--data", str(pair_data),
                                 "--out", str(tmp_path / "out"), "--quiet"])
    assert err.startswith("error: t5:google/t5-v1_1-small: weights not found"), err
    assert f"hub google/t5-v1_1-small in {no_hub}" in err and "a local directory" in err and "t5:/path/to" in err


def test_offline_mode_is_honoured_without_a_probe(no_hub: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    with pytest.raises(AbductError, match=r"\(TRANSFORMERS_OFFLINE set\)"):
        load("google/t5-v1_1-small")


def test_a_cached_hub_model_loads_offline(no_hub: Path) -> None:
    model, tokenizer = build_tiny(seed=3)
    save_checkpoint(model, tokenizer, hub_snapshot(no_hub, "abduct-test/tiny-t5"), "clue: {context}")
    loaded = load("abduct-test/tiny-t5")
    assert weights_hash(loaded.model) == weights_hash(model)
    with torch.no_grad():
        ids = tokenizer(["a dog"], return_tensors="pt").input_ids
        assert torch.equal(loaded.model.generate(ids, max_new_tokens=3), model.eval().generate(ids, max_new_tokens=3))
