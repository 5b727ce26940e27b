"""The tools behind ./dev: the test lanes (tools/test_lanes.py), the fingerprint that lets
./dev demo skip an unchanged install (tools/sources_stamp.py) and pip's settings handed to uv
(tools/pip_to_uv.py). The lanes run against a stand-in nox that sleeps and exits as told."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

import pip_to_uv  # noqa: E402
import sources_stamp  # noqa: E402
import test_lanes  # noqa: E402

FAKE_NOX = '''
import json, os, sys, time
sessions = json.loads(os.environ["FAKE_SESSIONS"])
if "--list" in sys.argv:
    print(json.dumps([{"name": n, "session": n, "tags": ["browser"] if s.get("browser") else []}
                      for n, s in sessions.items()]))
    sys.exit(0)
name = sys.argv[sys.argv.index("-s") + 1]
rest = sys.argv[sys.argv.index("--") + 1:] if "--" in sys.argv else []
with open(os.environ["FAKE_EVENTS"], "a") as events:
    events.write(json.dumps([time.time(), "start", name, os.environ["ABDUCT_MYPY_CACHE"], rest]) + "\\n")
print(f"output of {name}")
print("============================= slowest 8 durations ==============================")
print(f"{sessions[name]['seconds']:.2f}s call     tests/test_{name}.py::test_slow")
time.sleep(sessions[name]["seconds"])
with open(os.environ["FAKE_EVENTS"], "a") as events:
    events.write(json.dumps([time.time(), "end", name, "", []]) + "\\n")
sys.exit(sessions[name].get("code", 0))
'''


def run_lanes(tmp_path: Path, sessions: dict[str, dict], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
              *args: str) -> tuple[int, str, list[list]]:
    nox = tmp_path / "nox"
    nox.write_text(f"#!{sys.executable}\n{FAKE_NOX}")
    nox.chmod(0o755)
    events = tmp_path / "events.jsonl"
    monkeypatch.setenv("FAKE_SESSIONS", json.dumps(sessions))
    monkeypatch.setenv("FAKE_EVENTS", str(events))
    code = test_lanes.main(["--nox", str(nox), "--state", str(tmp_path / "state"), *args])
    out = capsys.readouterr()
    lines = events.read_text().splitlines() if events.exists() else []
    return code, out.out + out.err, [json.loads(line) for line in lines]


def test_two_lanes_start_the_longest_sessions_together(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    sessions = {"short": {"seconds": 0.2}, "long": {"seconds": 1.5}, "middle": {"seconds": 0.8}, "lint": {"seconds": 0.1}}
    (tmp_path / "state").mkdir()
    (tmp_path / "state" / "session-seconds.json").write_text(json.dumps({"short": 1, "long": 90, "middle": 40, "lint": 2}))
    code, out, events = run_lanes(tmp_path, sessions, monkeypatch, capsys, "-j", "2", "--", "-k", "x")
    assert code == 0, out
    launched = re.findall(r"start  (\w+) \(lane", out)  # the scheduler's own order; the stand-ins may log theirs in either
    assert launched[:2] == ["long", "middle"]  # longest first, by the last run's seconds
    starts = sorted((e for e in events if e[1] == "start"), key=lambda e: launched.index(e[2]))
    first_end = min(e[0] for e in events if e[1] == "end")
    assert starts[1][0] < first_end  # both lanes busy at once
    assert {e[3] for e in starts[:2]} == {str(tmp_path / "state" / f".mypy_cache-lane{n}") for n in (1, 2)}
    assert all(e[4] == (["-k", "x"] if e[2] != "lint" else []) for e in starts)  # pytest's arguments, not lint's
    summary = out[out.index("session "):]
    assert "long" in summary and "s tests/test_long.py::test_slow" in summary
    assert "within the budget of 25 min" in summary
    recorded = json.loads((tmp_path / "state" / "session-seconds.json").read_text())
    assert set(recorded) == set(sessions) and recorded["long"] >= 1


def test_browser_sessions_wait_until_chromium_is_installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    ready = tmp_path / "browser-ready"
    sessions = {"pages": {"seconds": 0.1, "browser": True}, "plain": {"seconds": 0.1}}
    made = threading.Timer(1.5, ready.touch)
    made.start()
    began = time.time()
    code, out, events = run_lanes(tmp_path, sessions, monkeypatch, capsys, "--browser-ready", str(ready))
    made.join()
    assert code == 0, out
    pages = next(e for e in events if e[1] == "start" and e[2] == "pages")
    assert pages[0] >= began + 1.4  # not before the file appeared
    assert "waiting for Chromium" in out


def test_a_failed_session_prints_its_log_tail_and_the_run_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_lanes(tmp_path, {"good": {"seconds": 0.1}, "bad": {"seconds": 0.1, "code": 3}}, monkeypatch, capsys)
    assert code == 1
    assert "FAILED bad" in out and "output of bad" in out and "FAILED (3)" in out
    assert "failed: bad" in out and "output of good" not in out


def test_an_unknown_session_is_one_line_exit_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    code, out, events = run_lanes(tmp_path, {"a": {"seconds": 0.1}}, monkeypatch, capsys, "-s", "a", "nosuch")
    assert code == 2 and out.strip() == "error: no session nosuch; ./dev test -l lists them" and events == []


def test_the_demo_install_fingerprint_follows_installed_sources_only(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "packages" / "thing"
    (package / "src" / "thing").mkdir(parents=True)
    (package / "tests").mkdir()
    (package / "pyproject.toml").write_text("[project]\nname = 'thing'\n")
    module = package / "src" / "thing" / "__init__.py"
    module.write_text("X = 1\n")
    (package / "tests" / "test_thing.py").write_text("def test(): pass\n")
    (tmp_path / "constraints.txt").write_text("torch==1\n")
    monkeypatch.setattr(sources_stamp, "ROOT", tmp_path)
    args = ["-c", "constraints.txt", "torch", "./packages/thing[extra]"]
    before = sources_stamp.stamp(args)
    (package / "tests" / "test_thing.py").write_text("def test(): assert True\n")  # tests are not installed
    (package / "src" / "thing" / "__pycache__").mkdir()
    (package / "src" / "thing" / "__pycache__" / "x.pyc").write_bytes(b"\0")
    assert sources_stamp.stamp(args) == before
    module.write_text("X = 2\n")
    assert sources_stamp.stamp(args) != before
    module.write_text("X = 1\n")
    assert sources_stamp.stamp(args) == before
    (tmp_path / "constraints.txt").write_text("torch==2\n")
    assert sources_stamp.stamp(args) != before
    assert sources_stamp.stamp([*args[:-1], "./packages/thing"]) != before  # other arguments, another install


def test_uv_gets_pip_s_indexes_and_wheel_folders(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pip_to_uv, "pip_settings", lambda: {
        "extra-index-url": "file:///a/simple\nfile:///b/simple", "find-links": "/w1 /w2", "cert": "/ca.pem"})
    assert pip_to_uv.uv_variables({}) == {
        "UV_EXTRA_INDEX_URL": "file:///a/simple file:///b/simple", "UV_INDEX_STRATEGY": "unsafe-best-match",
        "UV_FIND_LINKS": "/w1,/w2", "SSL_CERT_FILE": "/ca.pem"}
    assert "UV_FIND_LINKS" not in pip_to_uv.uv_variables({"UV_FIND_LINKS": "/mine"})  # the user's setting stays
    printed = subprocess.run([sys.executable, str(ROOT / "tools" / "pip_to_uv.py")], capture_output=True, text=True)
    assert printed.returncode == 0 and all("=" in line for line in printed.stdout.splitlines())
