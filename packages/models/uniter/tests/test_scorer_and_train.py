"""uniter:tiny through the scorer contract; training lowers the loss and round-trips as uniter:DIR."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from abduct import Settings
from abduct.host import get_registry, load_model
from abduct_modelkit.training import LOG
from abduct_testing import PairsFile, ScorerContract, main


def tiny(spec: str = "uniter:tiny,cache=false") -> Any:
    return load_model(spec, Settings(batch_size=4), get_registry()).model


class TestUniterScorer(ScorerContract):
    def make_scorer(self) -> object:
        return tiny()


def test_training_lowers_the_loss_and_the_checkpoint_loads(tmp_path: Path, pair_data: Path, test_registry: Any,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    code = main(["train", "uniter", "--data", str(pair_data), "--out", str(out), "--steps", "100",
                 "--checkpoint-every", "100", "--log-every", "20", "--dataset", "toy-pairs", "--model",
                 "uniter:tiny,cache=false", "--batch-size", "8", "--lr", "2e-3", "--warmup", "4", "--device", "cpu",
                 "--quiet"])
    assert code == 0, capsys.readouterr().err
    rows = [json.loads(line) for line in (out / LOG).read_text().splitlines()]
    losses = [r["loss"] for r in rows if "loss" in r]
    assert losses[-1] < 0.6 * losses[0]
    assert rows[-1]["val_p_at_1"] > 100 / 3 + 10
    trained = tiny(f"uniter:{out / 'last'},cache=false")
    pairs = PairsFile().pairs(pair_data, "val")
    visuals, texts = [p.visual for p in pairs], [p.text for p in pairs]
    again = tiny(f"uniter:{out / 'last'},cache=false")
    np.testing.assert_allclose(trained.score(visuals, texts), again.score(visuals, texts))
    assert trained.inputs.features.backbone == "resnet18-c4"
