"""t5 as a scorer and a generator: the core's contracts, the log-likelihood against
transformers computed directly, reduce, inputs, loading and its one-line errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from abduct import AbductError, Decoding, GenerationRequest, Settings, Spec, VisualInput
from abduct.host import GenerationEngine, ScoringEngine
from abduct_t5._loading import build_tiny, load, save_checkpoint
from abduct_t5._model import T5Model, make_t5
from abduct_testing import GeneratorContract, ScorerContract, fast_one_line_failure, main

CLUES = ["a red umbrella", "a blue ball on the sand", "snow"]
TEXTS = ["it rained recently", "children played here, probably", "someone went skiing"]


def tiny(**options: Any) -> T5Model:
    return make_t5(Spec("t5", "tiny"), Settings(batch_size=2), **options)


class TestT5Scorer(ScorerContract):
    def make_scorer(self) -> object:
        return tiny()


class TestT5Generator(GeneratorContract):
    def make_generator(self) -> object:
        return tiny()


def direct_mean_log_likelihood(context: str, text: str) -> tuple[float, int]:
    """transformers on its own: minus the per-example loss of one (prompt, text) pair."""
    model, tokenizer = build_tiny()
    model.eval()
    source = tokenizer(f"clue: {context}", return_tensors="pt")
    labels = tokenizer(text, return_tensors="pt")["input_ids"]
    with torch.no_grad():
        loss = model(**source, labels=labels).loss
    return -float(loss), int(labels.shape[1])


def test_scores_equal_transformers_log_likelihood() -> None:
    visuals = [VisualInput(context=c) for c in CLUES]
    mean = tiny().score(visuals, TEXTS)
    summed = tiny(reduce="sum").score(visuals, TEXTS)
    for i, (clue, text) in enumerate(zip(CLUES, TEXTS)):
        expected, tokens = direct_mean_log_likelihood(clue, text)
        assert mean[i] == pytest.approx(expected, rel=1e-4, abs=1e-4)
        assert summed[i] == pytest.approx(expected * tokens, rel=1e-4, abs=1e-3)
    assert tiny().fingerprint != tiny(reduce="sum").fingerprint != tiny(template="c: {context}").fingerprint


def test_matrix_shares_encoder_states_and_agrees_with_pairs() -> None:
    model = tiny()
    visuals = [VisualInput(context=c) for c in CLUES]
    matrix = model.score_matrix(visuals, TEXTS)
    pairs = model.score([v for v in visuals for _ in TEXTS], [t for _ in visuals for t in TEXTS])
    np.testing.assert_allclose(matrix.reshape(-1), pairs, rtol=1e-4, atol=1e-4)


def test_template_changes_scores() -> None:
    visuals = [VisualInput(context=c) for c in CLUES]
    assert not np.allclose(tiny().score(visuals, TEXTS), tiny(template="context: {context} =>").score(visuals, TEXTS))
    with pytest.raises(AbductError, match="no \\{context\\} placeholder"):
        tiny(template="clue:")


def test_refuses_inputs_without_context(tmp_path: Path) -> None:
    with pytest.raises(AbductError, match="reads the input's context"):
        tiny().score([VisualInput(context=None)], ["x"])
    image = tmp_path / "a.jpg"
    engine = ScoringEngine(tiny(), quiet=True)
    with pytest.raises(AbductError, match="cannot take image inputs") as caught:
        engine.score_pairs([VisualInput(str(image), context="a clue")], ["x"])
    assert "\n" not in str(caught.value)


def test_sampling_is_seeded_and_independent_of_batching() -> None:
    requests = [GenerationRequest(VisualInput(context=c)) for c in CLUES]
    decoding = Decoding(max_new_tokens=6, do_sample=True, temperature=1.5, top_p=0.9, seed=4)
    together = GenerationEngine(tiny(), decoding=decoding, batch_size=3, quiet=True).generate(requests)
    alone = GenerationEngine(tiny(), decoding=decoding, batch_size=1, quiet=True).generate(requests)
    assert together == alone
    other = GenerationEngine(tiny(), decoding=Decoding(max_new_tokens=6, do_sample=True, temperature=1.5, seed=5),
                             batch_size=3, quiet=True).generate(requests)
    assert other != together


def test_saved_directory_loads_with_the_same_scores(tmp_path: Path) -> None:
    model, tokenizer = build_tiny()
    save_checkpoint(model, tokenizer, tmp_path / "ckpt", "clue: {context}")
    visuals = [VisualInput(context=c) for c in CLUES]
    loaded = make_t5(Spec("t5", str(tmp_path / "ckpt")), Settings())
    np.testing.assert_allclose(loaded.score(visuals, TEXTS), tiny().score(visuals, TEXTS), rtol=1e-5, atol=1e-5)
    assert loaded.fingerprint == tiny().fingerprint


def test_checkpoint_template_is_the_default(tmp_path: Path) -> None:
    model, tokenizer = build_tiny()
    save_checkpoint(model, tokenizer, tmp_path / "ckpt", "why? {context}")
    assert make_t5(Spec("t5", str(tmp_path / "ckpt")), Settings()).template == "why? {context}"


def _bad_dirs(tmp_path: Path) -> dict[str, str]:
    empty = tmp_path / "empty"
    empty.mkdir()
    corrupt = tmp_path / "corrupt"
    model, tokenizer = build_tiny()
    save_checkpoint(model, tokenizer, corrupt, "clue: {context}")
    (corrupt / "model.safetensors").write_bytes(b"not safetensors")
    bert = tmp_path / "bert"
    bert.mkdir()
    (bert / "config.json").write_text(json.dumps({"model_type": "bert"}))
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "config.json").write_text("{not json")
    (tmp_path / "file.bin").write_text("x")
    untokenized = tmp_path / "untokenized"
    save_checkpoint(model, tokenizer, untokenized, "clue: {context}")
    for name in ("tokenizer.json", "spiece.model", "tokenizer_config.json", "special_tokens_map.json"):
        (untokenized / name).unlink(missing_ok=True)
    return {str(untokenized): "holds no tokenizer",str(empty): "no config.json", str(corrupt): "cannot load the weights", str(bert): "not T5",
            str(broken): "cannot read a model configuration", str(tmp_path / "file.bin"): "is a file",
            str(tmp_path / "missing" / "dir"): "no such directory"}


def test_bad_checkpoints_are_one_line_errors(tmp_path: Path, pair_data: Path, test_registry: Any,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    for directory, message in _bad_dirs(tmp_path).items():
        code = main(["eval", "toy-match", "--model", f"t5:{directory}", "--data", str(pair_data),
                     "--out", str(tmp_path / "out"), "--quiet"])
        err = capsys.readouterr().err.strip()
        assert code == 2, err
        assert err.startswith("error: t5:") and message in err and "\n" not in err, err
    assert main(["eval", "toy-match", "--model", "t5", "--data", str(pair_data), "--out", str(tmp_path / "o")]) == 2


@pytest.mark.parametrize("change", [{"vocab_size": 100_000_000}, {"d_model": 65536}, {"num_decoder_layers": 100_000},
                                    {"d_kv": 100_000_000}])
def test_a_config_claiming_a_huge_size_is_refused_before_the_model_is_built(
        tmp_path: Path, pair_data: Path, test_registry: Any, change: dict[str, int]) -> None:
    directory = tmp_path / "huge"
    save_checkpoint(*build_tiny(), directory, "clue: {context}")
    config = json.loads((directory / "config.json").read_text())
    (directory / "config.json").write_text(json.dumps({**config, **change}))
    err = fast_one_line_failure(["eval", "toy-match", "--model", f"t5:{directory}", "--data", str(pair_data),
                                 "--out", str(tmp_path / "out"), "--quiet", "--no-cache"], within=5.0)
    field = "num_heads*d_kv" if "d_kv" in change else next(iter(change))
    assert f"config.json, field '{field}': is " in err and "the weights in model.safetensors have" in err, err


@pytest.mark.parametrize("weights", ["model.safetensors.index.json", "pytorch_model.bin"])
def test_sizes_are_checked_in_sharded_and_torch_checkpoints(tmp_path: Path, weights: str) -> None:
    model, tokenizer = build_tiny()
    model.save_pretrained(str(tmp_path), max_shard_size="100KB")
    tokenizer.save_pretrained(str(tmp_path))
    if weights == "pytorch_model.bin":  # an older layout, read on the meta device
        for shard in tmp_path.glob("model*.safetensors*"):
            shard.unlink()
        torch.save(model.state_dict(), tmp_path / weights)
    assert load(str(tmp_path)).model.config.vocab_size == model.config.vocab_size  # the layout loads as it is
    config = json.loads((tmp_path / "config.json").read_text())
    (tmp_path / "config.json").write_text(json.dumps({**config, "vocab_size": 100_000_000}))
    with pytest.raises(AbductError, match=f"field 'vocab_size': is 100000000, the weights in {weights} have"):
        load(str(tmp_path))


def test_eval_through_the_cli(tmp_path: Path, pair_data: Path, test_registry: Any,
                              capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["eval", "toy-match", "--model", "t5:tiny,reduce=sum", "--data", str(pair_data),
                 "--out", str(tmp_path / "out"), "--quiet", "--json", "--no-cache"])
    assert code == 0, capsys.readouterr().err
    results = json.loads(capsys.readouterr().out)
    assert results["metrics"]["n"] == 16
    assert "transformers" in results["versions"] or results["versions"]


def test_a_small_network_runs_on_one_thread_and_a_large_one_as_configured() -> None:
    """abduct_modelkit's one_thread_if, as t5 uses it: one intra-op thread inside for a network under
    5 M parameters on the CPU, the caller's count restored after; a larger one is left alone."""
    import torch

    from abduct_t5._model import threads_for

    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        small, large = torch.nn.Linear(8, 8), torch.nn.Linear(2300, 2300)  # 72 and 5.3 M parameters
        with threads_for(small, torch.device("cpu")):
            assert torch.get_num_threads() == 1
        assert torch.get_num_threads() == 2
        with threads_for(large, torch.device("cpu")):
            assert torch.get_num_threads() == 2
        with threads_for(small, torch.device("meta")):  # not the CPU: left alone
            assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)
