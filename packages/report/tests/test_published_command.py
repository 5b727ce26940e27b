"""``abduct published``, which this package adds beside ``abduct compare``: what it says with no rows
and for an unknown task, and the install hint without this package. (Every first-party row, in
its columns, is checked with all packages installed: tests/test_published_rows.py.)"""

from __future__ import annotations

import json

import pytest

from abduct.host import Registry, build_registry, main, reset_registry
from abduct.kit import install_command


def test_no_rows_and_an_unknown_task(toy_registry: Registry, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["published", "toy-choice"]) == 0
    assert capsys.readouterr().out == "no published rows for task 'toy-choice'\n"
    assert main(["published", "toy-choice", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == []
    assert main(["published", "no-such-task"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("error: unknown task 'no-such-task'; installed: ") and "toy-choice" in err[0]


def test_without_this_package_the_command_names_it(monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("ABDUCT_DISABLE_PLUGINS", "report")  # as with only abduct-core
    reset_registry(build_registry())
    try:
        assert main(["published", "--json"]) == 2
        assert capsys.readouterr().err.splitlines() == [
            f"error: command 'published' comes with abduct-report, which is not installed: "
            f"{install_command('abduct-report')}"]
    finally:
        reset_registry()
