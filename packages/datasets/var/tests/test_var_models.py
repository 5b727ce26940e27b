"""The trained generator (resumable training, generation contract) and the retrieval baseline."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch

from abduct import Decoding, GenerationRequest
from abduct_testing import GeneratorContract, run_cli
from abduct_var._generator import VarGenerator
from abduct_var._retrieval import VarRetrieval
from abduct_var._train import TrainConfig, train
from abduct_var.inputs import DESCRIBE_PROMPT, EXPLAIN_PROMPT, chain_input, event_input
from abduct_var.loader import load_split


def _config(data: Path, out: Path, steps: int) -> TrainConfig:
    return TrainConfig(data_dir=data, out_dir=out, steps=steps, batch_size=8, width=16, frames=2,
                       checkpoint_every=5, log_every=5, device="cpu", quiet=True)


@pytest.fixture(scope="module")
def checkpoint(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("var_gen")
    train(_config(corpus, out, 10))
    return out / "last.pt"


def test_training_resumes_exactly(corpus: Path, checkpoint: Path, tmp_path: Path) -> None:
    train(_config(corpus, tmp_path, 5))
    summary = train(_config(corpus, tmp_path, 10))  # the same command again, with more steps
    assert summary["step"] == 10
    straight = torch.load(checkpoint, weights_only=True)["model_state_dict"]
    resumed = torch.load(tmp_path / "last.pt", weights_only=True)["model_state_dict"]
    for name, value in straight.items():
        torch.testing.assert_close(resumed[name], value, rtol=0, atol=1e-6)
    with pytest.raises(Exception, match="other settings"):
        train(TrainConfig(**{**_config(corpus, tmp_path, 12).__dict__, "lr": 0.1}))


def _requests(corpus: Path) -> list[GenerationRequest]:
    examples, _ = load_split(corpus, "val")
    videos = corpus / "videos"
    x = examples[0]
    return [GenerationRequest(chain_input(x, videos, masked=x.hypothesis), EXPLAIN_PROMPT),
            GenerationRequest(event_input(x.events[x.premise_positions[0]], videos), DESCRIBE_PROMPT),
            GenerationRequest(chain_input(examples[1], videos, masked=examples[1].hypothesis), EXPLAIN_PROMPT)]


class TestGeneratorContract(GeneratorContract):
    @pytest.fixture(autouse=True)
    def _setup(self, corpus: Path, checkpoint: Path) -> None:
        self.corpus, self.checkpoint = corpus, checkpoint

    def make_generator(self) -> object:
        return VarGenerator(self.checkpoint)

    def make_requests(self, tmp_path: Path) -> list[GenerationRequest]:
        return _requests(self.corpus)


def test_retrieval_answers_with_training_sentences(corpus: Path) -> None:
    model = VarRetrieval(corpus, frames=2)
    try:
        texts = model.generate(_requests(corpus), Decoding(), None)
    finally:
        model.encoder.close()
    examples, _ = load_split(corpus, "train")
    hypotheses = {x.counted[x.hypothesis].sentence.strip() for x in examples}
    events = {e.sentence.strip() for x in examples for i, e in enumerate(x.counted) if i != x.hypothesis}
    assert texts[0] in hypotheses and texts[2] in hypotheses and texts[1] in events


def _spoil(state: dict[str, Any], change: str) -> Any:
    meta = state["meta"]
    if change == "no vocab":
        del meta["vocab"]
    elif change == "width as text":
        meta["width"] = "16"
    elif change == "NaN frames":
        meta["frames"] = float("nan")
    elif change == "meta a list":
        state["meta"] = list(meta.items())
    elif change == "weights a list":
        state["model_state_dict"] = list(state["model_state_dict"].values())
    elif change == "width of other weights":
        meta["width"] = 32
    elif change == "a word short":
        meta["vocab"] = meta["vocab"][:-1]
    elif change == "NaN standardisation":
        state["feature_std"][0] = float("nan")
    elif change == "NaN weight":
        state["model_state_dict"]["out.bias"][0] = float("nan")
    return state


@pytest.mark.parametrize(("change", "field"), [
    ("no vocab", "meta.vocab"), ("width as text", "meta.width"), ("NaN frames", "meta.frames"),
    ("meta a list", "meta"), ("weights a list", "model_state_dict"),
    ("width of other weights", "model_state_dict.project.weight"), ("a word short", "model_state_dict.embed.weight"),
    ("NaN standardisation", "feature_std"), ("NaN weight", "model_state_dict.out.bias"), ("truncated", None),
])
def test_a_damaged_checkpoint_is_one_line_exit_2(corpus: Path, checkpoint: Path, tmp_path: Path, change: str,
                                                 field: str | None) -> None:
    bad = tmp_path / "bad.pt"
    if change == "truncated":
        data = checkpoint.read_bytes()
        bad.write_bytes(data[: len(data) // 2])
    else:
        torch.save(_spoil(torch.load(checkpoint, weights_only=True), change), bad)
    out = run_cli(["eval", "var-explanation,meteor=false", "--model", f"var-gen:{bad}", "--data", str(corpus),
                   "--out", str(tmp_path / "run"), "--quiet"])
    assert out.crash is None and out.code == 2, out.err
    lines = out.err.strip().splitlines()
    assert len(lines) == 1 and str(bad) in lines[0], out.err
    assert (f"field '{field}'" if field else "not a weights-only checkpoint") in lines[0]
    assert not (tmp_path / "run" / "results.json").exists()


@pytest.mark.parametrize(("args", "needle"), [
    (["--width", "10"], "--width 10 is not a multiple of the 4 attention heads"),
    (["--lr", "nan"], "Invalid value for '--lr': 'nan' is not a finite number"),  # click's own check
])
def test_training_settings_the_model_cannot_use_are_one_line(corpus: Path, tmp_path: Path, args: list[str],
                                                             needle: str) -> None:
    out = run_cli(["train", "var", "--data", str(corpus), "--out", str(tmp_path), "--steps", "1", *args])
    assert out.crash is None and out.code == 2, out.err
    assert [line for line in _error_lines(out.err) if needle in line] == _error_lines(out.err), out.err


def _error_lines(err: str) -> list[str]:
    """The one error line (ours, ``error:``, or click's usage ``Error:``), whatever warnings came first:
    a video clipped while training warns once per process, so whether it shows depends on the tests before."""
    lines = [line for line in err.splitlines() if line.startswith(("error:", "Error:"))]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines


def test_resuming_from_a_damaged_checkpoint_is_one_line(corpus: Path, checkpoint: Path, tmp_path: Path) -> None:
    state = torch.load(checkpoint, weights_only=True)
    state["step"] = "ten"
    torch.save(state, tmp_path / "last.pt")
    out = run_cli(["train", "var", "--data", str(corpus), "--out", str(tmp_path), "--steps", "12", "--batch-size",
                   "8", "--width", "16", "--frames", "2", "--device", "cpu", "--quiet"])
    assert out.crash is None and out.code == 2, out.err
    assert f"{tmp_path / 'last.pt'}, field 'step': is 'ten'" in _error_lines(out.err)[0]
