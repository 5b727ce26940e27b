"""Independent shards: `abduct eval ... --shard I/N` into separate folders, then `abduct merge`,
equal the one-process run (metrics and intervals exactly, predictions as sets, units.json),
for a scoring, a generation, a judged (dependent stage) and a custom-step task; a shard killed
mid-run resumes; foreign, duplicated, missing or unfinished shards are one line, exit 2, and
nothing is written; --shard text is checked by the command line."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from abduct import Registration, Settings, Spec, UnitScores, VisualInput, hookimpl
from abduct._cli import main
from abduct._registry.registry import Registry, build_registry, reset_registry
from abduct._run.evaluate import EvalConfig, run_evaluation
from abduct._run.shards import RECORDS_FILE, SHARD_FILE, Shard, owner, read_records
from abduct.contract.stages import Custom, Records, RunInfo, RunModels, Stage
from abduct.contract.task import Evaluation
from toy_plugin import ToyPlugin, kill_once_a_unit_is_stored, write_toy_data

OUTPUTS = ("results.json", "predictions.jsonl", "units.json", "report.md", "report.html", "samples.html")


# -- a task with custom steps: several records per unit, and a stage built from the first's ------
def _pair_scores(models: RunModels, example: dict[str, Any]) -> Records:
    scores = models.require_scorer().score_pairs([VisualInput(example["image"])] * 2, example["choices"][:2]).tolist()
    return [{"id": example["id"], "part": k, "score": s} for k, s in enumerate(scores)]


def _larger(models: RunModels, pair: list[float]) -> Records:
    return [{"larger": int(pair[1] > pair[0])}]


class CustomSteps:
    """Two records per example from a custom step, then one per example from a second custom
    step built from them; ``details.order`` shows the order ``finish`` saw."""

    default_split = "val"
    dataset = "toy"

    def plan(self, examples: Sequence[dict[str, Any]], run: RunInfo) -> list[Stage]:
        def larger(done: Mapping[str, Records]) -> Custom[list[float]]:
            pairs: dict[str, list[float]] = {}
            for record in done["pairs"]:
                pairs.setdefault(record["id"], []).append(record["score"])
            return Custom([(uid, scores) for uid, scores in pairs.items()], _larger, frozenset({"score"}))

        units = [(it["id"], it) for it in examples]
        return [Stage("pairs", Custom(units, _pair_scores, frozenset({"score"}))), Stage("larger", after=larger)]

    def finish(self, examples: Sequence[dict[str, Any]], records: Mapping[str, Records], run: RunInfo) -> Evaluation:
        ids = [r["id"] for r in records["pairs"][::2]]
        larger = [{"id": i, **r} for i, r in zip(ids, records["larger"])]
        share = 100.0 * sum(r["larger"] for r in larger) / len(larger)
        return Evaluation({"larger": share, "n": len(larger)}, larger, details={"order": ids},
                          units={"larger": UnitScores.means("example", {r["id"]: r["larger"] for r in larger})},
                          artifacts={"order.json": ids})


def make_custom(spec: Spec, settings: Settings) -> CustomSteps:
    return CustomSteps()


class CustomPlugin:
    @hookimpl
    def register_tasks(self) -> Iterator[Registration]:
        yield Registration("shard-custom", "Custom steps, one after the other", "test_shards:make_custom")


@pytest.fixture
def registry() -> Iterator[Registry]:
    registry = build_registry(extra_plugins=[("toy", ToyPlugin()), ("custom", CustomPlugin())])
    reset_registry(registry)
    yield registry
    reset_registry()


@pytest.fixture
def data(tmp_path: Path) -> Path:
    return write_toy_data(tmp_path / "data", items=24)


def _eval(task: str, data: Path, out: Path, *extra: str) -> list[str]:
    return ["eval", task, "--data", str(data), "--out", str(out), "--quiet", "--no-cache", *extra]


def _same_run(one: Path, merged: Path) -> None:
    """``merged`` holds the run ``one`` holds: metrics, intervals and what they were computed
    from exactly; predictions as sets; units.json equal; every output and artifact there (the
    model's spec and the label made from it aside: shards of models with one fingerprint are one run,
    as a resume is)."""
    a, b = (json.loads((d / "results.json").read_text()) for d in (one, merged))
    for block in (a["model"], b["model"]):
        block.pop("spec"), block.pop("label")
    for key in ("task", "model", "data", "split", "seed", "limit", "limit_unit", "inputs", "metrics", "metric_info",
                "intervals", "details"):
        assert a[key] == b[key], key
    for run in (a, b):  # seconds differ between a run and its shards; further judges' too
        for block in [run.get("judge") or {}, *(run.get("judge") or {}).get("others", [])]:
            block.pop("model_seconds", None)
    assert a.get("judge") == b.get("judge")
    lines = [(d / "predictions.jsonl").read_text().splitlines() for d in (one, merged)]
    assert len(lines[0]) == len(lines[1]) and set(lines[0]) == set(lines[1])
    assert (one / "units.json").read_text() == (merged / "units.json").read_text()
    assert sorted(p.name for p in one.iterdir() if not p.name.startswith(".")) == \
        sorted(p.name for p in merged.iterdir() if not p.name.startswith("."))
    assert all((merged / name).is_file() for name in OUTPUTS)
    artifacts = [p.name for p in one.iterdir() if p.is_file() and p.name not in OUTPUTS and not p.name.startswith(".")]
    assert all((one / name).read_bytes() == (merged / name).read_bytes() for name in artifacts)


def _stored(shard_dir: Path) -> list[tuple[str, str]]:
    """(stage, element key) of every element a shard's folder holds."""
    return [(stage, key) for stage, elements in read_records(shard_dir).items() for key, _ in elements]


@pytest.mark.parametrize("task, extra", [
    ("toy-choice", ["--model", "random", "--limit", "20"]),  # scoring
    ("toy-describe", ["--model", "random"]),  # generation
    ("toy-judged", ["--model", "random", "--judge", "literal-judge"]),  # a judge stage built from the generations
    ("toy-judged", ["--model", "random", "--judge", "literal-judge", "--judge", "literal-judge,delay=0"]),  # two judges
    ("shard-custom", ["--model", "random", "--seed", "3"]),  # custom steps, the second built from the first; an artifact
])
def test_two_shards_merge_into_the_one_process_run(registry: Registry, data: Path, tmp_path: Path, task: str,
                                                   extra: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(_eval(task, data, tmp_path / "one", *extra)) == 0
    shards = [tmp_path / f"shard-{i}" for i in range(2)]
    for i, out in enumerate(shards):
        assert main(_eval(task, data, out, *extra, "--shard", f"{i}/2")) == 0
        assert sorted(p.name for p in out.iterdir()) == [RECORDS_FILE, SHARD_FILE]  # no results.json, no .partial
    capsys.readouterr()
    assert main(["merge", str(tmp_path / "merged"), *map(str, shards), "--quiet"]) == 0
    assert "(2 shards)" in capsys.readouterr().out
    _same_run(tmp_path / "one", tmp_path / "merged")

    # each element once, in the shard its id's sha256 names, both shards holding some
    stored = [_stored(out) for out in shards]
    assert all(stored) and not set(stored[0]) & set(stored[1])
    assert all(owner(key, 2) == i for i, elements in enumerate(stored) for _, key in elements)
    merged = json.loads((tmp_path / "merged" / "results.json").read_text())
    assert merged["shards"] == 2 and merged["processes"] == 2 and merged["resumed"] is False
    assert (tmp_path / "merged" / "order.json").is_file() == (task == "shard-custom")


def _killable_shard(data: str, out: str) -> None:
    registry = build_registry(extra_plugins=[("toy", ToyPlugin())])
    run_evaluation(EvalConfig("toy-choice", "slow-random:0.1", Path(data), Path(out), quiet=True, use_cache=False,
                              shard=Shard(0, 2)), registry)


def test_a_shard_killed_mid_run_resumes_and_merges_into_the_one_process_run(
        registry: Registry, data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "shard-0"
    kill_once_a_unit_is_stored(_killable_shard, (str(data), str(out)), out)
    done_before = sum(len(p.read_text().splitlines()) for p in (out / ".partial").glob("shard-*.jsonl"))
    mine = sum(owner(f"q{i:03d}", 2) == 0 for i in range(24))
    assert 0 < done_before < mine and not (out / SHARD_FILE).exists()
    # an unfinished shard is not merged
    assert main(["merge", str(tmp_path / "merged"), str(out), str(tmp_path / "shard-1")]) == 2
    assert not (tmp_path / "merged").exists()

    extra = ["--model", "slow-random:0.1"]
    assert main(_eval("toy-choice", data, out, *extra, "--shard", "0/2")) == 0  # the same command again: resumes
    manifest = json.loads((out / SHARD_FILE).read_text())
    assert manifest["resumed"] is True and manifest["resumed_units"] == {"kept": done_before, "of": mine}
    assert f"resumed: {done_before} of {mine} units kept" in capsys.readouterr().err
    assert main(_eval("toy-choice", data, tmp_path / "shard-1", "--model", "random", "--shard", "1/2")) == 0
    assert main(_eval("toy-choice", data, tmp_path / "one", "--model", "random")) == 0
    capsys.readouterr()
    assert main(["merge", str(tmp_path / "merged"), str(out), str(tmp_path / "shard-1"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == json.loads((tmp_path / "merged" / "results.json").read_text())
    _same_run(tmp_path / "one", tmp_path / "merged")  # slow-random is random (its fingerprint), slowly
    assert len(_stored(out)) == mine
    merged = json.loads((tmp_path / "merged" / "results.json").read_text())
    assert merged["resumed"] is True and merged["resumed_units"] == {"kept": done_before, "of": 24}


@pytest.fixture(scope="module")
def shards(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Shards 0/3, 1/3, 2/3 of one run, shard 0/3 of another seed, one of another task, shard
    1/2, a finished run, an unfinished shard, damaged copies of shard 2/3 and the data twice
    elsewhere (as it was, changed),
    beside their data (``data``); the tests that change a folder change a copy."""
    base = tmp_path_factory.mktemp("shards")
    data = write_toy_data(base / "data", items=24)
    reset_registry(build_registry(extra_plugins=[("toy", ToyPlugin())]))
    try:
        for i in range(3):
            assert main(_eval("toy-choice", data, base / f"{i}", "--model", "random", "--shard", f"{i}/3")) == 0
        assert main(_eval("toy-choice", data, base / "seed1", "--model", "random", "--seed", "1", "--shard", "0/3")) == 0
        assert main(_eval("toy-describe", data, base / "describe", "--model", "random", "--shard", "1/3")) == 0
        assert main(_eval("toy-choice", data, base / "of2", "--model", "random", "--shard", "1/2")) == 0
        assert main(_eval("toy-choice", data, base / "run", "--model", "random")) == 0
    finally:
        reset_registry()
    (base / "unfinished" / ".partial").mkdir(parents=True)
    for name, file, text in (("cut", RECORDS_FILE, ""), ("garbled", SHARD_FILE, "{"), ("other-format", SHARD_FILE, "{}")):
        shutil.copytree(base / "2", base / name)
        (base / name / file).write_text(text)
    for name, change in (("same-data", False), ("other-data", True)):
        shutil.copytree(data, base / name)
        if change:
            records = json.loads((data / "toy.json").read_text())
            records[0]["label"] = (records[0]["label"] + 1) % 4
            (base / name / "toy.json").write_text(json.dumps(records))
    return base


@pytest.mark.parametrize("given, message", [
    (["0", "1"], "shard 2/3 of 3 is missing (given: 0/3, 1/3)"),
    (["0"], "shards 1/3, 2/3 of 3 are missing"),
    (["0", "1", "2", "1"], "shard 1/3 is given twice"),
    (["0", "1", "seed1"], "is a shard of another run than"),
    (["0", "1", "describe"], "different task (toy-describe, not toy-choice)"),
    (["0", "1", "2", "of2"], "different number of shards (2, not 3)"),
    (["0", "1", "run"], "is a finished run, not a shard"),
    (["0", "1", "unfinished"], "holds an unfinished shard"),
    (["0", "1", "nowhere"], "shard folder not found"),
    (["0", "1", "cut"], "records.jsonl does not hold what shard.json lists; run that shard again"),
    (["0", "1", "garbled"], "shard.json cannot be read; run that shard again"),
    (["0", "1", "other-format"], "is not a shard manifest of this abduct"),
    (["0", "1", "2", "--data", "other-data"], "is not what the shards read (toy.json differ)"),
])
def test_foreign_duplicated_or_missing_shards_are_one_line_and_write_nothing(
    shards: Path, registry: Registry, tmp_path: Path, capsys: pytest.CaptureFixture[str], given: list[str],
    message: str,
) -> None:
    capsys.readouterr()
    args = [a if a.startswith("--") else str(shards / a) for a in given]
    assert main(["merge", str(tmp_path / "merged"), *args]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1 and "Traceback" not in err
    assert not (tmp_path / "merged").exists()


def test_folders_are_not_confused(shards: Path, registry: Registry, tmp_path: Path,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    """A shard's folder takes neither a whole run nor another shard; a merge goes elsewhere."""
    data = shards / "data"
    shards = shutil.copytree(shards, tmp_path / "s", ignore=shutil.ignore_patterns("data"))
    every = [str(shards / f"{i}") for i in range(3)]
    cases = [
        (_eval("toy-choice", data, shards / "0", "--model", "random"), "holds a shard of a run"),
        (_eval("toy-choice", data, shards / "0", "--model", "random", "--shard", "1/3"), "(different shard)"),
        (_eval("toy-choice", data, shards / "run", "--model", "random", "--shard", "1/3"), "holds a finished run"),
        (["merge", every[0], *every], "is shard 0/3's folder"),
        (["merge", str(shards / "seed1"), *every], "holds a shard of a run"),
    ]
    for args, message in cases:
        capsys.readouterr()
        assert main(args) == 2, args
        err = capsys.readouterr().err.strip()
        assert message in err and len(err.splitlines()) == 1, err
    # the same shard again into its folder runs again; --overwrite lets a whole run replace a shard
    assert main(_eval("toy-choice", data, shards / "0", "--model", "random", "--shard", "0/3")) == 0
    assert main(_eval("toy-choice", data, shards / "0", "--model", "random", "--overwrite")) == 0
    assert not (shards / "0" / SHARD_FILE).exists() and (shards / "0" / "results.json").exists()
    # the data read where this machine has it: the same files, so the same run
    again = [str(shards / "0-again")]
    assert main(_eval("toy-choice", data, shards / "0-again", "--model", "random", "--shard", "0/3")) == 0
    assert main(["merge", str(tmp_path / "m"), *again, *every[1:], "--data", str(shards / "same-data")]) == 0
    results = json.loads((tmp_path / "m" / "results.json").read_text())
    assert results["data"]["dir"] == str(shards / "same-data")
    assert results["metrics"] == json.loads((shards / "run" / "results.json").read_text())["metrics"]


@pytest.mark.parametrize("text, message", [
    ("3/2", "the shard index must be below the number of shards"),
    ("2/2", "(0 to 1)"),
    ("0/0", "at least 1"),
    ("x", "expected I/N"),
    ("1/", "expected I/N"),
    ("-1/2", "expected I/N"),
])
def test_bad_shard_text_is_a_usage_error(registry: Registry, data: Path, tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str], text: str, message: str) -> None:
    assert main(_eval("toy-choice", data, tmp_path / "o", "--model", "random", "--shard", text)) == 2
    err = capsys.readouterr().err
    assert "Invalid value for '--shard'" in err and message in err and "Traceback" not in err
    assert not (tmp_path / "o").exists()


def test_shard_parsing_and_ownership_are_stable() -> None:
    assert Shard.parse("1/4") == Shard(1, 4) and str(Shard.parse(" 0 / 1 ")) == "0/1"
    # sha256, not Python's salted hash: the same on every machine and in every process
    assert [owner(f"q{i:03d}", 4) for i in range(8)] == [owner(f"q{i:03d}", 4) for i in range(8)]
    assert owner("q000", 4) == int.from_bytes(__import__("hashlib").sha256(b"q000").digest()[:8], "big") % 4
    assert all(Shard(0, 1).owns(f"x{i}") for i in range(50))


def test_shards_are_refused_under_torchrun(registry: Registry, data: Path, tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """One process per shard: torchrun's processes would share one shard's folder and store."""
    monkeypatch.setenv("WORLD_SIZE", "2")
    assert main(_eval("toy-choice", data, tmp_path / "o", "--model", "random", "--shard", "0/2")) == 2
    err = capsys.readouterr().err.strip()
    assert "--shard 0/2 splits a run across machines and torchrun across the 2 processes" in err
    assert len(err.splitlines()) == 1 and not (tmp_path / "o").exists()
    assert os.environ["WORLD_SIZE"] == "2"


def test_a_merge_reads_each_shard_once_and_the_data_and_plan_once(
    shards: Path, registry: Registry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """What a merge costs grows with the run's units, not its shards: each shard's manifest and
    records are read once, the data files hashed and the plan built once, whatever N is
    (benchmarks/merge_scaling.py times 4 against 64 shards)."""
    import abduct._run.merge as merge

    calls: dict[str, int] = {}

    def counted(name: str) -> None:
        real = getattr(merge, name)

        def wrapper(*args: Any, **kwargs: Any) -> Any:
            calls[name] = calls.get(name, 0) + 1
            return real(*args, **kwargs)

        monkeypatch.setattr(merge, name, wrapper)

    for name in ("read_manifest", "read_records", "file_hashes", "collect_examples", "planned_stages", "load_task"):
        counted(name)
    assert main(["merge", str(tmp_path / "m"), *(str(shards / f"{i}") for i in range(3)), "--quiet"]) == 0
    assert calls == {"read_manifest": 3, "read_records": 3, "file_hashes": 1, "collect_examples": 1,
                     "planned_stages": 1, "load_task": 1}


def test_a_finished_shard_run_again_is_not_evaluated_again(registry: Registry, data: Path, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "shard-0"
    argv = _eval("toy-choice", data, out, "--model", "random", "--shard", "0/2")
    assert main(argv) == 0
    before = {name: ((out / name).read_bytes(), (out / name).stat().st_mtime_ns) for name in (SHARD_FILE, RECORDS_FILE)}
    capsys.readouterr()
    assert main([a for a in argv if a != "--quiet"]) == 0  # a resubmitted array task
    assert "shard 0/2 was already finished" in capsys.readouterr().out
    assert {name: ((out / name).read_bytes(), (out / name).stat().st_mtime_ns) for name in before} == before
    assert main([*argv, "--overwrite"]) == 0  # evaluated again, to the same records
    assert (out / RECORDS_FILE).stat().st_mtime_ns != before[RECORDS_FILE][1]
    assert (out / RECORDS_FILE).read_bytes() == before[RECORDS_FILE][0]


def test_merged_inputs_keep_what_shards_agree_on_and_list_what_differs() -> None:
    """results.json's ``model.inputs`` after ``abduct merge``: the facts every shard gives alike as
    they are, the served facts replicas reported differently as the list of them."""
    from abduct._run.merge import combined

    one = {"image": {"max_images": None}, "served": {"model_id": "m", "system_fingerprint": "fp_a", "concurrency": 4}}
    two = {"image": {"max_images": None}, "served": {"model_id": "m", "system_fingerprint": ["fp_a", "fp_b"],
                                                     "concurrency": 4}}
    assert combined([one, two]) == {"image": {"max_images": None},
                                    "served": {"model_id": "m", "system_fingerprint": ["fp_a", "fp_b"],
                                               "concurrency": 4}}
    assert combined([one, {"video": {"frames_per_clip": 8}}]) == {**one, "video": {"frames_per_clip": 8}}
