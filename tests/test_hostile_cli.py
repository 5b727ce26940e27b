"""Hostile input through the whole CLI, in process: each case must exit 2 with one error line
naming the file, field or option, no traceback, nothing written where the output was asked
for, and a device node, FIFO or file given as output left as it was. The table is the
lasting form of a sweep of about 400 bad inputs (docs/reliability.md)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import stat
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from PIL import Image

from abduct_testing.fuzzing import OUTPUT_FILES, clean_failure_problem, run_cli

DEEP = "[" * 20000 + "]" * 20000
Setup = Callable[[Path, Path], None]  # (case directory, corpora) -> None


@pytest.fixture(scope="module")
def corpora(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("corpora")
    for argv in (["cosim", "synth", "--out", f"{base}/cosim", "--train", "2", "--val", "3"],
                 ["whoops", "synth", "--out", f"{base}/whoops", "--images", "5"],
                 ["nleye", "synth", "--out", f"{base}/nleye", "--samples", "3"],
                 ["var", "synth", "--out", f"{base}/var", "--examples", "4"],
                 ["eval", "cosim", "--model", "random", "--data", f"{base}/cosim", "--out", f"{base}/run",
                  "--quiet", "--no-cache", "--ci-resamples", "0"],
                 ["eval", "whoops-matching", "--model", "random", "--data", f"{base}/whoops", "--out",
                  f"{base}/whoops-run", "--quiet", "--no-cache", "--ci-resamples", "0"]):
        done = run_cli(argv)
        assert done.code == 0, done
    return base


# -- what the cases put in place ----------------------------------------------------------------
def fifo(path: Path) -> None:
    os.mkfifo(path)


def zero(path: Path) -> None:  # a character device that never ends (as /dev/zero)
    os.mknod(path, 0o644 | stat.S_IFCHR, os.makedev(1, 5))


def null(path: Path) -> None:  # a character device that swallows writes (as /dev/null)
    os.mknod(path, 0o644 | stat.S_IFCHR, os.makedev(1, 3))


def directory(path: Path) -> None:
    path.mkdir()


def copy(name: str) -> Setup:
    return lambda case, corpora: shutil.copytree(corpora / name, case / name) and None


def replace(target: str, make: Callable[[Path], None], dataset: str | None = None) -> Setup:
    """Copy ``dataset`` (if any), then put ``make``'s file where ``target`` was."""
    def setup(case: Path, corpora: Path) -> None:
        if dataset:
            copy(dataset)(case, corpora)
        path = case / target
        if path.is_file():
            path.unlink()
        make(path)
    return setup


def content(data: bytes | str) -> Callable[[Path], None]:
    return lambda path: path.write_bytes(data.encode() if isinstance(data, str) else data)


def both(*setups: Setup) -> Setup:
    def setup(case: Path, corpora: Path) -> None:
        for one in setups:
            one(case, corpora)
    return setup


def run_copy(mutate: Callable[[Path], None]) -> Setup:
    def setup(case: Path, corpora: Path) -> None:
        shutil.copytree(corpora / "run", case / "a")
        shutil.copytree(corpora / "run", case / "b")
        mutate(case / "b")
    return setup


def results_with(text: str) -> Callable[[Path], None]:
    def mutate(run: Path) -> None:
        file = run / "results.json"
        file.write_text(file.read_text().replace('"accuracy": ', f'"accuracy": {text}, "was": ', 1))
    return mutate


def first_video(case: Path, corpora: Path) -> None:
    shutil.copy(sorted((corpora / "var" / "videos").iterdir())[0], case / "v.mp4")


def eval_argv(task: str, data: str, *extra: str, model: str = "random") -> list[str]:
    return ["eval", task, "--model", model, "--data", data, "--out", "{case}/out", "--quiet", "--no-cache", *extra]


REFS = json.dumps({"a": ["a cat"], "b": ["a dog"]})
METRIC = ["metric", "exact-match", "--predictions", "{case}/p.json", "--references", "{case}/r.json"]
FRAMES = ["video", "frames", "{case}/v.mp4", "--span", "0,1", "--timeout", "20"]
DATASETS = {"cosim": ("cosim", "cosim/val.json"), "whoops-matching": ("whoops", "whoops/whoops_dataset.csv"),
            "nleye-pairs": ("nleye", "nleye/test_set.csv"), "var-premise": ("var", "var/var_val_v1.0.json")}

# (id, argv ({case}: the case's directory), setup, a needle the error line holds, the output path)
CASES: list[tuple[str, list[str], Setup | None, str, str | None]] = [
    ("seed negative", eval_argv("cosim", "{case}/cosim", "--seed", "-1"), copy("cosim"), "--seed", "out"),
    ("seed beyond 2**32", eval_argv("cosim", "{case}/cosim", "--seed", str(2**80)), copy("cosim"), "--seed", "out"),
    ("resamples 1e23", eval_argv("cosim", "{case}/cosim", "--ci-resamples", "9" * 23), copy("cosim"), "--ci-resamples",
     "out"),
    ("model option nan", eval_argv("cosim", "{case}/cosim", model="openai:x,base_url=http://127.0.0.1:1,timeout=nan"),
     copy("cosim"), "option 'timeout'", "out"),
    ("constant inf", eval_argv("cosim", "{case}/cosim", model="constant:1e400"), copy("cosim"), "finite", "out"),
    ("unknown task option", ["eval", "cosim,foo=1", "--model", "random", "--data", "{case}/cosim", "--out",
                             "{case}/out"], copy("cosim"), "option 'foo'", "out"),
    ("split traversal", eval_argv("cosim", "{case}/cosim", "--split", "../../etc/passwd"), copy("cosim"), "split",
     "out"),
    ("data is a FIFO", eval_argv("cosim", "{case}/p"), replace("p", fifo), "{case}/p", "out"),
    ("data is a device", eval_argv("cosim", "{case}/z"), replace("z", zero), "{case}/z", "out"),
    ("data is a file", eval_argv("cosim", "{case}/f"), replace("f", content("x")), "{case}/f", "out"),
    ("out is a device", eval_argv("cosim", "{case}/cosim"), both(copy("cosim"), replace("out", null)), "{case}/out",
     "out"),
    ("out is a FIFO", eval_argv("cosim", "{case}/cosim"), both(copy("cosim"), replace("out", fifo)), "{case}/out",
     "out"),
    ("out is a file", eval_argv("cosim", "{case}/cosim"), both(copy("cosim"), replace("out", content("keep"))),
     "{case}/out", "out"),
    ("out is a symlink loop", eval_argv("cosim", "{case}/cosim"),
     both(copy("cosim"), replace("out", lambda p: os.symlink(p, p))), "{case}/out", "out"),
    ("out under a file", ["eval", "cosim", "--model", "random", "--data", "{case}/cosim", "--out", "{case}/f/out"],
     both(copy("cosim"), replace("f", content("x"))), "{case}/f", None),
    ("report.md is a FIFO", eval_argv("cosim", "{case}/cosim"),
     both(copy("cosim"), replace("out", directory), replace("out/report.md", fifo)), "report.md", "out/report.md"),
    ("metric predictions empty", METRIC, both(replace("p.json", content("")), replace("r.json", content(REFS))),
     "p.json", None),
    ("metric predictions nested too deeply", METRIC,
     both(replace("p.json", content(DEEP)), replace("r.json", content(REFS))), "nested too deeply", None),
    ("metric predictions 1e400", METRIC,
     both(replace("p.json", content('{"a": 1e400, "b": "x"}')), replace("r.json", content(REFS))), "p.json", None),
    ("metric predictions binary", METRIC,
     both(replace("p.json", content(bytes(range(256)))), replace("r.json", content(REFS))), "p.json", None),
    ("metric predictions a FIFO", METRIC, both(replace("p.json", fifo), replace("r.json", content(REFS))), "p.json",
     None),
    ("metric predictions a device", METRIC, both(replace("p.json", zero), replace("r.json", content(REFS))), "p.json",
     None),
    ("metric predictions a directory", METRIC, both(replace("p.json", directory), replace("r.json", content(REFS))),
     "p.json", None),
    ("score predictions nested", ["score", "cosim", "--predictions", "{case}/p.json", "--answer-key", "{case}/p.json"],
     replace("p.json", content(DEEP)), "p.json", None),
    ("score predictions a FIFO", ["score", "cosim", "--predictions", "{case}/p.json", "--answer-key", "{case}/p.json"], replace("p.json", fifo),
     "p.json", None),
    ("compare results.json 1e400", ["compare", "{case}/a", "{case}/b"], run_copy(results_with("1e400")),
     "results.json", None),
    ("compare results.json NaN", ["compare", "{case}/a", "{case}/b"], run_copy(results_with("NaN")), "results.json",
     None),
    ("compare results.json a FIFO", ["compare", "{case}/a", "{case}/b"],
     run_copy(lambda r: ((r / "results.json").unlink(), fifo(r / "results.json")) and None), "results.json", None),
    ("compare --html a device", ["compare", "{case}/a", "{case}/a", "--html", "{case}/h"],
     both(run_copy(lambda r: None), replace("h", null)), "{case}/h", "h"),
    ("probe a FIFO", ["video", "probe", "{case}/v.mp4"], replace("v.mp4", fifo), "v.mp4", None),
    ("probe a device", ["video", "probe", "{case}/v.mp4"], replace("v.mp4", zero), "v.mp4", None),
    ("probe a PNG named .mp4", ["video", "probe", "{case}/v.mp4"],
     replace("v.mp4", lambda p: Image.new("RGB", (8, 8)).save(p, format="PNG")),
     "v.mp4", None),
    ("probe an empty file", ["video", "probe", "{case}/v.mp4"], replace("v.mp4", content("")), "v.mp4", None),
    ("frames span nan", ["video", "frames", "{case}/v.mp4", "--span", "nan,1", "--out", "{case}/o.png"], first_video,
     "START <= END", "o.png"),
    ("frames span reversed", ["video", "frames", "{case}/v.mp4", "--span", "5,1", "--out", "{case}/o.png"],
     first_video, "START <= END", "o.png"),
    ("frames span inf", ["video", "frames", "{case}/v.mp4", "--span", "inf,inf", "--out", "{case}/o.png"],
     first_video, "both finite", "o.png"),
    ("frames 10**8 a span", [*FRAMES, "--frames", str(10**8), "--out", "{case}/o.png"], first_video, "--frames",
     "o.png"),
    ("frames timeout nan", [*FRAMES[:-2], "--timeout", "nan", "--out", "{case}/o.png"], first_video, "--timeout",
     "o.png"),
    ("train t5 lr nan", ["train", "t5", "--data", "{case}", "--out", "{case}/o", "--lr", "nan"], None, "--lr", "o"),
    ("train t5 epochs inf", ["train", "t5", "--data", "{case}", "--out", "{case}/o", "--epochs", "inf"], None,
     "--epochs", "o"),
    ("train clip weight decay -inf", ["train", "clip", "--data", "{case}", "--out", "{case}/o", "--weight-decay",
                                      "-inf"], None, "--weight-decay", "o"),
    ("train uniter margin nan", ["train", "uniter", "--data", "{case}", "--out", "{case}/o", "--margin", "nan"], None,
     "--margin", "o"),
    ("train var lr 1e400", ["train", "var", "--data", "{case}", "--out", "{case}/o", "--lr", "1e400"], None, "--lr",
     "o"),
    ("frames out a device", [*FRAMES, "--out", "{case}/o"], both(first_video, replace("o", null)), "{case}/o", "o"),
    ("frames out a FIFO", [*FRAMES, "--out", "{case}/o"], both(first_video, replace("o", fifo)), "{case}/o", "o"),
    ("frames out a directory", [*FRAMES, "--out", "{case}/o"], both(first_video, replace("o", directory)), "{case}/o",
     "o"),
    ("folds out a device", ["whoops", "folds", "--data", "{case}/whoops", "--out", "{case}/o"],
     both(copy("whoops"), replace("o", null)), "{case}/o", "o"),
    ("folds out a FIFO", ["whoops", "folds", "--data", "{case}/whoops", "--out", "{case}/o"],
     both(copy("whoops"), replace("o", fifo)), "{case}/o", "o"),
    ("submit out a device", ["whoops", "submit", "--run", "{case}/whoops-run", "--out", "{case}/o", "--data",
                             "{case}/whoops"], both(copy("whoops"), copy("whoops-run"), replace("o", null)),
     "{case}/o", "o"),
    ("submit a run whose records lack their id", ["whoops", "submit", "--run", "{case}/whoops-run", "--out",
                                                  "{case}/o.csv", "--data", "{case}/whoops"],
     both(copy("whoops"), copy("whoops-run"), replace("whoops-run/predictions.jsonl", content('{"x": 1}\n'))),
     "predictions.jsonl, record line 1", "o.csv"),
    ("sherlock submission not a zip", ["sherlock", "validate-submission", "{case}/s.zip"],
     replace("s.zip", content(b"PK\x03\x04garbage")), "s.zip", None),
    ("sherlock submission a FIFO", ["sherlock", "validate-submission", "{case}/s.zip"], replace("s.zip", fifo),
     "s.zip", None),
    ("var submission a FIFO", ["var", "validate-submission", "--predictions", "{case}/p.json", "--data",
                               "{case}/var"], both(copy("var"), replace("p.json", fifo)), "p.json", None),
    ("synth out a device", ["cosim", "synth", "--out", "{case}/o"], replace("o", null), "{case}/o", "o"),
]
for kind, make in (("a FIFO", fifo), ("a device", zero), ("a directory", directory)):
    CASES.append((f"nleye: an image {kind}", eval_argv("nleye-pairs", "{case}/nleye", model="dumb-pixel"),
                  replace("nleye/images/s0000/hypothesis1.png", make, "nleye"), "hypothesis1.png", "out"))
for task, (dataset, file) in DATASETS.items():
    name = file.split("/")[-1]
    CASES += [
        (f"{dataset}: {name} empty", eval_argv(task, f"{{case}}/{dataset}"), replace(file, content(""), dataset), name,
         "out"),
        (f"{dataset}: {name} binary", eval_argv(task, f"{{case}}/{dataset}"),
         replace(file, content(bytes(range(256)) * 4), dataset), name, "out"),
        (f"{dataset}: {name} nested too deeply", eval_argv(task, f"{{case}}/{dataset}"),
         replace(file, content(DEEP), dataset), name, "out"),
        (f"{dataset}: {name} a number", eval_argv(task, f"{{case}}/{dataset}"), replace(file, content("1e400"), dataset),
         name, "out"),
        (f"{dataset}: {name} latin-1", eval_argv(task, f"{{case}}/{dataset}"),
         replace(file, content("caf\xe9,\xe9\n".encode("latin-1")), dataset), name, "out"),
        (f"{dataset}: {name} a FIFO", eval_argv(task, f"{{case}}/{dataset}"), replace(file, fifo, dataset), name, "out"),
        (f"{dataset}: {name} a device", eval_argv(task, f"{{case}}/{dataset}"), replace(file, zero, dataset), name,
         "out"),
        (f"{dataset}: {name} a directory", eval_argv(task, f"{{case}}/{dataset}"), replace(file, directory, dataset),
         name, "out"),
    ]


def _kind(path: Path) -> int | None:
    try:
        return stat.S_IFMT(os.lstat(path).st_mode)
    except FileNotFoundError:
        return None


@pytest.fixture
def alarm() -> Iterator[None]:
    """A case that blocks (a FIFO read with no writer) fails the test instead of hanging it."""
    def stuck(signum: int, frame: object) -> None:
        raise TimeoutError("the command blocked for 60 s")
    previous = signal.signal(signal.SIGALRM, stuck)
    signal.alarm(60)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


@pytest.mark.skipif(os.geteuid() != 0, reason="device nodes need root to create")
@pytest.mark.parametrize(("argv", "setup", "needle", "output"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_hostile_input_is_one_line_exit_2_and_nothing_written(corpora: Path, tmp_path: Path, alarm: None,
                                                              argv: list[str], setup: Setup | None, needle: str,
                                                              output: str | None) -> None:
    if setup is not None:
        setup(tmp_path, corpora)
    target = tmp_path / output if output else None
    before = _kind(target) if target else None
    outcome = run_cli([a.replace("{case}", str(tmp_path)) for a in argv])
    assert clean_failure_problem(outcome) is None and outcome.code == 2, outcome
    error = next(line for line in outcome.err.splitlines() if line.startswith(("error:", "Error:")))
    assert needle.replace("{case}", str(tmp_path)) in error, error
    if target is not None:
        assert _kind(target) == before, f"{target} was replaced"
        if before == stat.S_IFDIR or (before is None and target.is_dir()):
            assert not any((target / name).exists() for name in OUTPUT_FILES if name != output), list(target.iterdir())
