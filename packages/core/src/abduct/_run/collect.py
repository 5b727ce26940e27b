"""What a run collects before any stage runs, each once: the task (its spec parsed, its traits
read), the dataset it reads built with the user's ``--dataset`` options, the split's examples
(``--limit`` applied to what the task says it counts), then the model, the ``--judge`` and the
``Run`` they make, with the signature its stored units resume under. ``abduct check`` and
exporters (lmms-eval) read a task's data through here too."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from abduct._declare.traits import TaskTraits, task_traits
from abduct._engine.judging import JudgeEngine
from abduct._engine.models import LoadedModel, engine_for, load_model
from abduct._registry.registry import Registry, get_registry
from abduct._run.runner import Run
from abduct._run.shards import Shard
from abduct._stats.resampling import RESAMPLES
from abduct.contract.errors import AbductError
from abduct.contract.records import FEATURES
from abduct.contract.spec import Settings, Spec
from abduct.contract.stages import RunInfo
from abduct.contract.task import Task
from abduct.kit.cache import default_cache_dir
from abduct.kit.distributed import Ranks


@dataclass(frozen=True)
class EvalConfig:
    task: str
    model: str
    data_dir: Path
    out_dir: Path
    split: str | None = None
    limit: int | None = None
    seed: int = 0
    batch_size: int = 64
    device: str = "cpu"
    quiet: bool = False
    cache_dir: Path | None = None
    use_cache: bool = True
    judge: str | None = None
    other_judges: tuple[str, ...] = ()  # further --judge specs: asked the same items, for their agreement
    overwrite: bool = False
    datasets: tuple[str, ...] = ()  # dataset specs whose options apply when the task loads them
    ci_resamples: int = RESAMPLES  # bootstrap resamples per metric interval; 0: no intervals
    shard: Shard | None = None  # evaluate only this shard's share, into --out, for abduct merge
    budget_tokens: int | None = None  # --budget tokens=N: stop before a unit once this many are spent
    budget_cost: float | None = None  # --budget cost=X: the same at the models' prices (price_in=, price_out=)
    label: str | None = None  # what compare and the pages call the run (--label); default: the spec without URLs

    @property
    def settings(self) -> Settings:
        return Settings(device=self.device, batch_size=self.batch_size, seed=self.seed)


@dataclass(frozen=True)
class Collected:
    """The examples a run evaluates, the whole split they came from, and the files read."""

    examples: list[Any]
    corpus: list[Any]
    files: list[Path] = field(default_factory=list)
    limit_unit: str | None = None  # what --limit counted, when a limit was given


@dataclass(frozen=True)
class Prepared:
    """The task of a run and what it reads: built once, handed to every phase after."""

    spec: Spec
    task: Task
    traits: TaskTraits
    dataset: Any  # the task's registered dataset, built with the user's options
    datasets: dict[str, dict[str, str]]  # name -> options the user gave (--dataset), as a shard's manifest says
    split: str


def load_task(spec: Spec | str, registry: Registry | None = None, settings: Settings | None = None) -> Task:
    spec = Spec.parse(spec) if isinstance(spec, str) else spec
    task = (registry or get_registry()).create("task", spec, settings)
    if not isinstance(task, Task):
        raise AbductError(f"task '{spec.name}' does not implement the Task protocol (dataset, plan, finish)")
    return task


def prepare(config: EvalConfig, registry: Registry) -> Prepared:
    """The task, its traits and its dataset: a bad ``--dataset`` is refused before any model loads."""
    spec = Spec.parse(config.task)
    task = load_task(spec, registry, config.settings)
    traits = task_traits(task, config.task)
    datasets = dataset_options(config.datasets, spec.name, task, registry, config.settings)
    dataset = build_dataset(task, datasets.get(task.dataset), registry, config.settings)
    split = config.split or task.default_split
    return Prepared(spec, task, traits, dataset, datasets, split)


def build_dataset(task: Task, options: Mapping[str, Any] | None = None, registry: Registry | None = None,
                  settings: Settings | None = None) -> Any:
    """The task's registered dataset, built with ``options`` (``--dataset NAME,k=v``)."""
    spec = Spec(task.dataset, options=tuple((options or {}).items()))
    return (registry or get_registry()).create("dataset", spec, settings or Settings())


def collect_examples(task: Task, dataset: Any, data_dir: Path, split: str, limit: int | None = None,
                     traits: TaskTraits | None = None) -> Collected:
    """``dataset``'s split, the examples ``limit`` selects (by the task's ``traits``), the files read."""
    traits = traits or task_traits(task)
    corpus = list(dataset.load(data_dir, split))
    examples, unit = corpus, None
    if limit is not None:
        unit = traits.limit_unit
        examples = list(traits.select(corpus, limit)) if traits.select else corpus[:limit]
    files = getattr(dataset, "files", None)
    return Collected(examples, corpus, list(files(data_dir, split)) if callable(files) else [], unit)


def dataset_options(given: tuple[str, ...], task_name: str, task: Task, registry: Registry,
                    settings: Settings) -> dict[str, dict[str, str]]:
    """``--dataset NAME[,key=value...]``: the task's own dataset's options (checked when it is
    built); any other dataset is refused rather than ignored (an unknown name or option first)."""
    options = {}
    for text in given:
        spec = Spec.parse(text)
        if spec.name != task.dataset:
            registry.create("dataset", spec, settings)  # an unknown name or option is said as such
            raise AbductError(f"--dataset {spec}: task '{task_name}' reads dataset '{task.dataset}', not '{spec.name}'")
        options[spec.name] = spec.option_dict()
    return options


def dataset_of(task_spec: str, datasets: tuple[str, ...] = (), registry: Registry | None = None) -> Any:
    """The dataset a task reads, built with the options of ``datasets`` (``--dataset``)."""
    config = EvalConfig(task=task_spec, model="", data_dir=Path(), out_dir=Path(), datasets=datasets)
    return prepare(config, registry or get_registry()).dataset


def identity(config: EvalConfig, split: str) -> dict[str, Any]:
    """What a finished run in ``--out`` must repeat to be rewritten."""
    return {"task": config.task, "model": str(Spec.parse(config.model)), "split": split,
            "data_dir": str(config.data_dir), "limit": config.limit, "seed": config.seed}


def shard_identity(config: EvalConfig, split: str, shard: Shard) -> dict[str, Any]:
    """What a rerun of a shard into its folder must repeat (else it is refused, as a finished run's)."""
    return {**identity(config, split), "shard": str(shard)}


def _signature(config: EvalConfig, split: str, fingerprint: str) -> dict[str, Any]:
    return {
        "task": config.task,
        "model": config.model,
        "model_fingerprint": fingerprint,
        "data_dir": str(config.data_dir.resolve()),
        "split": split,
        "limit": config.limit,
        "seed": config.seed,
    }


def build_judge(config: EvalConfig, registry: Registry) -> JudgeEngine | None:
    """The ``--judge`` model as a judge: it must generate, and it decodes greedily (its own
    seed fixed, so that a judgment is the same in every run); it sees what it can of the
    judged items (a text-only judge reads just the prompt)."""
    if config.judge is None:
        return None
    return judge_engine(config.judge, config, registry)


def build_other_judges(config: EvalConfig, first: JudgeEngine | None, registry: Registry) -> list[JudgeEngine]:
    """The further ``--judge`` specs, each a judge as the first is; the same spec twice is refused
    (two copies of one judge agree by construction)."""
    others = [judge_engine(spec, config, registry) for spec in config.other_judges]
    seen: set[str] = set()
    for judge in [*([first] if first is not None else []), *others]:
        if judge.spec in seen:
            raise AbductError(f"--judge {judge.spec} is given twice; give each judge once")
        seen.add(judge.spec)
    return others


def judge_engine(spec: str, config: EvalConfig, registry: Registry) -> JudgeEngine:
    """One ``--judge`` spec as a judge (see ``build_judge``)."""
    loaded = load_model(spec, config.settings, registry)
    name = loaded.spec.name
    if not loaded.generates:
        raise AbductError(f"--judge {loaded.spec}: model '{name}' does not generate, and a judge answers in text")
    if loaded.decoding.do_sample:
        raise AbductError(f"--judge {loaded.spec}: a judge decodes greedily (temperature 0); drop do_sample")
    engines = engine_for(loaded, config.settings, optional_inputs=FEATURES, cache_dir=config.cache_dir,
                         use_cache=config.use_cache, quiet=config.quiet, label=f"judge {name}",
                         decoding=replace(loaded.decoding, seed=0))
    assert engines.generation is not None
    return JudgeEngine(engines.generation, str(loaded.spec), loaded.fingerprint)


def _with_option(spec: Spec, option: str) -> Spec:
    """``spec`` with ``key=value`` set (in place of any value of ``key`` it had)."""
    key, _, value = option.partition("=")
    return Spec(spec.name, spec.argument, spec.tag, (*((k, v) for k, v in spec.options if k != key), (key, value)))


def build_run(config: EvalConfig, prepared: Prepared, loaded: LoadedModel, registry: Registry, split: str,
              ranks: Ranks) -> tuple[Run, RunInfo, list[Any]]:
    """The split's examples (read once the model is known to load), and The run's engines for the model's abilities, sharing one input policy, one timer and
    one set of content keys; caches only for models that say what they are (a fingerprint)."""
    engines = engine_for(loaded, config.settings, optional_inputs=prepared.traits.optional_inputs,
                         cache_dir=config.cache_dir, use_cache=config.use_cache, quiet=config.quiet, ranks=ranks)
    engines.policy.remedies = {feature: str(_with_option(prepared.spec, option))
                               for feature, option in prepared.traits.input_options.items()}
    judge = build_judge(config, registry)
    signature = _signature(config, split, loaded.fingerprint)
    if loaded.generates:
        signature["decoding"] = loaded.decoding.describe()
    if judge is not None:
        signature["judge"] = {"spec": judge.spec, "fingerprint": judge.fingerprint}
    other_judges = build_other_judges(config, judge, registry)
    if other_judges:  # only then: a run with one judge keeps the signature it always had
        signature["other_judges"] = [{"spec": j.spec, "fingerprint": j.fingerprint} for j in other_judges]
    datasets = prepared.datasets
    if config.shard is not None:  # a shard's stored units resume only that shard of that run
        signature.update(shard=str(config.shard), datasets=datasets)
    data = collect_examples(prepared.task, prepared.dataset, config.data_dir, split, config.limit, prepared.traits)
    run = Run(data_dir=config.data_dir, split=split, scoring=engines.scoring, generation=engines.generation,
              judge=judge, other_judges=other_judges, model_name=loaded.spec.name, settings=config.settings, registry=registry,
              limit=config.limit, quiet=config.quiet, out_dir=config.out_dir,
              cache_dir=(config.cache_dir or default_cache_dir()) if config.use_cache else None,
              signature=signature, ranks=ranks, limit_unit=data.limit_unit,
              data_files=list(data.files), budget_tokens=config.budget_tokens,
              budget_cost=config.budget_cost)
    known = RunInfo(split=split, model_name=run.model_name, scores=run.scores, generates=run.generates,
                    judged=run.judged, metric=run.metric, settings=run.settings, corpus=data.corpus)
    return run, known, data.examples


def load_examples(task_spec: str, data_dir: Path, split: str | None = None, limit: int | None = None,
                  datasets: tuple[str, ...] = (), registry: Registry | None = None,
                  settings: Settings | None = None) -> tuple[Prepared, Collected]:
    """A task and the examples its plan gets, read as ``abduct eval`` reads them (``--split``,
    ``--limit``, ``--dataset``): the task, its traits, dataset and split; the examples, the
    corpus and the files read. For hosts that plan without running (an export to another harness)."""
    settings = settings or Settings()
    config = EvalConfig(task=task_spec, model="", data_dir=Path(data_dir), out_dir=Path(), split=split, limit=limit,
                        seed=settings.seed, batch_size=settings.batch_size, device=settings.device, datasets=datasets)
    prepared = prepare(config, registry or get_registry())
    return prepared, collect_examples(prepared.task, prepared.dataset, config.data_dir, prepared.split, limit,
                                      prepared.traits)
