"""Inputs models can and cannot take, derived scoring paths, and the generation path."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from abduct import GenerationRequest, Settings, Spec, TextPool, VisualInput
from abduct._builtins.baselines import RandomModel
from abduct._cli import main
from abduct._engine.inputs import InputPolicy
from abduct._engine.models import load_model
from abduct._engine.scoring import ScoringEngine
from abduct._registry.registry import Registry, build_registry
from abduct._run.evaluate import EvalConfig, run_evaluation
from abduct._run.runner import Run
from abduct.contract.errors import AbductError
from abduct.kit import install_command
from abduct_testing import GeneratorContract
from toy_plugin import Echo, MatrixOnly, TextOnly, ToyPlugin, kill_once_a_unit_is_stored


def _eval(registry: Registry, task: str, model: str, data: Path, out: Path, **kwargs: object) -> dict:
    config = EvalConfig(task, model, data, out, quiet=True, **kwargs)  # type: ignore[arg-type]
    return run_evaluation(config, registry)


# -- what a model accepts ----------------------------------------------------------------------
def test_a_text_only_scorer_receives_the_context(toy_registry: Registry, toy_data: Path, tmp_path: Path) -> None:
    seen: list[VisualInput] = []
    original = TextOnly.score

    def spy(self: TextOnly, visuals: Sequence[VisualInput], texts: Sequence[str]) -> np.ndarray:
        seen.extend(visuals)
        return original(self, visuals, texts)

    TextOnly.score = spy  # type: ignore[method-assign]
    try:
        results = _eval(toy_registry, "toy-choice", "text-only", toy_data, tmp_path / "o")
    finally:
        TextOnly.score = original  # type: ignore[method-assign]
    assert seen and all(v.media is None and v.context and v.context.startswith("which one") for v in seen)
    assert results["inputs"]["ignored"] == ["image"] and results["metrics"]["n"] == 12


def test_refused_before_any_model_call_with_one_line(toy_registry: Registry, toy_data: Path, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    class ImageOnly(MatrixOnly):
        accepts = frozenset({"image"})

    policy = InputPolicy(ImageOnly(), "image-only")
    with pytest.raises(AbductError, match="model 'image-only' cannot take related inputs"):
        ScoringEngine(ImageOnly(), policy=policy).score_matrix([VisualInput("a.jpg", context=None, region=None,
                                                                            related=(VisualInput("b.jpg"),))], ["t"])
    # A generator-only model on a scoring task, and a text-only model given no context:
    assert main(["eval", "toy-choice", "--model", "echo", "--data", str(toy_data), "--out", str(tmp_path / "a")]) == 2
    assert "model 'echo' does not score" in capsys.readouterr().err
    with pytest.raises(AbductError, match="model 'text-only' needs context inputs"):
        InputPolicy(TextOnly(), "text-only", optional={"image"}).prepare(VisualInput("a.jpg"))
    assert not (tmp_path / "a" / "results.json").exists()


def test_a_model_refused_for_video(tmp_path: Path) -> None:
    model = MatrixOnly()
    engine = ScoringEngine(model, policy=InputPolicy(model, "matrix-only"))
    with pytest.raises(AbductError) as err:
        engine.score_pairs([VisualInput.video(str(tmp_path / "v.mp4"), ((0.0, 1.0),))], ["t"])
    assert str(err.value) == ("model 'matrix-only' cannot take video inputs, which this task gives "
                              "(it accepts image, region)")
    assert model.calls == 0


def test_pairs_are_derived_from_a_matrix_only_scorer(toy_registry: Registry, toy_data: Path, tmp_path: Path) -> None:
    results = _eval(toy_registry, "toy-choice", "matrix-only", toy_data, tmp_path / "o")
    assert results["metrics"]["n"] == 12
    visuals = [VisualInput(str(p)) for p in sorted((toy_data / "images").glob("*.jpg"))[:3]]
    texts = ["a", "b", "c", "d"]
    engine = ScoringEngine(MatrixOnly(), batch_size=3, quiet=True)
    pairs = engine.score_pairs([visuals[i % 3] for i in range(8)], [texts[i % 4] for i in range(8)])
    expected = RandomModel(7).score_matrix(visuals, texts)
    np.testing.assert_allclose(pairs, [expected[i % 3, i % 4] for i in range(8)])


# -- generation --------------------------------------------------------------------------------
class TestRandomGenerates(GeneratorContract):
    def make_generator(self) -> object:
        return RandomModel(3)


class TestEchoGenerates(GeneratorContract):
    def make_generator(self) -> object:
        return Echo()


def test_random_picks_from_the_pool_and_needs_one(tmp_path: Path) -> None:
    requests = [GenerationRequest(VisualInput(f"{tmp_path}/img{i}.jpg")) for i in range(40)]
    pool = TextPool.of(["one", "two", "three"])
    picks = RandomModel(0).generate(requests, load_model("random", Settings(), build_registry()).decoding, pool)
    assert set(picks) == {"one", "two", "three"}
    assert picks != RandomModel(1).generate(requests, load_model("random", Settings(), build_registry()).decoding, pool)
    with pytest.raises(AbductError, match="pool of texts"):
        RandomModel(0).generate(requests, load_model("random", Settings(), build_registry()).decoding, None)


def test_generation_task_through_the_cli(toy_registry: Registry, toy_data: Path, tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "gen"
    assert main(["eval", "toy-describe", "--model", "random", "--data", str(toy_data), "--out", str(out),
                 "--cache-dir", str(tmp_path / "cache"), "--json"]) == 0
    results = json.loads(capsys.readouterr().out)
    records = [json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()]
    assert len(records) == 12 and {r["prediction"] for r in records} <= {f"image number {k}" for k in range(3)}
    hits = sum(r["prediction"] == r["references"][0] for r in records)
    assert results["metrics"]["exact_match" if "exact_match" in results["metrics"] else "exact-match"] == 100 * (hits / 12)


def test_decoding_options_come_from_the_spec(toy_registry: Registry, toy_data: Path, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    Echo.calls = 0
    results = _eval(toy_registry, "toy-describe", "echo,max_new_tokens=5", toy_data, tmp_path / "o", use_cache=False)
    predictions = [json.loads(x)["prediction"] for x in (tmp_path / "o" / "predictions.jsonl").read_text().splitlines()]
    assert predictions == ["Descr"] * 12 and "max_new_tokens=5" in results["model"]["decoding"]
    assert main(["eval", "toy-choice", "--model", "random:3,num_beams=2", "--data", str(toy_data),
                 "--out", str(tmp_path / "x")]) == 0
    assert main(["eval", "toy-choice", "--model", "matrix-only,num_beams=2", "--data", str(toy_data),
                 "--out", str(tmp_path / "y")]) == 2
    assert "does not generate; decoding options num_beams do not apply" in capsys.readouterr().err
    assert main(["eval", "toy-describe", "--model", "echo,max_new_tokens=lots", "--data", str(toy_data),
                 "--out", str(tmp_path / "z")]) == 2
    assert "option 'max_new_tokens': 'lots' is not an integer" in capsys.readouterr().err


def test_second_run_hits_the_generation_cache(toy_registry: Registry, toy_data: Path, tmp_path: Path) -> None:
    Echo.calls = 0
    first = _eval(toy_registry, "toy-describe", "echo", toy_data, tmp_path / "a", cache_dir=tmp_path / "cache")
    assert Echo.calls == 6  # 12 requests, 2 per unit, all different... and one batch per unit
    second = _eval(toy_registry, "toy-describe", "echo", toy_data, tmp_path / "b", cache_dir=tmp_path / "cache")
    assert Echo.calls == 6 and first["metrics"] == second["metrics"]
    _eval(toy_registry, "toy-describe", "echo,max_new_tokens=4", toy_data, tmp_path / "c", cache_dir=tmp_path / "cache")
    assert Echo.calls == 12  # other decoding options: other cache entries


def _killable_generation(data: str, out: str) -> None:
    registry = build_registry(extra_plugins=[("toy", ToyPlugin())])
    run_evaluation(EvalConfig("toy-describe", "slow-random:0.2", Path(data), Path(out), quiet=True, use_cache=False),
                   registry)


def test_generation_resumes_after_sigkill_with_identical_predictions(toy_registry: Registry, toy_data: Path,
                                                                     tmp_path: Path) -> None:
    out = tmp_path / "killed"
    kill_once_a_unit_is_stored(_killable_generation, (str(toy_data), str(out)), out)
    done = sum(len(p.read_text().splitlines()) for p in (out / ".partial").glob("shard-*.jsonl"))
    assert 0 < done < 6 and not (out / "predictions.jsonl").exists()
    resumed = _eval(toy_registry, "toy-describe", "slow-random:0.2", toy_data, out, use_cache=False)
    clean = _eval(toy_registry, "toy-describe", "slow-random:0.2", toy_data, tmp_path / "clean", use_cache=False)
    assert resumed["resumed"] is True and resumed["metrics"] == clean["metrics"]
    assert (out / "predictions.jsonl").read_text() == (tmp_path / "clean" / "predictions.jsonl").read_text()


# -- metrics from the run -------------------------------------------------------------------------
def test_a_missing_metric_names_the_package_to_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ABDUCT_DISABLE_PLUGINS", "metrics")  # as if abduct-metrics were not installed
    run = Run(tmp_path, "val", registry=build_registry())
    assert run.metric("exact-match").compute({"a": "x"}, {"a": ["x"]}).corpus == {"exact_match": 100.0}
    hint = re.escape(install_command("abduct-metrics"))  # the command that works where abduct came from
    with pytest.raises(AbductError, match=f"metric 'cider', which comes with abduct-metrics: {hint}"):
        run.metric("cider")


def test_score_takes_options_like_a_spec(toy_registry: Registry, tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "k.json").write_text(json.dumps({"a": 1}))
    args = ["score", "toy-choice", "--predictions", str(tmp_path / "k.json"), "--answer-key", str(tmp_path / "k.json")]
    assert main([*args, "-o", "strict=true"]) == 2
    assert "task 'toy-choice' has no option 'strict' (valid: none)" in capsys.readouterr().err
    assert Spec.parse("toy-choice").with_options(["strict=true"]) == Spec.parse("toy-choice,strict=true")
