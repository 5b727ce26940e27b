"""Every `synth` command takes its folder the same way: `--out DIR`, required, no positional
argument. The commands are found as a user finds them, through `abduct --help` and each
group's `--help`, so a plugin that adds a `synth` is held to the convention without being named."""

from __future__ import annotations

import builtins
import errno
import os
import re
from pathlib import Path
from typing import Any

import pytest

from abduct.host import main
from conftest import abduct


def _commands(*group: str) -> list[str]:
    """The subcommands `abduct GROUP --help` lists (its "Commands:" section)."""
    done = abduct(*group, "--help")
    assert done.returncode == 0, done.stderr
    listed = done.stdout.partition("\nCommands:\n")[2]
    return [m.group(1) for m in re.finditer(r"^  (\S+)", listed, re.MULTILINE)]


def _synth_groups() -> list[str]:
    return [group for group in _commands() if "synth" in _commands(group)]


SYNTH_GROUPS = _synth_groups()


def test_the_first_party_synths_are_found() -> None:
    assert {"sherlock", "cosim", "nleye", "var", "whoops", "blackswan"} <= set(SYNTH_GROUPS)


@pytest.mark.parametrize("group", SYNTH_GROUPS)
def test_synth_takes_its_folder_as_out(group: str, tmp_path: Path) -> None:
    helped = abduct(group, "synth", "--help")
    assert helped.returncode == 0, helped.stderr
    usage = helped.stdout.splitlines()[0]
    assert usage == f"Usage: abduct {group} synth [OPTIONS]", f"a positional argument: {usage}"
    assert re.search(r"^  --out PATH\s+Output directory\.", helped.stdout, re.MULTILINE), helped.stdout
    # a folder given any other way is refused, and no folder at all is one clear usage error
    missing = abduct(group, "synth")
    assert missing.returncode == 2
    assert "Missing option '--out'" in missing.stderr, missing.stderr
    positional = abduct(group, "synth", str(tmp_path / "data"))
    assert positional.returncode == 2 and "Missing option '--out'" in positional.stderr, positional.stderr
    assert not (tmp_path / "data").exists()
    # --out is the folder: a file there is named in one line, before anything is written
    blocker = tmp_path / "file"
    blocker.write_text("x")
    refused = abduct(group, "synth", "--out", str(blocker))
    assert refused.returncode == 2
    assert refused.stderr.strip() == f"error: --out {blocker} is a file, not a directory"


# each first-party synth at a small size: enough files that a write fails halfway
SMALL = {"sherlock": ["--images", "12"], "cosim": ["--train", "4", "--val", "6"], "nleye": ["--samples", "6"],
         "var": ["--examples", "4"], "whoops": ["--images", "6"], "blackswan": ["--videos", "3"]}


@pytest.mark.parametrize("group", sorted(SMALL))
def test_a_synth_on_a_full_disk_leaves_nothing_check_accepts(group: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    """The disk fills at the third file written (opened for writing, or renamed into place by an
    atomic write): one error line, nothing at or beside --out (the corpus is built beside it and
    renamed in whole), so `check` refuses it; with room again, synth and check pass."""
    out = tmp_path / "corpus"
    real_open, real_replace, written = builtins.open, os.replace, []

    def full_at_the_third(file: Any) -> None:
        written.append(file)
        if len(written) == 3:
            raise OSError(errno.ENOSPC, "No space left on device", str(file))

    def opening(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        if isinstance(file, (str, Path)) and str(file).startswith(str(tmp_path)) and set(mode) & set("wxa"):
            full_at_the_third(file)
        return real_open(file, mode, *args, **kwargs)

    def replacing(source: Any, target: Any, **kwargs: Any) -> None:
        full_at_the_third(target)
        real_replace(source, target, **kwargs)

    synth = [group, "synth", "--out", str(out), *SMALL[group]]
    monkeypatch.setattr(builtins, "open", opening)
    monkeypatch.setattr(os, "replace", replacing)
    assert main(synth) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: ") and "No space left on device" in err, err
    assert len(written) == 3, "the synth wrote fewer than three files"
    assert list(tmp_path.iterdir()) == []
    monkeypatch.undo()
    assert main([group, "check", "--data", str(out)]) != 0
    assert main(synth) == 0  # the disk has room again
    assert main([group, "check", "--data", str(out)]) == 0
