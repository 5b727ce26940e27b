"""Every `synth` command takes its folder the same way: `--out DIR`, required, no positional
argument. The commands are found as a user finds them, through `abduct --help` and each
group's `--help`, so a plugin that adds a `synth` is held to the convention without being named."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

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
