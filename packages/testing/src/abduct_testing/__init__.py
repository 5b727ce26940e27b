"""Reusable contract tests for plugin authors.

Subclass a contract in your package's tests and fill in its ``make_*`` methods; pytest then
runs every ``test_*`` method against your component::

    from abduct_testing import ScorerContract

    class TestMyScorer(ScorerContract):
        def make_scorer(self):
            return MyScorer()
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from abduct.contract import (
    AbductError,
    Box,
    DataError,
    Decoding,
    DualEncoder,
    GenerationRequest,
    Generator,
    GroundedText,
    MatrixScorer,
    Metric,
    MetricResult,
    Region,
    Registration,
    Scorer,
    Settings,
    Spec,
    Task,
    TextPool,
    VisualInput,
    hookimpl,
)
from abduct.host import (
    EvalConfig,
    GenerationEngine,
    Registry,
    ScoringEngine,
    build_registry,
    main,
    model_traits,
    reset_registry,
    run_evaluation,
)
from abduct.kit import install_command, read_json
from abduct_testing.fuzzing import (
    DATA_FILES,
    PAGE_FILES,
    CliOutcome,
    OptionViolation,
    clean_failure_problem,
    declared_violations,
    fuzz_cli_input,
    half_written_problem,
    renders_pages,
    run_cli,
)
from abduct_testing.scaling import EXTREME_SCALES, ScaledScorer, base_score, scaled_models

SCORING_PROTOCOLS = (Scorer, MatrixScorer, DualEncoder)


def shared_data_dir() -> Path | None:
    """The benchmarks' real annotation files (``shared/data``), found from ``$ABDUCT_SHARED_DATA``
    or beside the current directory or one of its parents; None when absent."""
    env = os.environ.get("ABDUCT_SHARED_DATA")
    if env:
        return Path(env) if Path(env).is_dir() else None
    here = Path.cwd().resolve()
    for folder in (here, *here.parents):
        candidate = folder / "shared" / "data"
        if candidate.is_dir():
            return candidate
    return None


def closed_port() -> int:
    """A local TCP port nobody listens on (bound, then released): connections are refused."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def unreachable_hub(cache: Path) -> Iterator[Path]:
    """The Hugging Face hub pointed at a closed local port, with ``cache`` (created) as its
    cache and no offline variable set: an offline machine, whatever this one's network. The
    hub client reads its cache location at import, so that is patched too when imported."""
    # abduct-modelkit's, imported here only: the packages that touch the hub depend on it, the kit does not
    from abduct_modelkit import patched_hub

    cache.mkdir(parents=True, exist_ok=True)
    env = {"HF_ENDPOINT": f"http://127.0.0.1:{closed_port()}", "HF_HUB_CACHE": str(cache),
           "HF_HUB_OFFLINE": None, "TRANSFORMERS_OFFLINE": None}
    with patched_hub(env, "HF_HUB_CACHE", str(cache)):
        yield cache


@contextmanager
def killed_once(process: subprocess.Popen[bytes], marker: Path, within: float = 240.0) -> Iterator[None]:
    """SIGKILL ``process`` from a watcher thread as soon as ``marker`` exists (its first
    checkpoint), while the block does other work (an uninterrupted reference run); on leaving,
    the watcher is awaited, the child is gone whatever happened, and it must have died by
    SIGKILL: a run that finished before the kill tests no resume."""
    def watch() -> None:
        deadline = time.monotonic() + within
        while not marker.exists() and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        if process.poll() is None:
            process.send_signal(signal.SIGKILL)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        yield
        watcher.join(timeout=within)
    finally:
        process.kill()  # a no-op once killed; a failure in the block leaves no child behind
        process.wait()
    assert process.returncode == -signal.SIGKILL, (
        f"the process ended (exit {process.returncode}) before {marker} appeared and it could be killed: "
        f"{process.stderr.read().decode() if process.stderr else ''}")


def fast_one_line_failure(argv: list[str], within: float = 10.0) -> str:
    """Run ``abduct ARGV``, which must fail as missing weights do offline: exit 2 within
    ``within`` seconds with one line on stderr; returns that line (for the packages' own checks)."""
    started = time.monotonic()
    outcome = run_cli(argv)
    elapsed = time.monotonic() - started
    assert outcome.code == 2 and elapsed < within, (outcome.code, elapsed)
    assert outcome.err.count("\n") == 1, outcome.err
    return outcome.err


def finished_judgments(out: Path) -> set[str]:
    """Ids of the records whose judge units a run under ``out`` already finished (from its
    partial shards): what a resumed judged run must not ask again."""
    done: set[str] = set()
    for shard in (out / ".partial").glob("shard-*.jsonl"):
        for line in shard.read_text().splitlines():
            entry = json.loads(line)
            if entry["unit"].startswith("judge/"):
                done |= {r["id"] for r in entry["records"]}
    return done


_STAND_INS: dict[str, Callable[[], object]] = {}


def registry_with_models(plugin: str, models: Mapping[str, tuple[str, Callable[[], object]]]) -> Registry:
    """The registry plus stand-in models, ``{name: (description, make)}`` with ``make()`` building
    one: tests declare each in a line instead of a hook class and a factory apiece. A name is
    one model per process (the last declared)."""
    _STAND_INS.update({name: make for name, (_, make) in models.items()})

    class _StandIns:
        @hookimpl
        def register_models(self) -> Iterator[Registration]:
            for name, (description, _) in models.items():
                yield Registration(name, description, f"{__name__}:_make_stand_in")

    return build_registry([(plugin, _StandIns())])


def _make_stand_in(spec: Spec, settings: Settings) -> object:
    return _STAND_INS[spec.name]()


def hub_snapshot(cache: Path, repo_id: str) -> Path:
    """The directory where ``repo_id``'s files go in the hub cache ``cache`` (as a download
    would leave them: a snapshot that ``refs/main`` points to)."""
    root = cache / f"models--{repo_id.replace('/', '--')}"
    snapshot = root / "snapshots" / ("0" * 40)
    snapshot.mkdir(parents=True, exist_ok=True)
    (root / "refs").mkdir(exist_ok=True)
    (root / "refs" / "main").write_text("0" * 40)
    return snapshot


def make_images(directory: Path, count: int = 3, size: tuple[int, int] = (64, 48), seed: int = 0) -> list[Path]:
    """Write ``count`` small random RGB JPEGs and return their paths."""
    rng = np.random.default_rng(seed)
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(count):
        pixels = rng.integers(0, 256, size=(size[1], size[0], 3), dtype=np.uint8)
        path = directory / f"image_{i}.jpg"
        Image.fromarray(pixels).save(path)
        paths.append(path)
    return paths


def contract_visuals(tmp_path: Path, model: object) -> list[VisualInput]:
    """Three inputs using what ``model`` accepts: images (with a region where it takes
    regions) and a context text where it takes context."""
    accepts = model_traits(model).accepts
    paths = make_images(tmp_path / "contract_images", 3)
    region = Region((Box(4, 4, 20, 16),)) if "region" in accepts else None
    contexts: Sequence[str | None] = (None,) * 3
    if "context" in accepts:
        contexts = ("clue: a wet street", "clue: an open umbrella", "clue: a kitchen")
    if "image" not in accepts:
        return [VisualInput(context=c) for c in contexts]
    return [VisualInput(str(paths[0]), context=contexts[0]), VisualInput(str(paths[1]), region, contexts[1]),
            VisualInput(str(paths[2]), region, contexts[2])]


PAIRS_FILE = "pairs.json"


def write_pairs(directory: Path, splits: dict[str, list[dict[str, Any]]]) -> Path:
    """Write training pairs for ``PairsFile``: per split, records ``{"id", "inference",
    "clue"?, "image"? (relative to ``directory``), "box"? ([left, top, width, height]), "group"?}``."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / PAIRS_FILE).write_text(json.dumps(splits))
    return directory


class PairsFile:
    """A dataset offering ``write_pairs``' records as training pairs: what trainers' tests use
    instead of a real benchmark (register it with ``make_pairs_file``)."""

    def load(self, data_dir: Path, split: str) -> list[GroundedText]:
        return self.pairs(data_dir, split)

    def check(self, data_dir: Path) -> list[str]:
        return []

    def pairs(self, data_dir: Path, split: str) -> list[GroundedText]:
        path = Path(data_dir) / PAIRS_FILE
        splits = read_json(path, "pairs file")
        if split not in splits:
            raise DataError(f"no split '{split}'", file=path)
        out = []
        for r in splits[split]:
            image = str(Path(data_dir) / r["image"]) if r.get("image") else None
            region = Region((Box(*r["box"]),)) if image and r.get("box") else None
            out.append(GroundedText(r["id"], VisualInput(image, region, r.get("clue")), r["inference"], r.get("group")))
        return out


def make_pairs_file(spec: Spec, settings: Settings) -> PairsFile:
    return PairsFile()


class ScorerContract:
    """Every scorer: right shapes, finite, deterministic; fast paths agree with ``score``."""

    def make_scorer(self) -> object:
        raise NotImplementedError

    def make_visuals(self, tmp_path: Path) -> list[VisualInput]:
        return contract_visuals(tmp_path, self.make_scorer())

    texts: Sequence[str] = ("a dog is waiting for its owner", "it rained recently", "someone is cooking")

    def test_is_a_scorer(self) -> None:
        assert isinstance(self.make_scorer(), SCORING_PROTOCOLS)

    def test_matrix_shape_finite_deterministic(self, tmp_path: Path) -> None:
        visuals = self.make_visuals(tmp_path)
        first = ScoringEngine(self.make_scorer(), quiet=True).score_matrix(visuals, self.texts)
        second = ScoringEngine(self.make_scorer(), quiet=True).score_matrix(visuals, self.texts)
        assert first.shape == (len(visuals), len(self.texts))
        assert np.isfinite(first).all()
        np.testing.assert_allclose(first, second, rtol=1e-5, atol=1e-6)

    def test_pairs_agree_with_matrix(self, tmp_path: Path) -> None:
        visuals = self.make_visuals(tmp_path)
        engine = ScoringEngine(self.make_scorer(), batch_size=2, quiet=True)
        matrix = engine.score_matrix(visuals, self.texts)
        rows = [i for i in range(len(visuals)) for _ in self.texts]
        cols = [j for _ in visuals for j in range(len(self.texts))]
        pairs = engine.score_pairs([visuals[i] for i in rows], [self.texts[j] for j in cols])
        np.testing.assert_allclose(pairs, matrix[rows, cols], rtol=1e-4, atol=1e-5)

    def test_dual_encoder_embeddings_are_normalised(self, tmp_path: Path) -> None:
        scorer = self.make_scorer()
        if not isinstance(scorer, DualEncoder):
            return
        v = np.asarray(scorer.encode_visual(self.make_visuals(tmp_path)), dtype=np.float64)
        t = np.asarray(scorer.encode_text(list(self.texts)), dtype=np.float64)
        np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-3)
        np.testing.assert_allclose(np.linalg.norm(t, axis=1), 1.0, atol=1e-3)


class GeneratorContract:
    """Every generator: one string per request, the same text for the same seed whatever the
    batching, and a second engine on the same cache makes no model call."""

    pool: Sequence[str] = ("a dog waits for its owner", "it rained recently", "someone is cooking dinner")
    prompts: Sequence[str | None] = (None, "What happened?", "Explain the scene.")

    def make_generator(self) -> object:
        raise NotImplementedError

    def make_requests(self, tmp_path: Path) -> list[GenerationRequest]:
        visuals = contract_visuals(tmp_path, self.make_generator())
        return [GenerationRequest(v, p) for v, p in zip(visuals, self.prompts)]

    def _engine(self, batch_size: int, cache_dir: Path | None = None, seed: int = 0) -> GenerationEngine:
        return GenerationEngine(self.make_generator(), decoding=Decoding(max_new_tokens=8, seed=seed),
                                batch_size=batch_size, cache_dir=cache_dir, fingerprint="contract", quiet=True)

    def test_is_a_generator(self) -> None:
        assert isinstance(self.make_generator(), Generator)

    def test_one_string_per_request_independent_of_batching(self, tmp_path: Path) -> None:
        requests = self.make_requests(tmp_path) * 2
        pool = TextPool.of(self.pool)
        together = self._engine(batch_size=len(requests)).generate(requests, pool)
        one_by_one = self._engine(batch_size=1).generate(requests, pool)
        assert len(together) == len(requests) and all(isinstance(t, str) for t in together)
        assert together == one_by_one
        assert together[: len(requests) // 2] == together[len(requests) // 2 :]

    def test_second_run_hits_the_cache(self, tmp_path: Path) -> None:
        requests, pool = self.make_requests(tmp_path), TextPool.of(self.pool)
        first_engine = self._engine(2, tmp_path / "cache")
        first = first_engine.generate(requests, pool)
        second_engine = self._engine(2, tmp_path / "cache")
        assert second_engine.generate(requests, pool) == first
        assert first_engine.calls > 0 and second_engine.calls == 0


class TaskContract:
    """Every task: evaluates ``random`` end to end, deterministically, and resumes exactly."""

    task_name: str = ""
    model_spec: str = "random"

    def make_data(self, folder: Path) -> Path:
        """Write a small dataset in the benchmark's layout into ``folder`` (an empty folder, made
        for it) and return the directory the task reads with ``--data``. Give the stage that runs
        first more items than one stored unit holds (16 for ``Choose``, 32 for ``Compare``, 64 for
        ``Generate``), so the resume test can stop a run midway."""
        raise NotImplementedError

    def make_registry(self) -> Registry:
        return build_registry()

    def _data(self, tmp_path: Path) -> Path:
        folder = tmp_path / "data"
        folder.mkdir(parents=True, exist_ok=True)
        return self.make_data(folder)

    def _config(self, data: Path, out: Path, **kwargs: Any) -> EvalConfig:
        return EvalConfig(task=self.task_name, model=self.model_spec, data_dir=data, out_dir=out, quiet=True,
                          use_cache=False, **kwargs)

    def _eval(self, data: Path, out: Path, **kwargs: Any) -> dict[str, Any]:
        return run_evaluation(self._config(data, out, **kwargs), self.make_registry())

    def test_is_a_task(self) -> None:
        task = self.make_registry().create("task", self.task_name)
        assert isinstance(task, Task), f"{self.task_name} does not declare dataset, plan() and finish()"

    def test_eval_writes_outputs_and_is_deterministic(self, tmp_path: Path) -> None:
        data = self._data(tmp_path)
        first = self._eval(data, tmp_path / "a", seed=3)
        second = self._eval(data, tmp_path / "b", seed=3)
        assert first["metrics"] == second["metrics"]
        for name in DATA_FILES:
            assert (tmp_path / "a" / name).is_file()
        assert json.loads((tmp_path / "a" / "results.json").read_text())["metrics"] == first["metrics"]
        assert not (tmp_path / "a" / ".partial").exists()
        if not renders_pages():
            importlib.import_module("pytest").skip(
                f"the run's data files pass; its pages ({', '.join(PAGE_FILES)}) are not checked: "
                f"abduct-report, which renders them, is not installed ({install_command('abduct-report')})")
        for name in PAGE_FILES:  # the task's view of each record renders in samples.html
            assert (tmp_path / "a" / name).is_file(), f"{name} was not written"

    def test_every_metric_declares_its_direction(self, tmp_path: Path) -> None:
        """Each numeric metric in results.json has a metric_info entry (abduct.contract.metric_info)."""
        results = self._eval(self._data(tmp_path), tmp_path / "out")
        assert "undeclared_metrics" not in results, (
            f"{self.task_name} does not declare {results.get('undeclared_metrics')} in its metric_info")
        for name, entry in results["metric_info"].items():
            assert entry["better"] in ("higher", "lower", None), name
            if entry["range"] is not None and entry["chance"] is not None:
                lo, hi = entry["range"]
                assert lo <= entry["chance"] and (hi is None or entry["chance"] <= hi), name

    def test_resume_after_interruption_gives_same_metrics(self, tmp_path: Path) -> None:
        data = self._data(tmp_path)
        counting = CallCountingRegistry(self.make_registry())
        reference = run_evaluation(self._config(data, tmp_path / "ref"), counting)
        assert counting.calls >= 2, "make_data must give the task more than one model call, so a run can stop midway"
        # the model stops the run on its last call, as a crash would: what finished before is kept
        out = tmp_path / "resumed"
        with contextlib.suppress(Interrupted):
            run_evaluation(self._config(data, out), CallCountingRegistry(self.make_registry(), stop_at=counting.calls))
        assert (out / ".partial").is_dir(), "an interrupted run must keep its finished units"
        resumed = self._eval(data, out)
        assert resumed["resumed"] is True
        assert resumed["metrics"] == reference["metrics"]


class Interrupted(AbductError):
    """What a model of ``CallCountingRegistry`` raises on its last allowed call: the run stops as a crash would stop it.
    An ``AbductError``, so that the engine passes it on as it is (anything else a model raises becomes a
    ``PluginError`` naming the model) and a test can catch it by its own name."""


class CallCountingRegistry(Registry):
    """A registry giving ``base``'s components, each model it builds counting its calls (score, score_matrix,
    encode_*, generate) and raising ``Interrupted`` on call ``stop_at``."""

    def __init__(self, base: Registry, stop_at: int | None = None) -> None:
        super().__init__(base.manager, base.plugins)
        self.calls = 0
        self.stop_at = stop_at

    def create(self, kind: str, spec: Spec | str, settings: Settings | None = None, **options: Any) -> Any:
        built = super().create(kind, spec, settings, **options)
        return _Counted(built, self) if kind == "model" else built


class _Counted:
    """A model with exactly the inner model's methods and declarations, its calls counted."""

    def __init__(self, inner: Any, counter: CallCountingRegistry) -> None:
        self._inner = inner
        self._counter = counter

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._inner, name)
        if not callable(value) or name.startswith("_"):
            return value
        counter = self._counter

        def counted(*args: Any, **kwargs: Any) -> Any:
            counter.calls += 1
            if counter.calls == counter.stop_at:
                raise Interrupted(f"stopped on call {counter.calls}")
            return value(*args, **kwargs)

        return counted


class MetricContract:
    """Every metric: corpus values are finite numbers; per-sample ids match the input."""

    def make_metric(self) -> Metric:
        raise NotImplementedError

    predictions = {"a": "a man is riding a horse", "b": "two dogs play in the snow"}
    references = {"a": ["a man rides a horse", "a person on a horse"], "b": ["dogs playing in snow"]}
    questions: dict[str, str] | None = None

    def test_result_shape(self) -> None:
        result = self.make_metric().compute(self.predictions, self.references, self.questions)
        assert isinstance(result, MetricResult)
        assert result.corpus and all(np.isfinite(v) for v in result.corpus.values())
        if result.per_sample:
            assert set(result.per_sample) == set(self.predictions)


def registry_fixture(install: Callable[[], Registry], name: str = "test_registry") -> Any:
    """A pytest fixture giving the registry ``install`` builds, reset afterwards so no later
    test sees this test's plugins (pytest is imported on use, not when the kit is)."""

    def fixture() -> Iterator[Registry]:
        registry = install()
        yield registry
        reset_registry(None)

    return importlib.import_module("pytest").fixture(fixture, name=name)


def data_fixture(write: Callable[[Path], Path], name: str) -> Any:
    """A module-scoped pytest fixture ``name``: ``write`` fills a fresh directory once per
    test module, so tiny datasets are not rebuilt for every test."""

    def fixture(tmp_path_factory: Any) -> Path:
        return write(tmp_path_factory.mktemp(name))

    return importlib.import_module("pytest").fixture(fixture, scope="module", name=name)


def private_cache_fixture() -> Any:
    """An autouse pytest fixture pointing ``ABDUCT_CACHE_DIR`` into each test's ``tmp_path``,
    so no test reads features another test (or the user) cached."""

    def fixture(tmp_path: Path, monkeypatch: Any) -> None:
        monkeypatch.setenv("ABDUCT_CACHE_DIR", str(tmp_path / "cache"))

    return importlib.import_module("pytest").fixture(fixture, autouse=True, name="private_cache")


def session_cache_fixture() -> Any:
    """An autouse, session-wide pytest fixture pointing ``ABDUCT_CACHE_DIR`` at one temporary
    directory: what the session builds (tiny models) is shared by its tests, and nothing reaches
    the user's cache."""

    def fixture(tmp_path_factory: Any) -> Iterator[Path]:
        root = Path(tmp_path_factory.mktemp("abduct-cache"))
        before = os.environ.get("ABDUCT_CACHE_DIR")
        os.environ["ABDUCT_CACHE_DIR"] = str(root)
        yield root
        if before is None:
            os.environ.pop("ABDUCT_CACHE_DIR", None)
        else:
            os.environ["ABDUCT_CACHE_DIR"] = before

    return importlib.import_module("pytest").fixture(fixture, scope="session", autouse=True, name="session_cache")


# What tests may use beyond the contract tests above: the CLI's entry point and the engines
# (abduct.host's, re-exported for the tests written against them), the fuzzers and fixtures.
# Nothing here comes from a private module of abduct: what a test of the core's internals
# needs, it imports in packages/core/tests.
__all__ = [
    "base_score", "CallCountingRegistry", "clean_failure_problem", "CliOutcome", "closed_port",
    "contract_visuals", "data_fixture", "declared_violations", "EvalConfig",
    "EXTREME_SCALES", "fast_one_line_failure", "finished_judgments", "fuzz_cli_input", "GenerationEngine",
    "GeneratorContract", "half_written_problem", "hub_snapshot", "Interrupted", "killed_once",
    "main",
    "make_images", "make_pairs_file", "MetricContract", "OptionViolation", "PairsFile",
    "private_cache_fixture", "registry_fixture", "registry_with_models", "run_cli", "session_cache_fixture",
    "run_evaluation", "scaled_models", "ScaledScorer", "ScorerContract", "ScoringEngine", "shared_data_dir",
    "TaskContract", "unreachable_hub", "write_pairs",
]
