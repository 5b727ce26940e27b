"""Caches that check what they read: a damaged entry of the embedding or the generation cache (cut
short, bytes flipped, a NaN, another format, an empty file, a directory in its place) is one
warning naming the file, the entry is computed again and the numbers equal a clean run's; a
resumed ``.partial`` unit whose records lack what the stage needs is one line and computed again."""

from __future__ import annotations

import contextlib
import functools
import json
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from abduct import Registration, Settings, Spec, hookimpl
from abduct._cli import main
from abduct._engine.generation import GenerationEngine
from abduct._engine.scoring import ScoringEngine
from abduct._registry.registry import Registry, build_registry, reset_registry
from abduct._run.evaluate import EvalConfig, run_evaluation
from abduct.contract import GenerationRequest, VisualInput
from abduct.contract.errors import PluginError
from abduct.kit.cache import CacheWarning, EmbeddingCache
from abduct_testing import CallCountingRegistry, Interrupted, make_images
from abduct_testing.damage import KINDS, damage, rewrite_npz
from test_engine_and_baselines import CountingEncoder
from toy_plugin import Echo, ToyPlugin


def _nan(path: Path) -> None:
    with np.load(path) as stored:
        vectors = stored["vectors"].copy()
    vectors[0, 0] = np.nan
    rewrite_npz(path, vectors=vectors)


def _other_embeddings(path: Path) -> None:  # a valid .npz, one value per key instead of a vector
    with np.load(path) as stored:
        rewrite_npz(path, vectors=np.ones(len(stored["keys"])))


def _other_texts(path: Path) -> None:  # valid JSON, each text as a list
    path.write_text(json.dumps({k: [v] for k, v in json.loads(path.read_text()).items()}))


def _nan_texts(path: Path) -> None:
    path.write_text(json.dumps({k: float("nan") for k in json.loads(path.read_text())}))


DAMAGE: dict[str, Callable[[Path], None]] = {kind: functools.partial(damage, kind=kind) for kind in KINDS}
EMBEDDING_DAMAGE = {**DAMAGE, "nan": _nan, "other format": _other_embeddings}
TEXT_DAMAGE = {**DAMAGE, "nan": _nan_texts, "other format": _other_texts}


def _one_warning_naming(caught: list[warnings.WarningMessage], path: Path) -> None:
    said = [str(w.message) for w in caught if issubclass(w.category, CacheWarning)]
    assert len(said) == 1 and str(path) in said[0], said


@pytest.fixture
def visuals(tmp_path: Path) -> list[VisualInput]:
    return [VisualInput(str(p)) for p in make_images(tmp_path / "img", 4)]


@pytest.mark.parametrize("damage", list(EMBEDDING_DAMAGE))
def test_a_damaged_embedding_shard_is_said_once_and_computed_again(tmp_path: Path, visuals: list[VisualInput],
                                                                   damage: str) -> None:
    texts = ["a cat", "the sea", "a party", "rain"]
    root = tmp_path / "cache"
    clean = ScoringEngine(CountingEncoder(), cache=EmbeddingCache(root, "counting-v1"), quiet=True).score_matrix(
        visuals, texts)
    shards = sorted((root / "embeddings").rglob("shard-*.npz"))
    assert len(shards) == 2  # the visual and the text vectors
    for shard in shards:
        EMBEDDING_DAMAGE[damage](shard)
        model = CountingEncoder()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            again = ScoringEngine(model, cache=EmbeddingCache(root, "counting-v1"), quiet=True).score_matrix(
                visuals, texts)
        _one_warning_naming(caught, shard)
        np.testing.assert_allclose(again, clean)
        assert model.visual_calls or model.text_calls  # computed again, not read
        with warnings.catch_warnings():  # and the cache is whole again: no second warning
            warnings.simplefilter("error")
            ScoringEngine(CountingEncoder(), cache=EmbeddingCache(root, "counting-v1"), quiet=True).score_matrix(
                visuals, texts)


def test_an_embedding_shard_of_another_dimension_than_the_others_is_damaged(tmp_path: Path) -> None:
    cache = EmbeddingCache(tmp_path, "m")
    cache.put(["a", "b"], np.ones((2, 4)))
    cache.put(["c", "d"], np.ones((2, 4)))
    odd = cache.directory / "shard-odd.npz"  # written by a model that gave three values
    odd.write_bytes(cache._write(["e"], np.ones((1, 3))))
    with pytest.warns(CacheWarning, match=f"{odd}.* 3 values where the cache's others have 4"):
        found = EmbeddingCache(tmp_path, "m").get(["a", "c", "e"])
    assert found[2] is None and found[0] is not None and found[1] is not None


@pytest.mark.parametrize("damage", list(TEXT_DAMAGE))
def test_a_damaged_generation_shard_is_said_once_and_generated_again(tmp_path: Path, damage: str) -> None:
    requests = [GenerationRequest(VisualInput(context=f"context {i}"), f"prompt {i}") for i in range(3)]
    root = tmp_path / "cache"

    def engine() -> GenerationEngine:
        return GenerationEngine(Echo(), cache_dir=root, fingerprint="echo-v1", quiet=True)

    clean = engine().generate(requests)
    [shard] = sorted((root / "generations").rglob("shard-*.json"))
    TEXT_DAMAGE[damage](shard)
    Echo.calls = 0
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        again = engine().generate(requests)
    _one_warning_naming(caught, shard)
    assert again == clean and Echo.calls == 1


# -- through the command line ----------------------------------------------------------------------
class _Counting:
    @hookimpl
    def register_models(self) -> Iterator[Registration]:
        yield Registration("counting", "A dual encoder over pixel statistics", "test_cache_damage:make_counting")


def make_counting(spec: Spec, settings: Settings) -> CountingEncoder:
    return CountingEncoder()


@pytest.fixture
def registry() -> Iterator[Registry]:
    built = build_registry(extra_plugins=[("toy", ToyPlugin()), ("counting", _Counting())])
    reset_registry(built)
    yield built
    reset_registry()


def _eval(task: str, model: str, data: Path, out: Path, cache: Path) -> list[str]:
    return ["eval", task, "--model", model, "--data", str(data), "--out", str(out), "--cache-dir", str(cache),
            "--quiet"]


@pytest.mark.parametrize(("task", "model", "kind", "damage"), [
    ("toy-choice", "counting", "embeddings", "empty"),  # was "aborted", exit 1
    ("toy-choice", "counting", "embeddings", "flipped"),  # was a BadZipFile traceback
    ("toy-describe", "random", "generations", "other format"),  # was exact match 0.0, silently
    ("toy-describe", "random", "generations", "truncated"),
])
def test_eval_with_a_damaged_cache_warns_once_and_equals_the_clean_run(
        registry: Registry, toy_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        task: str, model: str, kind: str, damage: str) -> None:
    cache = tmp_path / "cache"
    assert main(_eval(task, model, toy_data, tmp_path / "clean", cache)) == 0
    capsys.readouterr()
    shard = sorted((cache / kind).rglob("shard-*"))[0]
    (EMBEDDING_DAMAGE if kind == "embeddings" else TEXT_DAMAGE)[damage](shard)
    assert main(_eval(task, model, toy_data, tmp_path / "again", cache)) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("warning: cache file ") and str(shard) in err[0], err
    clean = json.loads((tmp_path / "clean" / "results.json").read_text())["metrics"]
    assert json.loads((tmp_path / "again" / "results.json").read_text())["metrics"] == clean
    assert (tmp_path / "again" / "predictions.jsonl").read_text() == (tmp_path / "clean" / "predictions.jsonl").read_text()



# -- a resumed run's stored units ------------------------------------------------------------------
@pytest.mark.parametrize("damage", ["a field missing", "a record missing", "another item's record"])
def test_a_stored_unit_that_lacks_what_the_stage_needs_is_said_once_and_computed_again(
        toy_registry: Registry, toy_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        damage: str) -> None:
    out = tmp_path / "run"
    argv = ["eval", "toy-choice", "--model", "random", "--data", str(toy_data), "--quiet", "--no-cache"]
    with contextlib.suppress(Interrupted, PluginError):  # the stand-in's stop, however the engine passes it on
        run_evaluation(EvalConfig("toy-choice", "random", toy_data, out, quiet=True, use_cache=False),
                       CallCountingRegistry(toy_registry, stop_at=5))
    [shard] = sorted((out / ".partial").glob("shard-*.jsonl"))
    units = [json.loads(line) for line in shard.read_text().splitlines()]
    assert len(units) == 4
    for unit in units[1:3]:  # two units of one file: one line
        if damage == "a field missing":
            del unit["records"][0]["correct"]
        elif damage == "a record missing":
            unit["records"].pop()
        else:
            unit["records"][0]["id"] = "q999"
    shard.write_text("".join(json.dumps(unit) + "\n" for unit in units))
    assert main([*argv, "--out", str(out)]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and err[0].startswith(f"warning: {shard}: unit 'questions/") and "computed again" in err[0], err
    assert err[1] == f"resumed: 2 of 12 units kept from an unfinished run in {out}"
    assert main([*argv, "--out", str(tmp_path / "clean")]) == 0
    assert json.loads((out / "results.json").read_text())["metrics"] == \
        json.loads((tmp_path / "clean" / "results.json").read_text())["metrics"]
    assert (out / "predictions.jsonl").read_text() == (tmp_path / "clean" / "predictions.jsonl").read_text()
