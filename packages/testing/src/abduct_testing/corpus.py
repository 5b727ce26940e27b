"""``TaskContract`` on a shared corpus; apart from ``abduct_testing`` because it needs pytest
at import, which the package's ``__init__`` imports only on use."""

from __future__ import annotations

from pathlib import Path

import pytest

from abduct_testing import TaskContract


class CorpusContract(TaskContract):
    """``TaskContract`` run on the test package's ``corpus`` fixture (a data directory made
    once per session), for tasks whose data is costly to synthesise per test."""

    @pytest.fixture(autouse=True)
    def _shared(self, corpus: Path) -> None:
        self.corpus = corpus

    def make_data(self, tmp_path: Path) -> Path:
        return self.corpus
