"""The CLI end to end on the toy plugin: eval, score, errors, determinism, resume after SIGKILL."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from abduct._cli import main
from abduct._registry.registry import Registry
from abduct._run.evaluate import EvalConfig, run_evaluation
from abduct.kit import install_command


def _eval_args(data: Path, out: Path, *extra: str) -> list[str]:
    return ["eval", "toy-choice", "--model", "random", "--data", str(data), "--out", str(out), "--quiet", *extra]


def test_eval_writes_results(toy_registry: Registry, toy_data: Path, tmp_path: Path,
                             capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    assert main(_eval_args(toy_data, out, "--json", "--seed", "4")) == 0
    printed = json.loads(capsys.readouterr().out)
    results = json.loads((out / "results.json").read_text())
    assert printed == results
    assert results["task"] == "toy-choice" and results["seed"] == 4
    assert results["model"] == {"spec": "random", "label": "random", "fingerprint": "random-seed4", "abilities": ["score", "generate"],
                                "decoding": "max_new_tokens=32|num_beams=1|do_sample=False|temperature=1.0|top_p=1.0|seed=4"}
    assert results["inputs"] == {"ignored": ["context"]}
    assert list(results["data"]["files"]) == ["toy.json"] and len(results["data"]["files"]["toy.json"]) == 64
    assert "abduct-core" in results["versions"] and results["timings"]["total_seconds"] > 0
    lines = (out / "predictions.jsonl").read_text().splitlines()
    assert len(lines) == results["metrics"]["n"] == 12
    report = (out / "report.md").read_text()
    assert "| accuracy |" in report and "went without (the task allows it): context" in report


def test_without_a_page_renderer_a_run_writes_its_data_and_says_how_to_get_the_pages(
        toy_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """abduct-core alone: no report.md, report.html or samples.html, a line naming abduct-report."""
    from abduct._registry.registry import build_registry, reset_registry
    from abduct_testing.toy import ToyPlugin

    monkeypatch.setenv("ABDUCT_DISABLE_PLUGINS", "report")  # abduct-report's entry point, installed here
    reset_registry(build_registry(extra_plugins=[("toy", ToyPlugin())]))
    try:
        out = tmp_path / "run"
        assert main(_eval_args(toy_data, out)) == 0
    finally:
        reset_registry()
    assert sorted(p.name for p in out.iterdir() if not p.name.startswith(".")) == [
        "predictions.jsonl", "results.json", "units.json"]
    printed = capsys.readouterr().out
    assert f"wrote results.json, predictions.jsonl, units.json in {out}" in printed
    assert f"report.html and samples.html come with abduct-report: {install_command('abduct-report')}" in printed


def test_eval_is_deterministic_and_seeded(toy_registry: Registry, toy_data: Path, tmp_path: Path) -> None:
    def metrics(out: str, seed: str) -> dict[str, float]:
        assert main(_eval_args(toy_data, tmp_path / out, "--seed", seed)) == 0
        return json.loads((tmp_path / out / "predictions.jsonl").read_text().splitlines()[0])

    assert metrics("a", "1") == metrics("b", "1")
    assert metrics("a", "1") != metrics("c", "2")


def test_limit(toy_registry: Registry, toy_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(_eval_args(toy_data, tmp_path / "o", "--limit", "5")) == 0
    results = json.loads((tmp_path / "o" / "results.json").read_text())
    assert results["metrics"]["n"] == 5 and results["limit"] == 5 and results["limit_unit"] == "questions"
    assert "(limited to the first 5 questions)" in capsys.readouterr().out
    assert "limit: the first 5 questions" in (tmp_path / "o" / "report.md").read_text()
    assert main(_eval_args(toy_data, tmp_path / "all")) == 0
    results = json.loads((tmp_path / "all" / "results.json").read_text())
    assert results["limit"] is None and results["limit_unit"] is None


@pytest.mark.parametrize(
    "args, message",
    [
        (["eval", "toy-choise", "--model", "random", "--data", ".", "--out", "x"], "did you mean 'toy-choice'"),
        (["eval", "toy-choice", "--model", "randum", "--data", "{data}", "--out", "x"], "did you mean 'random'"),
        (["eval", "toy-choice", "--model", "random", "--data", "/no/such/dir", "--out", "x"], "data directory not found"),
        (["eval", "toy-choice", "--model", "random:abc", "--data", "{data}", "--out", "x"], "seed must be an integer"),
        (["score", "nope", "--predictions", "p", "--answer-key", "k"], "unknown task 'nope'"),
        (["score", "toy-choice", "--predictions", "{bad}", "--answer-key", "{bad}"], "not valid JSON"),
        (["score", "toy-choice", "--predictions", "/no/p.json", "--answer-key", "{bad}"], "not found: /no/p.json"),
        (["score", "toy-choice", "--predictions", "{bad}"], "scores against an answer key: pass --answer-key"),
        (["score", "toy-choice", "--predictions", "{bad}", "--answer-key", "{bad}", "--sepa"], "has no option 'sepa'"),
        (["score", "toy-choice", "--predictions", "{bad}", "--answer-key", "{bad}", "stray"], "unexpected argument"),
    ],
)
def test_user_errors_exit_2_with_one_line(
    toy_registry: Registry, toy_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    args: list[str], message: str,
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    args = [a.format(data=toy_data, bad=bad) for a in args]
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1 and "Traceback" not in err


def test_score_official_format(toy_registry: Registry, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "p.json").write_text(json.dumps({"a": 1, "b": 2, "c": 0, "d": 3}))
    (tmp_path / "k.json").write_text(json.dumps({"a": 1, "b": 0, "c": 0, "d": 3}))
    assert main(["score", "toy-choice", "--predictions", str(tmp_path / "p.json"),
                 "--answer-key", str(tmp_path / "k.json"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"accuracy": 75.0}
    (tmp_path / "p.json").write_text(json.dumps({"a": 1}))
    assert main(["score", "toy-choice", "--predictions", str(tmp_path / "p.json"),
                 "--answer-key", str(tmp_path / "k.json")]) == 2
    assert "record b" in capsys.readouterr().err


def test_task_flags_become_options() -> None:
    from abduct._cli import task_flags

    assert task_flags(["--separate", "--model", "DIR", "--layers=17", "--last"]) == [
        "separate=true", "model=DIR", "layers=17", "last=true"]
    assert task_flags([]) == []


def test_list_commands_json(toy_registry: Registry, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tasks", "--json"]) == 0
    tasks = json.loads(capsys.readouterr().out)
    assert {"name": "toy-choice", "plugin": "toy", "description": "Toy multiple choice", "kind": "task"} in tasks
    assert main(["models", "--json"]) == 0
    assert {"random", "constant", "slow-random"} <= {m["name"] for m in json.loads(capsys.readouterr().out)}
    assert main(["metrics", "--json"]) == 0
    assert all({"name", "plugin", "description"} <= set(m) for m in json.loads(capsys.readouterr().out))


def test_command_exit_codes_pass_through(capsys: pytest.CaptureFixture[str]) -> None:
    import click

    from abduct import hookimpl
    from abduct._registry.registry import build_registry, reset_registry

    class Exits:
        @hookimpl
        def register_commands(self, cli: click.Group) -> None:
            @cli.command("exits-3")
            @click.pass_context
            def exits(ctx: click.Context) -> None:
                ctx.exit(3)

    reset_registry(build_registry(extra_plugins=[("exits", Exits())]))
    try:
        assert main(["exits-3"]) == 3
    finally:
        reset_registry()


def _killable_run(data: str, out: str) -> None:
    from abduct._registry.registry import build_registry
    from toy_plugin import ToyPlugin

    registry = build_registry(extra_plugins=[("toy", ToyPlugin())])
    run_evaluation(EvalConfig("toy-choice", "slow-random:0.1", Path(data), Path(out), quiet=True), registry)


def test_resume_after_sigkill_equals_uninterrupted(toy_registry: Registry, tmp_path: Path) -> None:
    from toy_plugin import kill_once_a_unit_is_stored, write_toy_data

    data = write_toy_data(tmp_path / "data", items=24)
    out = tmp_path / "killed"
    kill_once_a_unit_is_stored(_killable_run, (str(data), str(out)), out)
    assert not (out / "results.json").exists()
    done_before = sum(len(p.read_text().splitlines()) for p in (out / ".partial").glob("shard-*.jsonl"))
    assert 0 < done_before < 24

    resumed = run_evaluation(EvalConfig("toy-choice", "slow-random:0.1", data, out, quiet=True), toy_registry)
    uninterrupted = run_evaluation(
        EvalConfig("toy-choice", "slow-random:0.1", data, tmp_path / "clean", quiet=True), toy_registry
    )
    assert resumed["resumed"] is True and uninterrupted["resumed"] is False
    assert resumed["metrics"] == uninterrupted["metrics"]
    assert (out / "predictions.jsonl").read_text() == (tmp_path / "clean" / "predictions.jsonl").read_text()
    assert not (out / ".partial").exists()


def test_resume_refuses_a_different_run(toy_registry: Registry, toy_data: Path, tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "o"
    (out / ".partial").mkdir(parents=True)
    (out / ".partial" / "run.json").write_text(json.dumps({"task": "toy-choice", "model": "constant"}))
    assert main(_eval_args(toy_data, out)) == 2
    assert "unfinished run with a different" in capsys.readouterr().err
