"""Bad input a CLIP run meets, through the CLI: one line, exit 2, nothing written. A pickle
with a payload is never executed, and the error names the loader that refused it."""

from __future__ import annotations

import os
import pickle
from pathlib import Path

import pytest
import torch
from PIL import Image

from abduct import DataError
from abduct.host import Registry
from abduct_modelkit import load_weights_only
from abduct_testing import run_cli
from abduct_testing.toy import write_toy_pairs

PWNED = "abduct-clip-pwned"


class Payload:
    """Unpickling this runs ``os.system`` (what a malicious checkpoint would do)."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return os.system, (f"touch {self.marker}",)


def _eval(data: Path, out: Path, model: str, *extra: str) -> list[str]:
    return ["eval", "toy-match", "--model", model, "--data", str(data), "--out", str(out), "--quiet", "--no-cache",
            *extra]


def test_text_file_as_checkpoint_names_the_loader(test_registry: Registry, pair_data: Path, tmp_path: Path) -> None:
    text = tmp_path / "weights.pt"
    text.write_text("these are not weights\n")
    outcome = run_cli(_eval(pair_data, tmp_path / "out", f"clip:tiny:{text}"))
    assert outcome.code == 2 and outcome.crash is None, outcome
    line = outcome.err.strip()
    assert len(line.splitlines()) == 1 and str(text) in line and "clip checkpoint loader refused it" in line


def test_pickle_payload_never_runs(test_registry: Registry, pair_data: Path, tmp_path: Path) -> None:
    marker = tmp_path / PWNED
    evil = tmp_path / "evil.pt"
    with open(evil, "wb") as handle:
        pickle.dump({"model_state_dict": Payload(marker)}, handle)
    torch_file = tmp_path / "evil_torch.pt"
    torch.save({"state": Payload(marker)}, torch_file)
    for path in (evil, torch_file):
        with pytest.raises(DataError, match=r"the clip checkpoint loader refused it"):
            load_weights_only(path, loader="clip checkpoint")
        outcome = run_cli(_eval(pair_data, tmp_path / "out", f"clip:tiny:{path}"))
        assert outcome.code == 2 and "clip checkpoint loader refused it" in outcome.err
    assert not marker.exists(), "the payload ran"


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without a GPU")
def test_device_cuda_without_a_gpu(test_registry: Registry, pair_data: Path, tmp_path: Path) -> None:
    outcome = run_cli(_eval(pair_data, tmp_path / "out", "clip:tiny", "--device", "cuda"))
    assert outcome.code == 2 and outcome.crash is None
    assert outcome.err.strip() == "error: device 'cuda' asked for, but torch sees no CUDA GPU (use --device cpu or auto)"
    assert not (tmp_path / "out" / "results.json").exists()


def test_huge_png_through_a_clip_run(test_registry: Registry, tmp_path: Path) -> None:
    data = write_toy_pairs(tmp_path / "data", train_images=0, val_images=2)
    image = next((data / "images").rglob("*.png"))
    Image.new("1", (20_000, 20_000)).save(image, format="PNG")  # the name the pairs file points to
    outcome = run_cli(_eval(data, tmp_path / "out", "clip:tiny"))
    assert outcome.code == 2 and outcome.crash is None, outcome
    assert "too large to decode safely" in outcome.err and image.name in outcome.err
    assert not (tmp_path / "out" / "results.json").exists()
