"""The tools behind ./dev: the test lanes (tools/test_lanes.py), the fingerprint that lets
./dev demo skip an unchanged install (tools/sources_stamp.py), pip's settings handed to uv
(tools/pip_to_uv.py) and the torch build ./dev demo installs (tools/torch_build.py). The lanes
run against a stand-in nox that sleeps and exits as told."""

from __future__ import annotations

import http.server
import json
import re
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

import pip_to_uv  # noqa: E402
import sources_stamp  # noqa: E402
import test_lanes  # noqa: E402
import torch_build  # noqa: E402

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
first = os.environ["FAKE_EVENTS"] + "." + name + ".ran"  # "first_seconds": the first run's, when it differs
seconds = sessions[name].get("first_seconds", sessions[name]["seconds"]) if not os.path.exists(first) else sessions[name]["seconds"]
open(first, "w").close()
time.sleep(seconds)
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


def test_a_session_past_its_limit_is_stopped_and_run_once_more(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    began = time.time()
    sessions = {"hangs": {"seconds": 60}, "hangs-once": {"first_seconds": 60, "seconds": 0.1}, "quick": {"seconds": 0.1}}
    code, out, events = run_lanes(tmp_path, sessions, monkeypatch, capsys, "--session-limit", "1.5")
    assert code == 1 and time.time() - began < 60  # stopped, not waited for
    assert len(re.findall(r"FAILED hangs in \d+ s \(stopped: over its limit of 2 s\)", out)) == 2, out  # twice: fails
    assert len(re.findall(r"FAILED hangs-once in \d+ s \(stopped", out)) == 1 and "ok     hangs-once" in out
    assert "--- end of hangs ---" in out  # each stop prints its log's tail
    assert [e[2] for e in events if e[1] == "start"].count("hangs") == 2
    assert sorted(e[2] for e in events if e[1] == "end") == ["hangs-once", "quick"]  # the stopped runs never finished
    summary = out[out.index("session "):]
    assert re.search(r"hangs +TIMED OUT on rerun", summary) and re.search(r"hangs-once +passed on rerun", summary)
    assert f"rerun after a timeout: hangs-once (the stopped run's log: {tmp_path / 'state' / 'logs' / 'hangs-once.timed-out.log'})" in summary
    assert (tmp_path / "state" / "logs" / "hangs-once.timed-out.log").exists()
    assert "failed: hangs (logs in" in out
    assert test_lanes.Lanes("nox", [test_lanes.Session("s", False, 400.0, tmp_path)], 1, None, [], {}, 0.0,
                            tmp_path).queue[0].limit == 3 * 400.0  # by default, 3x its expected seconds
    assert test_lanes.Lanes("nox", [test_lanes.Session("s", False, 5.0, tmp_path)], 1, None, [], {}, 0.0,
                            tmp_path).queue[0].limit == test_lanes.LIMIT_FLOOR  # and at least the floor


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


def test_torch_build_cpu_without_a_gpu_where_the_cpu_index_answers() -> None:
    probed: list[bool] = []

    def reachable(answer: bool) -> Callable[[], bool]:
        def probe() -> bool:
            probed.append(answer)
            return answer
        return probe

    assert torch_build.choose(True, reachable(True), {}) == torch_build.Choice()  # a GPU: the default build
    assert probed == []  # ... without asking the index
    cpu = torch_build.choose(False, reachable(True), {})
    assert cpu.variables == {"UV_TORCH_BACKEND": "cpu"}
    fallback = torch_build.choose(False, reachable(False), {})
    assert fallback.variables == {} and fallback.note is not None and "\n" not in fallback.note
    assert "cannot be reached" in fallback.note and torch_build.CPU_INDEX in fallback.note
    assert torch_build.choose(False, reachable(True), {"UV_TORCH_BACKEND": "cu126"}) == torch_build.Choice()


def test_torch_build_sees_a_gpu_by_its_device_node_or_nvidia_smi(tmp_path: Path) -> None:
    dev, bin_dir = tmp_path / "dev", tmp_path / "bin"
    dev.mkdir()
    bin_dir.mkdir()
    assert not torch_build.gpu_present(dev, str(bin_dir))
    (dev / "nvidia0").touch()
    assert torch_build.gpu_present(dev, str(bin_dir))
    (dev / "nvidia0").unlink()
    smi = bin_dir / "nvidia-smi"
    smi.write_text("#!/bin/sh\n")
    smi.chmod(0o755)
    assert torch_build.gpu_present(dev, str(bin_dir))


def test_torch_build_probe_is_short_and_says_no_for_a_silent_or_refusing_index(
        monkeypatch: pytest.MonkeyPatch) -> None:
    for variable in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(variable, raising=False)

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_HEAD(self) -> None:  # noqa: N802 (http.server's name)
            self.send_response(200 if self.path == "/ok/torch/" else 403)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    silent = socket.socket()  # accepts connections, never answers
    silent.bind(("127.0.0.1", 0))
    silent.listen()
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}"
        assert torch_build.index_reachable(f"{base}/ok")
        assert not torch_build.index_reachable(f"{base}/refused")  # a proxy's 403
        started = time.monotonic()
        assert not torch_build.index_reachable(f"http://127.0.0.1:{silent.getsockname()[1]}", timeout=0.3)
        assert time.monotonic() - started < 2
    finally:
        server.shutdown()
        silent.close()
    assert torch_build.PROBE_TIMEOUT_S <= 5  # ./dev demo waits at most this long for an unreachable index


def test_dev_asks_torch_build_before_installing_the_demo_environment() -> None:
    dev = (ROOT / "dev").read_text(encoding="utf-8")
    full = re.search(r"^full_venv\(\) \{(.*?)^\}", dev, flags=re.MULTILINE | re.DOTALL)
    assert full is not None
    body = full.group(1)
    assert "tools/torch_build.py" in body
    assert body.index("tools/torch_build.py") < body.index('"${FULL[@]}"\n')
    printed = subprocess.run([sys.executable, str(ROOT / "tools" / "torch_build.py")], capture_output=True,
                             text=True, timeout=30)
    assert printed.returncode == 0 and all(re.fullmatch(r"[A-Z_]+=\S+", line) for line in printed.stdout.splitlines())
    assert len(printed.stderr.splitlines()) <= 1
