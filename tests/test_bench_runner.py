"""benchmarks/run_all.py on its cheapest script: three runs of ``cli_startup`` end up in one
JSON file with the median of each figure between its min and max, the machine and the date;
a script that fails is recorded with its error and makes the exit code non-zero. Only the
shape is checked: timings are never asserted."""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from pathlib import Path

from conftest import ROOT

RUNNER = ROOT / "benchmarks" / "run_all.py"


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(RUNNER), *args], capture_output=True, text=True, timeout=120)


def test_three_runs_of_cli_startup_give_medians_within_their_range(tmp_path: Path) -> None:
    out = tmp_path / "results.json"
    done = _run("--quick", "--only", "cli_startup", "--repeats", "3", "--out", str(out))
    assert done.returncode == 0, done.stderr
    results = json.loads(out.read_text())
    assert results["repeats"] == 3 and results["quick"] is True and results["failed"] == []
    assert results["machine"]["cpu_count"] >= 1 and results["machine"]["python"] == sys.version.split()[0]
    assert len(results["date"]) == 10
    entry = results["scripts"]["cli_startup"]
    assert list(results["scripts"]) == ["cli_startup"]
    assert entry["ok"] and entry["runs"] == 3 and len(entry["seconds"]) == 3 and len(entry["load_1min"]) == 3
    assert {"python_seconds", "abduct_help_seconds", "ratio"} <= set(entry["figures"])
    for figure in entry["figures"].values():
        assert len(figure["runs"]) == 3
        assert figure["min"] <= figure["median"] <= figure["max"]
        assert figure["median"] == statistics.median(figure["runs"])
    assert isinstance(entry["facts"]["plugins"], list)  # a non-numeric leaf is kept, not averaged
    assert "cli_startup" in done.stdout and "ratio" in done.stdout  # the table


def test_a_failing_script_is_reported_and_the_exit_code_is_non_zero(tmp_path: Path) -> None:
    out = tmp_path / "results.json"
    # a timeout no run can meet: the script fails, the runner still writes the file
    done = _run("--quick", "--only", "cli_startup", "--repeats", "3", "--timeout", "0.001", "--out", str(out))
    assert done.returncode == 1
    results = json.loads(out.read_text())
    entry = results["scripts"]["cli_startup"]
    assert results["failed"] == ["cli_startup"] and not entry["ok"] and entry["runs"] == 0
    assert "timed out" in entry["error"] and entry["figures"] == {}
    assert "FAILED" in done.stdout
