"""``abduct sherlock synth`` on a disk that fills halfway leaves nothing at --out that
``abduct sherlock check`` accepts (the corpus is built beside --out and renamed in whole)."""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import Any

import pytest

from abduct._cli import main


@pytest.mark.parametrize("nth", [1, 4, 9])
def test_a_synth_on_a_full_disk_leaves_nothing_check_accepts(tmp_path: Path, nth: int, monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "corpus"
    real, replaced = os.replace, []

    def filling(source: Any, target: Any, **kwargs: Any) -> None:
        replaced.append(target)
        if len(replaced) == nth:
            raise OSError(errno.ENOSPC, "No space left on device", str(target))
        real(source, target, **kwargs)

    monkeypatch.setattr(os, "replace", filling)
    assert main(["sherlock", "synth", "--out", str(out), "--images", "12"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: ") and "No space left on device" in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # no corpus, nothing staged beside it
    monkeypatch.undo()
    assert main(["sherlock", "check", "--data", str(out)]) != 0
    assert main(["sherlock", "synth", "--out", str(out), "--images", "12"]) == 0  # the disk has room again
    assert main(["sherlock", "check", "--data", str(out)]) == 0
