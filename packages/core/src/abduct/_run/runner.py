"""The evaluation runner, shared by every task.

``Run`` is what a task receives: the data location and settings, the scoring and
generation engines, the run's metrics, and
``map_units``, which runs the task's work unit by unit and appends each finished unit's
per-sample records to a shard file with an atomic rename. A run killed at any moment and
started again into the same output directory skips the finished units; because metrics are
computed from the stored records, they equal an uninterrupted run's.
"""

from __future__ import annotations

import functools
import json
import re
import shutil
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from abduct._engine.generation import GenerationEngine
from abduct._engine.judging import JudgeEngine
from abduct._engine.models import engine_for
from abduct._engine.pace import Pace, paced
from abduct._engine.scoring import ModelCalls, ScoringEngine
from abduct._engine.tokens import Tokens, added_blocks, run_ledger, total
from abduct._registry.providers import UnknownNameError, not_installed
from abduct._registry.registry import Registry, get_registry
from abduct.contract.errors import AbductError
from abduct.contract.protocols import Metric
from abduct.contract.records import FEATURES
from abduct.contract.spec import Settings, Spec
from abduct.kit.distributed import RankLost, Ranks, gather_objects
from abduct.kit.io import atomic_write_json, atomic_write_jsonl

T = TypeVar("T")
PARTIAL_DIR = ".partial"
LEDGER_FILE = "tokens.json"  # in PARTIAL_DIR: the token ledger of the invocations so far


def _read_ledger(path: Path) -> dict[str, Any] | None:
    """The ledger an earlier invocation left (None: none, or not one: the count starts again)."""
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return found if isinstance(found, dict) and isinstance(found.get("stages"), dict) else None
OUTPUT_NAMES = ("results.json", "predictions.jsonl", "report.md", "report.html")
FLUSH_SECONDS = 1.0


SHARD_NAME = re.compile(r"shard-(\d+)\.jsonl")
_UNIT_PREFIX = re.compile(rb'\{"unit": ("(?:[^"\\]|\\.)*")')


UnitCheck = Callable[[Any, list[dict[str, Any]]], "str | None"]  # what a stored unit lacks, or None


def expecting(*fields: str) -> UnitCheck:
    """A check of a stored unit of a shared request (a batch of items, one record per item, in
    order): as many records as items, each with ``fields`` and its item's id."""
    def check(batch: Any, records: list[dict[str, Any]]) -> str | None:
        if len(records) != len(batch):
            return f"holds {len(records)} records for {len(batch)} items"
        for item, record in zip(batch, records):
            missing = [name for name in fields if name not in record]
            if missing:
                return f"holds a record without the field '{missing[0]}'"
            if "id" in fields and str(record["id"]) != str(item.id):
                return f"holds the record of '{record['id']}' where '{item.id}' belongs"
        return None
    return check


class BudgetSpent(AbductError):
    """``--budget tokens=N`` was reached: the run stopped before its next unit or batch, the
    finished units kept (the command exits 3)."""


class RepairWarning(UserWarning):
    """A damaged run folder, said in one line before abduct repairs it (the damaged part dropped
    and computed again)."""


@dataclass
class StoredFile:
    """One shard file of a unit store: its well-formed entries, and its damaged lines as
    ``(line number, what is wrong, the unit it held when that can still be read)``."""

    entries: list[tuple[str, list[dict[str, Any]]]]
    damaged: list[tuple[int, str, str | None]]


def read_stored(path: Path) -> StoredFile:
    """The units stored in ``path`` (a ``shard-N.jsonl`` of ``.partial``); a line that is cut off,
    does not parse or is not a stored unit is listed as damaged, not raised."""
    data = path.read_bytes()
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    entries, damaged = [], []
    for number, line in enumerate(lines, 1):
        try:
            entry = json.loads(line.decode("utf-8"))
            unit, records = entry["unit"], entry["records"]
            if not isinstance(unit, str) or not isinstance(records, list) or \
                    not all(isinstance(r, dict) for r in records):
                raise TypeError
        except (ValueError, KeyError, TypeError):
            cut = number == len(lines) and not data.endswith(b"\n")
            found = _UNIT_PREFIX.match(line)
            try:
                named = json.loads(found.group(1).decode("utf-8")) if found else None
            except ValueError:
                named = None
            damaged.append((number, "is cut off" if cut else "is garbled", named if isinstance(named, str) else None))
            continue
        entries.append((unit, records))
    return StoredFile(entries, damaged)


def shard_files(directory: Path) -> list[Path]:
    """A unit store's shard files, in the order they were written."""
    return sorted((p for p in directory.glob("shard-*.jsonl") if SHARD_NAME.fullmatch(p.name)),
                  key=lambda p: int(p.name[6:-6]))


def stored_units(directory: Path) -> int:
    """How many units ``directory`` (a ``.partial``) holds, damaged lines not counted; 0 when it
    cannot be read."""
    units: set[str] = set()
    try:
        for shard in shard_files(directory):
            units.update(unit for unit, _ in read_stored(shard).entries)
    except OSError:
        return 0
    return len(units)


def units_phrase(count: int) -> str:
    """``1 unit``, ``3 units``: how the messages about stored units count them."""
    return f"{count} unit{'' if count == 1 else 's'}"


def _described(path: Path, damaged: list[tuple[int, str, str | None]]) -> str:
    """One line: what is wrong in ``path`` and what is done about it."""
    if len(damaged) == 1:
        number, what, unit = damaged[0]
        return f"{path}: line {number} {what}; dropped, its unit{f' ({unit})' if unit else ''} is computed again"
    numbers = ", ".join(str(number) for number, _, _ in damaged)
    return f"{path}: lines {numbers} are cut off or garbled; dropped, their units are computed again"


class UnitStore:
    """Finished units' records in ``directory/shard-NNNNNN.jsonl`` files, beside ``run.json``
    (the run's configuration, so that only the same run resumes from them). A damaged line is
    said in one warning, then dropped from its file (its unit is computed again)."""

    def __init__(self, directory: Path, signature: dict[str, Any] | None = None) -> None:
        self.directory = directory
        self.signature = signature
        self.done: dict[str, list[dict[str, Any]]] = {}
        self.origin: dict[str, Path] = {}  # the shard file each stored unit was read from
        self._told: set[Path] = set()  # shard files a mismatch was already said of
        self._pending: list[tuple[str, list[dict[str, Any]]]] = []
        self._next = 0
        self._last_flush = time.monotonic()
        for shard in shard_files(directory):  # none when the directory is not there yet
            self._next = max(self._next, int(shard.name[6:-6]) + 1)
            stored = read_stored(shard)
            if stored.damaged:
                warnings.warn(_described(shard, stored.damaged), RepairWarning, stacklevel=2)
                if stored.entries:
                    atomic_write_jsonl(shard, ({"unit": u, "records": r} for u, r in stored.entries))
                else:
                    shard.unlink()
            self.done.update(stored.entries)
            self.origin.update((unit, shard) for unit, _ in stored.entries)

    def mismatch(self, unit: str, stage: str, problem: str) -> None:
        """Say (once per shard file) that a stored unit does not hold what ``stage`` needs; the
        unit is dropped and computed again (its new records go to a new shard, read last)."""
        self.done.pop(unit, None)
        shard = self.origin.pop(unit, None)
        if shard is not None and shard not in self._told:
            self._told.add(shard)
            warnings.warn(f"{shard}: unit '{unit}' is not what stage '{stage}' needs (it {problem}); it is "
                          "computed again, as is any other such unit of that file", RepairWarning, stacklevel=3)

    def add(self, unit: str, records: list[dict[str, Any]]) -> None:
        self.done[unit] = records
        self._pending.append((unit, records))
        if time.monotonic() - self._last_flush >= FLUSH_SECONDS:
            self.flush()

    def flush(self) -> None:
        if not self._pending:
            return
        marker = self.directory / "run.json"
        if self.signature is not None and not marker.exists():
            atomic_write_json(marker, self.signature)
        path = self.directory / f"shard-{self._next:06d}.jsonl"
        atomic_write_jsonl(path, ({"unit": u, "records": r} for u, r in self._pending))
        self._next += 1
        self._pending = []
        self._last_flush = time.monotonic()


@dataclass
class Run:
    """Everything a task needs to evaluate a model: where the data is, the engines through
    which it calls the model, and the run's settings."""

    data_dir: Path
    split: str
    scoring: ScoringEngine | None = None
    generation: GenerationEngine | None = None
    judge: JudgeEngine | None = None
    other_judges: list[JudgeEngine] = field(default_factory=list)  # further --judge specs, asked the same items
    model_name: str = "model"
    settings: Settings = field(default_factory=Settings)
    registry: Registry | None = None
    limit: int | None = None
    quiet: bool = False
    out_dir: Path | None = None
    cache_dir: Path | None = None  # abduct's cache root for this run; None under --no-cache
    signature: dict[str, Any] | None = None
    timings: dict[str, float] = field(default_factory=dict)
    ranks: Ranks = field(default_factory=Ranks)
    limit_unit: str | None = None  # what --limit counted, as the task named it
    artifacts: dict[str, Any] = field(default_factory=dict)  # written beside the outputs when the run ends
    data_files: list[Path] = field(default_factory=list)  # what the task's dataset read, hashed into results.json
    units_kept: int = 0  # units of every stage so far taken from an earlier, interrupted run's store
    units_total: int = 0  # units of every stage so far, kept or computed
    budget_tokens: int | None = None  # --budget: send nothing more once the model and the judge spent this many
    budget_cost: float | None = None  # --budget cost=X: the same, for what they cost at their prices
    stage_tokens: dict[str, Tokens] = field(default_factory=dict)  # the model's tokens, by the stage that spent them
    model_engines: list[ModelCalls] = field(default_factory=list, repr=False)  # whose tokens are the stages' (not the judge's)
    _unit: str = field(default="", repr=False)  # the unit being computed (the budget's line names it)
    _store: UnitStore | None = field(default=None, repr=False)
    _earlier: dict[str, Any] | None = field(default=None, repr=False)  # the ledger of the invocations resumed
    _metrics: dict[tuple[str, str], Metric] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self.model_engines = [e for e in (self.generation, self.scoring) if e is not None]
        for engine in (self.generation, self.scoring, self.judge.engine if self.judge is not None else None,
                       *(other.engine for other in self.other_judges)):
            if engine is not None:
                engine.before_batch = self._within_budget

    @property
    def scores(self) -> bool:
        return self.scoring is not None

    @property
    def generates(self) -> bool:
        return self.generation is not None

    @property
    def judged(self) -> bool:
        return self.judge is not None

    def require_scorer(self) -> ScoringEngine:
        if self.scoring is None:
            raise AbductError(f"this task scores texts, and model '{self.model_name}' does not score")
        return self.scoring

    def require_generator(self) -> GenerationEngine:
        if self.generation is None:
            raise AbductError(f"this task generates text, and model '{self.model_name}' does not generate")
        return self.generation

    def require_judge(self) -> JudgeEngine:
        """The ``--judge`` model, its finished judgments stored with the run's units."""
        if self.judge is None:
            raise AbductError("this task judges generations against references with a model; pass --judge SPEC "
                              "(e.g. --judge openai:MODEL,base_url=URL or --judge vlm:DIR)")
        return self.judge.bind(functools.partial(self.map_units, check=expecting("id", "equivalent", "raw")))

    def bound_other_judges(self) -> list[JudgeEngine]:
        """The further ``--judge`` models, their judgments stored with the run's units as the first's are."""
        return [other.bind(functools.partial(self.map_units, check=expecting("id", "equivalent", "raw")))
                for other in self.other_judges]

    def generator_for(self, spec: str, role: str = "model") -> GenerationEngine:
        """Another generating model (e.g. NL-EYE's captioner) with this run's settings and cache root."""
        cache_root = next((e.cache.root for e in (self.generation, self.scoring) if e is not None and e.cache), None)
        engines = engine_for(spec, self.settings, registry=self.registry, optional_inputs=FEATURES,
                             cache_dir=cache_root, use_cache=cache_root is not None, quiet=self.quiet)
        if engines.generation is None:
            raise AbductError(f"{role} '{engines.loaded.spec.name}' does not generate text")
        self.model_engines.append(engines.generation)  # its tokens count with the stage that asks it
        engines.generation.before_batch = self._within_budget
        return engines.generation

    def _model_tokens(self) -> Tokens:
        return total(e.tokens for e in self.model_engines)

    def _engines(self) -> list[ModelCalls]:
        """Every engine that asks a model for the run: the model's, then the judges'."""
        judges = [*([self.judge] if self.judge is not None else []), *self.other_judges]
        return [*self.model_engines, *(j.engine for j in judges)]

    def _judge_tokens(self) -> Tokens:
        judges = [*([self.judge] if self.judge is not None else []), *self.other_judges]
        return total(j.engine.tokens for j in judges) if judges else Tokens()

    def _cost(self) -> float | None:
        """What the model and the judges spent at their prices; None unless every one has prices."""
        engines = self._engines()
        if not engines or any(e.prices is None for e in engines):
            return None
        return sum(e.prices.cost(e.tokens) for e in engines if e.prices is not None)

    def ledger(self) -> dict[str, Any]:
        """results.json's ``tokens``: what this invocation spent, added to what the invocations before
        it spent (a resumed run's, kept in ``.partial/tokens.json``), so a run that stopped and resumed
        says what it cost in all."""
        now = run_ledger(self.stage_tokens, [e.tokens for e in self.model_engines],
                         self.judge.engine.tokens if self.judge is not None else None, self._cost())
        return added_blocks([self._earlier, now]) if self._earlier is not None else now

    def _within_budget(self, key: str | None = None) -> None:
        """``--budget``'s rule: nothing more is sent once the model and the judge have spent N
        tokens (or cost X at their prices) or more. Checked before each unit and before each batch
        (``--batch-size`` requests) an engine sends, so a run spends at most one batch's tokens past
        N; with the caches on, the batches before are kept, so a rerun does not ask them again."""
        where = f"unit '{key}'" if key is not None else "the next batch" + (f" of unit '{self._unit}'" if self._unit else "")
        if self.budget_tokens is not None:
            spent = self._model_tokens().spent + self._judge_tokens().spent
            if spent >= self.budget_tokens:
                raise BudgetSpent(f"budget spent: {spent:,} of {self.budget_tokens:,} tokens (prompt and completion, "
                                  f"this invocation); stopped before {where}")
        if self.budget_cost is not None:
            unpriced = [e.who for e in self._engines() if e.prices is None]
            if unpriced:
                raise AbductError(f"--budget cost={self.budget_cost:g} needs the prices of every model the run asks: "
                                  f"give {', '.join(unpriced)} price_in= and price_out= (per million tokens; 0 for "
                                  "one that costs nothing)")
            cost = self._cost() or 0.0
            if cost >= self.budget_cost:
                raise BudgetSpent(f"budget spent: {cost:.6g} of {self.budget_cost:g} at the given prices (this "
                                  f"invocation); stopped before {where}")

    def write_artifact(self, name: str, content: Any) -> None:
        """Kept until the run ends; the outputs' writer puts it beside results.json (rank 0 only)."""
        if "/" in name or name.startswith(".") or name in OUTPUT_NAMES:
            raise AbductError(f"a task's artifact needs a plain file name that is not an output of every run, got '{name}'")
        self.artifacts[name] = content

    def metric(self, name: str, **options: Any) -> Metric:
        """The metric ``name`` built with the run's settings (its device) and ``options``, once per
        run: a task that asks in ``plan`` (to fail before any model call) and again in ``finish``
        gets the same one, so weights (BERTScore's, BEM's) load once."""
        key = (name, repr(sorted(options.items())))
        if key not in self._metrics:
            registry = self.registry or get_registry()
            try:
                self._metrics[key] = registry.create("metric", Spec(name), self.settings, **options)
            except UnknownNameError:
                missing = not_installed("metric", name, "this task")
                if missing is None:
                    raise
                raise missing from None
        return self._metrics[key]

    def map_units(
        self, stage: str, units: Sequence[tuple[str, T]], fn: Callable[[T], list[dict[str, Any]]],
        check: UnitCheck | None = None,
    ) -> list[dict[str, Any]]:
        """Run ``fn`` on each ``(unit_id, payload)`` and return all records in unit order.

        Units finished by an earlier, interrupted run into the same ``out_dir`` are not
        run again, unless ``check`` (payload, stored records) says what they lack: then one
        warning names the file and the unit is computed again. Unit ids must be unique within a stage.
        """
        return [record for records in self.map_unit_records(stage, units, fn, check) for record in records]

    def map_unit_records(
        self, stage: str, units: Sequence[tuple[str, T]], fn: Callable[[T], list[dict[str, Any]]],
        check: UnitCheck | None = None,
    ) -> list[list[dict[str, Any]]]:
        """``map_units``, each unit's records apart (a shard keeps them by unit id)."""
        if self._store is None and self.out_dir is not None:
            self._store = UnitStore(self.partial_dir, self.signature)
            self._earlier = _read_ledger(self.partial_dir / LEDGER_FILE)
        store = self._store
        results: list[list[dict[str, Any]]] = []
        if store is not None and check is not None:
            for uid, payload in units:
                key = f"{stage}/{uid}"
                if key in store.done and (problem := check(payload, store.done[key])) is not None:
                    store.mismatch(key, stage, problem)
        done = self._agreed_done(stage, units)
        todo = sum(1 for uid, _ in units if f"{stage}/{uid}" not in done)
        self.units_kept += len(units) - todo
        self.units_total += len(units)
        quiet = self.quiet or todo < 1 or not self.ranks.is_main
        pace = Pace(stage, todo, lambda: total(e.live() for e in self._engines()),
                    lambda: sum(e.planned for e in self._engines()))
        start = time.perf_counter()
        spent_before = self._model_tokens()
        with paced(pace, quiet) as unit_done:
            self._each_unit(stage, units, fn, store, done, results, unit_done, spent_before)
        self.timings[stage] = self.timings.get(stage, 0.0) + time.perf_counter() - start
        return results

    def _each_unit(self, stage: str, units: Sequence[tuple[str, T]], fn: Callable[[T], list[dict[str, Any]]],
                   store: UnitStore | None, done: set[str], results: list[list[dict[str, Any]]],
                   unit_done: Callable[[], None], spent_before: Tokens) -> None:
        """``fn`` of each unit not ``done`` (stored as it finishes), the stored records of the others."""
        try:
            for uid, payload in units:
                key = f"{stage}/{uid}"
                if store is not None and key in done:
                    results.append(store.done[key])
                    continue
                self._within_budget(key)
                self._unit = key
                try:
                    records = fn(payload)
                except RankLost as exc:
                    raise AbductError(f"{exc}; the run stopped on unit '{key}' (finished units are kept, "
                                      "start it again to resume)") from None
                except AbductError as exc:
                    if self.ranks.world == 1:
                        raise
                    raise AbductError(f"{exc} (every rank stopped on unit '{key}')") from None
                if store is not None:
                    store.add(key, records)
                results.append(records)
                unit_done()
        finally:  # keep what finished, also on Ctrl-C or an error in a later unit
            if store is not None:
                store.flush()
            self.stage_tokens.setdefault(stage, Tokens()).add(self._model_tokens().minus(spent_before))
            if store is not None and (self.partial_dir / "run.json").is_file():  # what a resumed run adds to
                atomic_write_json(self.partial_dir / LEDGER_FILE, self.ledger())

    @property
    def partial_dir(self) -> Path:
        """Where this rank keeps its finished units: ``.partial`` (rank 0) or ``.partial/rank-N``."""
        assert self.out_dir is not None
        base = self.out_dir / PARTIAL_DIR
        return base if self.ranks.rank == 0 else base / f"rank-{self.ranks.rank}"

    def _agreed_done(self, stage: str, units: Sequence[tuple[str, Any]]) -> set[str]:
        """The units of ``stage`` finished before, by every rank: each rank resumes from its
        own store, and ranks skip the same units so that their gathers stay in step."""
        store = self._store
        mine = {f"{stage}/{uid}" for uid, _ in units if store is not None and f"{stage}/{uid}" in store.done}
        if self.ranks.world == 1:
            return mine
        return set.intersection(*gather_objects(mine, self.ranks))

    def discard_partial(self) -> None:
        if self.out_dir is not None:
            shutil.rmtree(self.out_dir / PARTIAL_DIR, ignore_errors=True)
        self._store = None
