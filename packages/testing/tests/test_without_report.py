"""The kit needs abduct-core only: TaskContract checks a run's pages where abduct-report is
installed and says so, in one skip, where it is not; a run without pages is not half written."""

from __future__ import annotations

from pathlib import Path

import pytest

import abduct_testing
from abduct.host import Registry, build_registry
from abduct_testing import TaskContract
from abduct_testing.fuzzing import DATA_FILES, PAGE_FILES, half_written_problem, renders_pages
from abduct_testing.toy import ToyPlugin, write_toy_data


class ToyTask(TaskContract):
    task_name = "toy-choice"

    def make_data(self, folder: Path) -> Path:
        return write_toy_data(folder)

    def make_registry(self) -> Registry:
        return build_registry(extra_plugins=[("toy", ToyPlugin())])


def test_the_pages_are_checked_where_abduct_report_is_installed(tmp_path: Path) -> None:
    assert renders_pages()  # this package's test extra installs it
    ToyTask().test_eval_writes_outputs_and_is_deterministic(tmp_path)
    assert all((tmp_path / "a" / name).is_file() for name in PAGE_FILES)


def test_without_abduct_report_the_page_check_skips_saying_why(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(abduct_testing, "renders_pages", lambda: False)
    with pytest.raises(pytest.skip.Exception, match=r"its pages \(report.md, report.html, samples.html\) are not "
                                                    r"checked: abduct-report, which renders them, is not installed"):
        ToyTask().test_eval_writes_outputs_and_is_deterministic(tmp_path)


def test_a_run_without_pages_is_whole_and_half_pages_are_not(tmp_path: Path) -> None:
    for name in DATA_FILES:
        (tmp_path / name).write_text("{}")
    assert half_written_problem(tmp_path) is None
    (tmp_path / PAGE_FILES[0]).write_text("")
    assert half_written_problem(tmp_path) == f"{tmp_path} holds only {[*DATA_FILES, PAGE_FILES[0]]}"
    for name in PAGE_FILES:
        (tmp_path / name).write_text("")
    assert half_written_problem(tmp_path) is None
    (tmp_path / DATA_FILES[1]).unlink()
    assert half_written_problem(tmp_path) is not None
