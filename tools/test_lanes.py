"""``./dev test``'s runner: the nox sessions in parallel lanes, longest first, with a summary.

    python tools/test_lanes.py [-j JOBS] [-s SESSION ...] [--thorough] [--session-limit S] [--since EPOCH] [-- PYTEST-ARGS]

Each session is still one ``nox -s NAME`` in its own environment; lanes only decide when it
starts. A session keeps about one core busy (CI-TIME: its CPU seconds ≈ its wall seconds), so
two lanes on two cores halve the wall time of the whole suite. Sessions start longest first
(the last run's seconds in ``.nox/session-seconds.json``, else ``EXPECTED`` below), so the
long ones never start last. Sessions tagged ``browser`` wait until Chromium is installed
(``--browser-ready FILE`` appears; ``./dev`` installs it in the background meanwhile).

Each session's output goes to ``.nox/logs/NAME.log``; a failed session's tail is printed when
it ends. A session that runs past its limit (``LIMIT_FACTOR`` times its expected seconds, at
least ``LIMIT_FLOOR``; ``--session-limit`` sets one for all) is stopped, its log's tail printed
and kept as ``NAME.timed-out.log``, and run once more; stopped twice, it fails. So a hang costs
minutes and says where it was, instead of running into CI's own limit (a test that runs past
``faulthandler_timeout``, set by the noxfile, has dumped every thread's stack into the log by
then). The summary gives every session's result and seconds, its slowest tests (pytest's
``--durations``), every rerun, and the total against the budget. Exit status: 0 when every
session passed, 1 otherwise, 130 on Ctrl-C (the sessions are stopped).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BUDGET_SECONDS = 25 * 60  # the README's CI budget for ./dev test on a fresh 2-core machine
TAIL_LINES = 120
# Seconds measured on the project's 2-core machine (docs/test-times.md), for the order of a first run.
EXPECTED = {
    "integration": 600, "abduct-var": 200, "abduct-whoops": 110, "abduct-clip": 100, "abduct-t5": 90,
    "abduct-metrics": 90, "wheels": 45, "abduct-vlm": 80, "abduct-core": 80, "abduct-nleye": 70, "abduct-lxmert": 60,
    "abduct-lmms": 60, "abduct-sherlock": 60, "abduct-uniter": 40, "abduct-video": 40, "abduct-regions": 30,
    "abduct-cosim": 30, "abduct-blackswan": 60, "abduct-visualriddles": 35, "abduct-nycc": 25, "slurm": 70, "lint": 20, "abduct-testing": 15, "abduct-plugin-example": 10, "abduct-tutorial": 10,
}
LIMIT_FACTOR, LIMIT_FLOOR = 3, 600  # a session's limit: 3x its expected seconds, at least 10 min
DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)s (?:call|setup|teardown)\s+(\S+)")


@dataclass
class Session:
    name: str
    browser: bool
    expected: float
    log: Path
    lane: int = 0
    limit: float = 0.0
    timed_out_log: Path | None = None  # set when a first run was stopped at its limit and this is the rerun
    process: subprocess.Popen[bytes] | None = None
    started: float = 0.0
    seconds: float = 0.0
    result: str = ""
    slowest: list[tuple[float, str]] = field(default_factory=list)


def clock(seconds: float) -> str:
    return f"{int(seconds) // 60:2d}:{int(seconds) % 60:02d}"


def listed_sessions(nox: str) -> list[tuple[str, bool]]:
    """(name, needs a browser) for every session of the noxfile, in its order."""
    listed = subprocess.run([nox, "--list", "--json"], cwd=ROOT, capture_output=True, text=True)
    if listed.returncode != 0:
        sys.exit(f"error: nox --list failed:\n{listed.stderr}")
    return [(s["name"], "browser" in (s.get("tags") or [])) for s in json.loads(listed.stdout)]


def last_seconds(path: Path) -> dict[str, float]:
    try:
        last = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return {k: float(v) for k, v in last.items() if isinstance(v, (int, float))} if isinstance(last, dict) else {}


def slowest_tests(log: Path, most: int = 3) -> list[tuple[float, str]]:
    """The slowest tests pytest printed (``--durations``; a test's setup, call and teardown
    summed), slowest first."""
    seconds: dict[str, float] = {}
    for line in log.read_text(errors="replace").splitlines():
        if (match := DURATION.match(line)) is not None:
            seconds[match.group(2)] = seconds.get(match.group(2), 0.0) + float(match.group(1))
    return sorted(((s, test) for test, s in seconds.items()), reverse=True)[:most]


def tail(path: Path, lines: int) -> str:
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])


class Lanes:
    def __init__(self, nox: str, sessions: list[Session], jobs: int, browser_ready: Path | None,
                 pytest_args: list[str], environ: dict[str, str], since: float, state: Path,
                 limit: float | None = None) -> None:
        self.nox, self.jobs, self.browser_ready, self.state = nox, jobs, browser_ready, state
        for session in sessions:
            session.limit = limit if limit is not None else max(LIMIT_FLOOR, LIMIT_FACTOR * session.expected)
        self.queue = sorted(sessions, key=lambda s: -s.expected)
        self.running: list[Session] = []
        self.done: list[Session] = []
        self.pytest_args, self.environ, self.since = pytest_args, environ, since

    def elapsed(self) -> float:
        return time.time() - self.since

    def say(self, text: str) -> None:
        print(f"[{clock(self.elapsed())}] {text}", flush=True)

    def browser_installed(self) -> bool:
        return self.browser_ready is None or self.browser_ready.exists()

    def free_lane(self) -> int:
        taken = {s.lane for s in self.running}
        return next(lane for lane in range(1, self.jobs + 1) if lane not in taken)

    def start(self, session: Session) -> None:
        session.lane = self.free_lane()
        env = {**self.environ, "ABDUCT_MYPY_CACHE": str(self.state / f".mypy_cache-lane{session.lane}")}
        command = [self.nox, "-s", session.name]
        if self.pytest_args and session.name != "lint":
            command += ["--", *self.pytest_args]
        with session.log.open("wb") as log:
            session.process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
                                               start_new_session=True)  # its own group: Ctrl-C stops it whole
        session.started = time.time()
        self.running.append(session)
        self.say(f"start  {session.name} (lane {session.lane})")

    def finish(self, session: Session, code: int, timed_out: bool = False) -> None:
        session.seconds = time.time() - session.started
        session.result = "passed" if code == 0 else "TIMED OUT" if timed_out else f"FAILED ({code})"
        if session.timed_out_log is not None:
            session.result += " on rerun"
        session.slowest = slowest_tests(session.log)
        self.running.remove(session)
        self.done.append(session)
        mark = "ok    " if code == 0 else "FAILED"
        over = f" (stopped: over its limit of {session.limit:.0f} s)" if timed_out else ""
        self.say(f"{mark} {session.name} in {session.seconds:.0f} s{over}")
        if code != 0:
            print(f"--- last {TAIL_LINES} lines of {session.log} ---\n{tail(session.log, TAIL_LINES)}\n"
                  f"--- end of {session.name} ---", flush=True)
        if timed_out and session.timed_out_log is None:
            # A stopped session runs once more, first in line: one hang must not sink a whole CI
            # run, and a session that hangs twice fails. The first log is kept, and the summary
            # names every rerun.
            session.timed_out_log = session.log.with_name(f"{session.name}.timed-out.log")
            session.log.replace(session.timed_out_log)
            self.done.remove(session)
            self.queue.insert(0, session)
            self.say(f"rerun  {session.name} (the stopped run's log: {session.timed_out_log})")

    def next_session(self) -> Session | None:
        for session in self.queue:
            if not session.browser or self.browser_installed():
                return session
        return None

    def run(self) -> None:
        waiting_said = False
        while self.queue or self.running:
            while len(self.running) < self.jobs and (session := self.next_session()) is not None:
                self.queue.remove(session)
                self.start(session)
            if self.queue and not self.running and not waiting_said:
                self.say("waiting for Chromium to be installed before the browser sessions")
                waiting_said = True
            for session in list(self.running):
                assert session.process is not None
                if (code := session.process.poll()) is not None:
                    self.finish(session, code)
                elif time.time() - session.started > session.limit:
                    self.kill([session])
                    self.finish(session, 1, timed_out=True)
            time.sleep(0.5)

    @staticmethod
    def kill(sessions: list[Session]) -> None:
        """Stop each session's whole process group (nox, pytest, whatever they started): TERM,
        then KILL after 20 s."""
        for session in sessions:
            if session.process is not None and session.process.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(session.process.pid, signal.SIGTERM)
        for session in sessions:
            if session.process is not None:
                try:
                    session.process.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(session.process.pid, signal.SIGKILL)
                    session.process.wait()

    def stop(self) -> None:
        self.kill(self.running)

    def summary(self) -> str:
        rows = sorted(self.done, key=lambda s: -s.seconds)
        width = max([len("session"), *(len(s.name) for s in rows)])
        lines = [f"{'session':<{width}}  {'result':<10} {'seconds':>7}  slowest tests"]
        for s in rows:
            slow = "; ".join(f"{sec:.0f} s {test}" for sec, test in s.slowest[:2])
            lines.append(f"{s.name:<{width}}  {s.result:<10} {s.seconds:>7.0f}  {slow}")
        lines += [f"rerun after a timeout: {s.name} (the stopped run's log: {s.timed_out_log})"
                  for s in rows if s.timed_out_log is not None]
        serial = sum(s.seconds for s in rows)
        total = self.elapsed()
        verdict = "within" if total <= BUDGET_SECONDS else "OVER"
        load = " ".join(f"{x:.1f}" for x in os.getloadavg())
        lines += [
            f"sessions: {serial:.0f} s one after another, {self.jobs} lanes on {os.cpu_count()} cores",
            f"./dev test: {total:.0f} s ({total / 60:.1f} min) in all, set-up included: {verdict} the budget of "
            f"{BUDGET_SECONDS // 60} min (load average now {load})",
        ]
        return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="./dev test", description="The nox sessions in parallel lanes, longest first.")
    parser.add_argument("-j", "--jobs", type=int, default=min(2, os.cpu_count() or 1), help="lanes (default: 2)")
    parser.add_argument("-s", "--sessions", nargs="+", default=[], metavar="SESSION", help="only these sessions")
    parser.add_argument("--thorough", action="store_true",
                        help="hypothesis's thorough profile: many more examples per property test")
    parser.add_argument("--session-limit", type=float, default=None, metavar="S",
                        help=f"stop a session after S seconds (default: {LIMIT_FACTOR}x its expected seconds, "
                             f"at least {LIMIT_FLOOR})")
    parser.add_argument("--browser-ready", type=Path, default=None, help="browser sessions wait for this file")
    parser.add_argument("--since", type=float, default=time.time(), help="when ./dev test started (epoch seconds)")
    parser.add_argument("--nox", default=str(Path(sys.executable).with_name("nox")), help=argparse.SUPPRESS)
    parser.add_argument("--state", type=Path, default=ROOT / ".nox", help=argparse.SUPPRESS)  # logs, mypy caches
    parser.add_argument("pytest_args", nargs="*", help="after --: given to every session's pytest")
    args = parser.parse_args(argv)
    nox, state = args.nox, args.state
    listed = listed_sessions(nox)
    unknown = sorted(set(args.sessions) - {name for name, _ in listed})
    if unknown:
        print(f"error: no session {', '.join(unknown)}; ./dev test -l lists them", file=sys.stderr)
        return 2
    (state / "logs").mkdir(parents=True, exist_ok=True)
    seconds_file = state / "session-seconds.json"
    expected = {**EXPECTED, **last_seconds(seconds_file)}
    sessions = [Session(name, browser, expected.get(name, 60.0), state / "logs" / f"{name}.log")
                for name, browser in listed if not args.sessions or name in args.sessions]
    environ = dict(os.environ)
    if args.thorough:
        environ["ABDUCT_HYPOTHESIS_PROFILE"] = "thorough"
    lanes = Lanes(nox, sessions, max(1, args.jobs), args.browser_ready, args.pytest_args, environ, args.since, state,
                  args.session_limit)
    try:
        lanes.run()
    except KeyboardInterrupt:
        lanes.stop()
        print("\ninterrupted: the sessions were stopped", file=sys.stderr)
        return 130
    print("\n" + lanes.summary(), flush=True)
    seconds_file.write_text(json.dumps({**last_seconds(seconds_file), **{s.name: round(s.seconds) for s in lanes.done}},
                                       indent=1))
    failed = [s.name for s in lanes.done if not s.result.startswith("passed")]
    if failed:
        print(f"failed: {', '.join(failed)} (logs in {state / 'logs'})", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
