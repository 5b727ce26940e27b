"""The release tooling (tools/release.py, ``./dev release``): a wheel that lost a data file fails
``verify-data``; the local index serves what was built and nothing from a later index; a real
release is refused outside CI. The whole dry run (every wheel, the smoke install) is the
``wheels`` nox session."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TOOL = ROOT / "tools" / "release.py"
sys.path.insert(0, str(ROOT / "tools"))

import release  # noqa: E402


def test_a_wheel_without_one_of_its_data_files_fails_verify_data(tmp_path: Path) -> None:
    cosim = next(d for d in release.distributions() if d.name == "abduct-cosim")  # ships published.json
    copy = tmp_path / "cosim"
    shutil.copytree(cosim.folder, copy, ignore=shutil.ignore_patterns("tests", "__pycache__", ".*"))
    (copy / "src" / "abduct_cosim" / "published.json").unlink()
    dist = tmp_path / "dist"
    subprocess.run([release.find_uv(), "build", "-q", "--wheel", "--out-dir", str(dist), str(copy)],
                   env=release.uv_environment(), check=True)
    [wheel] = dist.glob("*.whl")
    done = subprocess.run([sys.executable, str(TOOL), "verify-data", "--dist", str(dist), "--package", "abduct-cosim"],
                          capture_output=True, text=True)
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        "error: abduct-cosim: abduct_cosim/published.json is in the source tree "
        f"(packages/datasets/cosim/src/abduct_cosim/published.json) but not in {wheel.name}"]


def fake_wheel(folder: Path, name: str, version: str, record: str = "") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    stem = f"{name.replace('-', '_')}-{version}"
    path = folder / f"{stem}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(f"{stem}.dist-info/METADATA",
                         f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\nRequires-Python: >=3.11\n")
        archive.writestr(f"{stem}.dist-info/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        archive.writestr(f"{stem}.dist-info/RECORD", record)
    return path


def test_the_local_index_wins_over_a_later_index_with_a_newer_release(tmp_path: Path) -> None:
    built = fake_wheel(tmp_path / "dist", "abduct-core", "0.2.0")
    simple = release.index(tmp_path / "dist")
    page = (simple / "abduct-core" / "index.html").read_text()
    assert f'href="../../{built.name}#sha256={hashlib.sha256(built.read_bytes()).hexdigest()}"' in page
    assert 'data-requires-python="&gt;=3.11"' in page
    assert 'href="abduct-core/"' in (simple / "index.html").read_text()
    # a public abduct-core 9.0.0 on every kind of index configured too, under pip_to_uv's best-match strategy
    fake_wheel(tmp_path / "public", "abduct-core", "9.0.0")
    public = release.index(tmp_path / "public").as_uri()
    base = {"UV_INDEX_URL": public, "UV_EXTRA_INDEX_URL": public, "UV_INDEX": public,
            "UV_INDEX_STRATEGY": "unsafe-best-match", "UV_NO_CONFIG": "1", "UV_CACHE_DIR": str(tmp_path / "cache")}
    env = {key: value for key, value in release.uv_environment().items() if not key.startswith("UV_")}
    resolved = subprocess.run([release.find_uv(), "pip", "compile", "-q", "--no-header", "-"], input="abduct-core\n",
                              capture_output=True, text=True, env={**env, **release.local_index_first(base, simple)})
    assert resolved.returncode == 0, resolved.stderr
    assert resolved.stdout.split() == ["abduct-core==0.2.0"]


def test_an_installed_abduct_wheel_must_be_the_built_one(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    fake_wheel(dist, "abduct-core", "0.2.0", record="abduct/__init__.py,sha256=built,10\n")
    site = tmp_path / "site-packages"
    for name, digest in (("abduct-core", "stale"), ("abduct-public", "x")):
        info = site / f"{name.replace('-', '_')}-0.2.0.dist-info"
        info.mkdir(parents=True)
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.2.0\n")
        (info / "RECORD").write_text(f"abduct/__init__.py,sha256={digest},10\n")
    assert release.built_exactly(dist, site) == [
        "abduct-core 0.2.0 differs from abduct_core-0.2.0-py3-none-any.whl in 1 files (e.g. abduct/__init__.py)",
        "abduct-public 0.2.0 is installed but was not built"]


def test_the_smoke_test_reads_the_readme() -> None:
    names = release.smallest_install()
    assert "abduct-core" in names and set(names) <= {d.name for d in release.distributions()}
    commands = release.evaluate_commands()
    assert commands and all(command.startswith("abduct ") for command in commands)


def test_a_real_release_is_refused_outside_ci() -> None:
    done = subprocess.run(["bash", str(ROOT / "dev"), "release"], capture_output=True, text=True)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1] == release.REFUSAL
    assert "release.yml" in release.REFUSAL
