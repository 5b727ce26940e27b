"""The install hints name the command that works where abduct was installed from: a checkout's
folder when abduct-core came from one (the distributions are not on an index), the name when it
came from an index. abduct-core's ``direct_url.json`` is faked here; tests/test_install_hints.py
checks the real one against this checkout."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from abduct._registry.providers import not_installed
from abduct.kit import install
from abduct.kit import install_command as the_command

DISTRIBUTIONS = {"packages/core": "abduct-core", "packages/datasets/sherlock": "abduct-sherlock",
                 "packages/datasets/whoops": "abduct_whoops", "packages/video/frames": "abduct-video",
                 "packages/report": "abduct-report", "examples/abduct-tutorial": "abduct-tutorial"}


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    root = tmp_path / "src" / "abduct"
    for folder, name in DISTRIBUTIONS.items():
        (root / folder).mkdir(parents=True)
        (root / folder / "pyproject.toml").write_text(f'[project]\nname = "{name}"\nversion = "0.2.0"\n')
    (root / "packages" / "broken").mkdir()
    (root / "packages" / "broken" / "pyproject.toml").write_text("[project\n")  # skipped, not fatal
    return root


def _installed_from(monkeypatch: pytest.MonkeyPatch, direct_url: object) -> None:
    text = direct_url if direct_url is None or isinstance(direct_url, str) else json.dumps(direct_url)
    monkeypatch.setattr(install, "_core_direct_url", lambda: text)


@pytest.mark.parametrize("editable", [True, False])
def test_from_a_checkout_the_hint_installs_its_folder(checkout: Path, editable: bool,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    _installed_from(monkeypatch, {"url": (checkout / "packages" / "core").as_uri(), "dir_info": {"editable": editable}})
    monkeypatch.chdir(checkout)
    assert install.installed_from_checkout() == checkout
    assert the_command("abduct-sherlock") == "pip install ./packages/datasets/sherlock"
    assert the_command("abduct-video", "abduct_tutorial") == "pip install ./packages/video/frames ./examples/abduct-tutorial"
    # extras stay on the folder (quoted for the shell); names that are not the checkout's stay names
    assert the_command("abduct-whoops[hf]", "matplotlib", "abduct-nleye") == \
        "pip install './packages/datasets/whoops[hf]' matplotlib abduct-nleye"
    assert not_installed("dataset", "sherlock", "training") is not None
    assert str(not_installed("dataset", "sherlock", "training")).endswith(": pip install ./packages/datasets/sherlock")


def test_the_path_is_relative_to_the_working_directory_when_that_is_shorter(
        checkout: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _installed_from(monkeypatch, {"url": (checkout / "packages" / "core").as_uri(), "dir_info": {}})
    monkeypatch.chdir(checkout / "packages" / "datasets")
    assert the_command("abduct-report") == "pip install ../report"
    monkeypatch.chdir(checkout / "packages" / "datasets" / "sherlock")
    assert the_command("abduct-sherlock") == "pip install ."
    far = tmp_path.joinpath(*["d"] * (len(str(tmp_path)) // 2))  # more ../ than the absolute path has letters
    far.mkdir(parents=True)
    monkeypatch.chdir(far)
    assert the_command("abduct-report") == f"pip install {checkout / 'packages' / 'report'}"


@pytest.mark.parametrize("direct_url", [
    None,  # an index install has no direct_url.json
    "not json",
    {"url": "https://example.org/abduct_core-0.2.0-py3-none-any.whl", "archive_info": {}},
    {"url": "file:///wheels/abduct_core-0.2.0-py3-none-any.whl", "archive_info": {}},
    {"url": "https://github.com/abduct/abduct.git", "vcs_info": {"vcs": "git", "commit_id": "0" * 40}},
    {"url": "file:///no/such/checkout/packages/core", "dir_info": {}},  # the checkout is gone
])
def test_from_an_index_the_hint_names_the_distribution(direct_url: object, monkeypatch: pytest.MonkeyPatch) -> None:
    _installed_from(monkeypatch, direct_url)
    assert install.installed_from_checkout() is None
    assert the_command("abduct-sherlock") == "pip install abduct-sherlock"
    assert the_command("abduct-whoops[hf]", "abduct-clip") == "pip install 'abduct-whoops[hf]' abduct-clip"
    assert str(not_installed("dataset", "sherlock", "training")) == \
        "training needs the dataset 'sherlock', which comes with abduct-sherlock: pip install abduct-sherlock"


def test_a_folder_that_is_not_a_checkouts_core_is_not_a_checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "abduct-core").mkdir()  # abduct-core installed from some folder that is not <checkout>/packages/core
    _installed_from(monkeypatch, {"url": (tmp_path / "abduct-core").as_uri(), "dir_info": {}})
    assert install.installed_from_checkout() is None
    assert the_command("abduct-sherlock") == "pip install abduct-sherlock"
