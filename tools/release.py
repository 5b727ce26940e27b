"""Build every distribution once, check the artifacts, and test what was built.

    python tools/release.py --dry-run            # build, check, verify-data, index, smoke; lists the upload
    python tools/release.py STEP [STEP ...]      # some of them, in the order given
    python tools/release.py verify-data [--dist DIR] [--package NAME ...]

Steps (``./dev release --dry-run`` runs them all, and so does the ``wheels`` session of ``./dev test``):

- ``build``: ``tools/bump_version.py --check`` (one version everywhere), then every distribution
  under ``packages/`` and ``examples/`` into ``dist/`` with ``uv build``: its sdist, then its
  wheel built *from that sdist* (a file the sdist lacks is then missing from the wheel too).
- ``check``: one sdist and one wheel per distribution, all at the version of ``VERSION``;
  ``twine check --strict`` on all of them (the metadata and README PyPI would render) and
  ``check-wheel-contents`` on the wheels (no ignores: none is needed).
- ``verify-data``: every file under each distribution's import packages in the source tree
  (``src/abduct_x/``: modules, ``published.json``, ``.js``/``.css`` page assets, model configs,
  ``py.typed``...) is in its wheel, and every import package carries ``py.typed``; one line per
  missing file. The source tree is this checkout, wherever the wheels were built from.
- ``index``: ``dist/simple/``, a PEP 503 index of the wheels (no sdists: an install from it can
  never fall back to building from source), for ``--index-url file://.../dist/simple``.
- ``smoke``: a fresh venv that installs the README's smallest install by name from that index,
  then runs the README's "Evaluate a model" commands in it and checks their outputs.

A real release is not made from a checkout: ``.github/workflows/release.yml`` builds, checks and
publishes on a version tag, through PyPI's trusted publishing (docs/releasing.md).
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import html
import io
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
import tomllib
import zipfile
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from email.parser import HeaderParser
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DIST = ROOT / "dist"
SMOKE = ROOT / "build" / "release-smoke"  # the smoke test's venv and scratch folder (build/ is ignored)
README = ROOT / "README.md"
CONSTRAINTS = ROOT / "constraints.txt"  # the torch build the machines carry
sys.path.insert(0, str(ROOT / "tools"))
from pip_to_uv import uv_variables  # noqa: E402  (tools/ is not a package)

# The checkers, from PyPI. twine 6.1 is the first to accept Metadata-Version 2.4, which hatchling
# writes for a License-Expression.
CHECKERS = {"twine": "twine>=6.1", "check-wheel-contents": "check-wheel-contents>=0.6"}
STEPS = ["build", "check", "verify-data", "index", "smoke"]
REFUSAL = ("error: releases are published by .github/workflows/release.yml on a version tag (PyPI trusted "
           "publishing), not from a checkout; ./dev release --dry-run builds, checks and tests them here "
           "(docs/releasing.md)")
# installers add these to a wheel's dist-info; everything else installed must be the wheel's, byte for byte
INSTALLER_FILES = {"RECORD", "INSTALLER", "REQUESTED", "direct_url.json", "uv_cache.json"}


class ReleaseError(Exception):
    """A step failed; the message says what and where, one line per problem."""


@dataclass(frozen=True)
class Distribution:
    name: str  # as its pyproject.toml spells it
    folder: Path  # the folder holding pyproject.toml
    packages: tuple[str, ...]  # its import packages' folders, relative to ``folder`` (``src/abduct``)

    @property
    def normalized(self) -> str:
        return normalize(self.name)


def normalize(name: str) -> str:
    """PEP 503's normalised project name (the index folder's name)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def distributions(root: Path = ROOT) -> list[Distribution]:
    """Every distribution of the checkout, as noxfile.py finds them."""
    found = []
    for pyproject in sorted([*root.glob("packages/**/pyproject.toml"), *root.glob("examples/*/pyproject.toml")]):
        if any(part.startswith(".") for part in pyproject.relative_to(root).parts):
            continue
        config = tomllib.loads(pyproject.read_text(encoding="utf-8"))
        wheel = config.get("tool", {}).get("hatch", {}).get("build", {}).get("targets", {}).get("wheel", {})
        packages = wheel.get("packages") or [p.relative_to(pyproject.parent).as_posix()
                                             for p in sorted(pyproject.parent.glob("src/*/__init__.py"))]
        found.append(Distribution(config["project"]["name"], pyproject.parent,
                                  tuple(p.removesuffix("/__init__.py") for p in packages)))
    return found


def say(text: str) -> None:
    print(text, flush=True)


def find_uv() -> str:
    """The uv of ./dev's tools environment (or any on PATH)."""
    for candidate in (shutil.which("uv"), ROOT / ".venv-tools" / "bin" / "uv"):
        if candidate and Path(candidate).exists():
            return str(candidate)
    raise ReleaseError("error: no uv: run ./dev release, which installs it into .venv-tools")


def uv_environment() -> dict[str, str]:
    """This environment, plus pip's index configuration for uv (tools/pip_to_uv.py)."""
    return {**os.environ, **uv_variables(dict(os.environ))}


def run(command: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, capture_output=True, text=True, **kwargs)


def checker(name: str) -> list[str]:
    """The command of a PyPI checker: installed beside this interpreter (the nox session installs
    them), else run by ``uv tool run`` from uv's cache."""
    beside = Path(sys.executable).parent / name
    if beside.exists():
        return [str(beside)]
    return [find_uv(), "tool", "run", "--from", CHECKERS[name], name]


# --- build -----------------------------------------------------------------------------------


def build(dist: Path = DIST) -> list[Path]:
    bump = ROOT / "tools" / "bump_version.py"
    if bump.exists():
        checked = run([sys.executable, str(bump), "--check"], cwd=ROOT)
        if checked.returncode != 0:
            raise ReleaseError((checked.stdout + checked.stderr).strip() or "error: tools/bump_version.py --check failed")
    shutil.rmtree(dist, ignore_errors=True)
    dist.mkdir(parents=True)
    uv, env = find_uv(), uv_environment()
    todo = distributions()

    def one(d: Distribution) -> tuple[Distribution, subprocess.CompletedProcess[str]]:
        # --no-sources: build as any PEP 517 frontend would, ignoring uv-only [tool.uv.sources]
        return d, run([uv, "build", "-q", "--no-sources", "--out-dir", str(dist), str(d.folder)],
                      env=env)

    with ThreadPoolExecutor(max_workers=2 * (os.cpu_count() or 1)) as pool:
        failed = [f"error: {d.name} did not build ({d.folder.relative_to(ROOT)}):\n{done.stderr.strip()}"
                  for d, done in pool.map(one, todo) if done.returncode != 0]
    if failed:
        raise ReleaseError("\n".join(failed))
    artifacts = sorted(dist.glob("*.whl")) + sorted(dist.glob("*.tar.gz"))
    say(f"build: {len(todo)} distributions, {len(artifacts)} files in {shown(dist)}")
    return artifacts


def shown(path: Path) -> str:
    """A path as the user would type it from the checkout."""
    try:
        return str(path.relative_to(ROOT))
    except ValueError:
        return str(path)


# --- check -----------------------------------------------------------------------------------


def artifact_name(path: Path) -> tuple[str, str]:
    """(normalised name, version) from a wheel's or an sdist's file name."""
    stem = path.name.removesuffix(".whl").removesuffix(".tar.gz")
    name, version = stem.split("-")[:2]
    return normalize(name), version


def artifacts_per_distribution(dist: Path) -> list[str]:
    """Problems: a distribution without exactly one wheel and one sdist, a file of no
    distribution, a version that is not VERSION's."""
    problems = []
    names = {d.normalized for d in distributions()}
    version_file = ROOT / "VERSION"
    wanted = version_file.read_text(encoding="utf-8").strip() if version_file.exists() else None
    for kind in ("*.whl", "*.tar.gz"):
        seen: dict[str, list[str]] = {}
        for path in sorted(dist.glob(kind)):
            name, version = artifact_name(path)
            seen.setdefault(name, []).append(path.name)
            if name not in names:
                problems.append(f"{path.name}: no distribution of this checkout is called {name}")
            if wanted is not None and version != wanted:
                problems.append(f"{path.name}: version {version}, VERSION says {wanted}")
        for name in sorted(names):
            if len(seen.get(name, [])) != 1:
                problems.append(f"{name}: {len(seen.get(name, []))} {'wheels' if kind == '*.whl' else 'sdists'} "
                                f"in {shown(dist)} ({', '.join(seen.get(name, [])) or 'none'}), not one")
    return problems


def check(dist: Path = DIST) -> None:
    problems = artifacts_per_distribution(dist)
    if problems:
        raise ReleaseError("\n".join(f"error: {p}" for p in problems))
    wheels, sdists = sorted(dist.glob("*.whl")), sorted(dist.glob("*.tar.gz"))
    env = uv_environment()
    # --no-color, COLUMNS: plain lines, as wide as a log reads them
    twine = run([*checker("twine"), "--no-color", "check", "--strict", *map(str, wheels + sdists)],
                env={**env, "COLUMNS": "160"})
    contents = run([*checker("check-wheel-contents"), *map(str, wheels)], env=env)
    failures = []
    for title, done, passed in (("twine check --strict", twine, "PASSED"), ("check-wheel-contents", contents, ": OK")):
        if done.returncode != 0:
            lines = [line.rstrip() for line in (done.stdout + done.stderr).splitlines()]
            failures += [f"error: {title} failed:", *[line for line in lines if line and not line.endswith(passed)]]
    if failures:
        raise ReleaseError("\n".join(failures))
    say(f"check: {len(wheels)} wheels and {len(sdists)} sdists pass twine check --strict; "
        f"the wheels pass check-wheel-contents; one version: {artifact_name(wheels[0])[1]}")


# --- verify-data -----------------------------------------------------------------------------


def source_files(folder: Path) -> list[Path]:
    """The files under ``folder`` that the checkout ships: git's tracked and untracked-but-not-
    ignored files (what hatchling packs; caches and build output are ignored), or, outside a git
    checkout, every file but bytecode."""
    listed = run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", "."], cwd=folder)
    if listed.returncode == 0:
        paths = [folder / p for p in listed.stdout.split("\0") if p]
        return sorted(p for p in paths if p.is_file())  # a tracked file deleted in the work tree is gone
    return sorted(p for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts
                  and p.suffix not in {".pyc", ".pyo"})


def wheel_for(d: Distribution, dist: Path) -> Path | None:
    found = [p for p in sorted(dist.glob("*.whl")) if artifact_name(p)[0] == d.normalized]
    return found[0] if len(found) == 1 else None


def verify_data(dist: Path = DIST, only: Iterable[str] = ()) -> list[str]:
    """One line per file of a distribution's import packages (source tree of this checkout) that
    its wheel in ``dist`` lacks, and per import package without ``py.typed``."""
    wanted = {normalize(n) for n in only}
    problems = []
    checked = 0
    for d in distributions():
        if wanted and d.normalized not in wanted:
            continue
        wheel = wheel_for(d, dist)
        if wheel is None:
            problems.append(f"{d.name}: no wheel in {shown(dist)}")
            continue
        with zipfile.ZipFile(wheel) as archive:
            inside = set(archive.namelist())
        for package in d.packages:
            source = d.folder / package
            top = Path(package).name  # src/abduct_x -> abduct_x/ in the wheel
            expected = {f"{top}/{p.relative_to(source).as_posix()}" for p in source_files(source)}
            expected.add(f"{top}/py.typed")  # every package is typed (PEP 561)
            for path in sorted(expected - inside):
                if not (source / path.removeprefix(f"{top}/")).exists():
                    problems.append(f"{d.name}: {path} is in neither the source tree nor {wheel.name} "
                                    f"(the package is typed: add an empty {package}/py.typed)")
                else:
                    problems.append(f"{d.name}: {path} is in the source tree "
                                    f"({shown(source / path.removeprefix(top + '/'))}) but not in {wheel.name}")
        checked += 1
    if not problems:
        say(f"verify-data: the wheels of {checked} distributions hold every file of their packages' source "
            f"trees (data files, page assets, py.typed)")
    return problems


# --- index -----------------------------------------------------------------------------------


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def wheel_metadata(wheel: Path) -> dict[str, str]:
    with zipfile.ZipFile(wheel) as archive:
        name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA") and n.count("/") == 1)
        headers = HeaderParser().parsestr(archive.read(name).decode("utf-8"), headersonly=True)
    return {key: str(value) for key, value in headers.items()}


PAGE = "<!DOCTYPE html>\n<html><head><meta name=\"pypi:repository-version\" content=\"1.0\"><title>{title}</title></head>\n<body>\n{links}\n</body></html>\n"


def index(dist: Path = DIST) -> Path:
    """``dist/simple/``: PEP 503 pages linking the wheels, each with its sha256 and Requires-Python."""
    simple = dist.resolve() / "simple"
    shutil.rmtree(simple, ignore_errors=True)
    projects: dict[str, list[Path]] = {}
    for wheel in sorted(dist.glob("*.whl")):
        projects.setdefault(normalize(wheel_metadata(wheel)["Name"]), []).append(wheel)
    if not projects:
        raise ReleaseError(f"error: no wheels in {shown(dist)}: run the build step first")
    for name, wheels in projects.items():
        links = []
        for wheel in wheels:
            requires = wheel_metadata(wheel).get("Requires-Python")
            attribute = f' data-requires-python="{html.escape(requires)}"' if requires else ""
            links.append(f'<a href="../../{wheel.name}#sha256={sha256(wheel)}"{attribute}>{wheel.name}</a><br>')
        (simple / name).mkdir(parents=True)
        (simple / name / "index.html").write_text(PAGE.format(title=f"Links for {name}", links="\n".join(links)),
                                                  encoding="utf-8")
    top = "\n".join(f'<a href="{name}/">{name}</a><br>' for name in sorted(projects))
    (simple / "index.html").write_text(PAGE.format(title="Simple index", links=top), encoding="utf-8")
    say(f"index: {shown(simple)} lists {len(projects)} projects (pip install --index-url {simple.as_uri()} NAME)")
    return simple


# --- smoke -----------------------------------------------------------------------------------


def smallest_install(readme: Path = README) -> list[str]:
    """The distributions of the README's ``pip install ./packages/...`` line, by name."""
    folders = {d.folder.relative_to(ROOT).as_posix(): d.name for d in distributions()}
    for line in readme.read_text(encoding="utf-8").splitlines():
        if line.startswith("pip install ./"):
            paths = [word.removeprefix("./").rstrip("/") for word in shlex.split(line, comments=True)[2:]]
            unknown = [p for p in paths if p not in folders]
            if unknown:
                raise ReleaseError(f"error: README.md's install names {unknown}, which hold no distribution")
            return [folders[p] for p in paths]
    raise ReleaseError("error: README.md has no `pip install ./packages/...` line (the smallest install)")


def evaluate_commands(readme: Path = README) -> list[str]:
    """The command lines of the README's ``### Evaluate a model`` bash block."""
    text = readme.read_text(encoding="utf-8")
    block = re.search(r"^### Evaluate a model\n.*?^```bash\n(.*?)^```$", text, flags=re.MULTILINE | re.DOTALL)
    if block is None:
        raise ReleaseError("error: README.md has no bash block under '### Evaluate a model'")
    commands = [line for line in block.group(1).splitlines() if line.strip() and not line.lstrip().startswith("#")]
    if not commands:
        raise ReleaseError("error: README.md's 'Evaluate a model' block has no command")
    return commands


def record(text: str) -> set[tuple[str, str]]:
    """(path, hash) of a RECORD file's hashed entries."""
    return {(row[0], row[1]) for row in csv.reader(io.StringIO(text)) if len(row) >= 2 and row[1]}


def installed_abduct(site_packages: Path) -> dict[str, tuple[str, set[tuple[str, str]]]]:
    """normalised name -> (version, RECORD entries) of every abduct-* distribution installed."""
    found = {}
    for info in site_packages.glob("*.dist-info"):
        headers = HeaderParser().parsestr((info / "METADATA").read_text(encoding="utf-8"), headersonly=True)
        if normalize(headers["Name"]).startswith("abduct-"):
            found[normalize(headers["Name"])] = (headers["Version"], record((info / "RECORD").read_text(encoding="utf-8")))
    return found


def built_exactly(dist: Path, site_packages: Path) -> list[str]:
    """Problems unless every installed abduct-* distribution is a wheel of ``dist``, file for file
    (the wheel's RECORD hashes): none came from another index, none from a stale cache."""
    problems = []
    wheels = {artifact_name(w)[0]: w for w in dist.glob("*.whl")}
    for name, (version, installed) in sorted(installed_abduct(site_packages).items()):
        wheel = wheels.get(name)
        if wheel is None:
            problems.append(f"{name} {version} is installed but was not built")
            continue
        with zipfile.ZipFile(wheel) as archive:
            info = next(n for n in archive.namelist() if n.endswith(".dist-info/RECORD"))
            shipped = {(path, digest) for path, digest in record(archive.read(info).decode("utf-8"))
                       if Path(path).name not in INSTALLER_FILES}
        if missing := shipped - installed:
            problems.append(f"{name} {version} differs from {wheel.name} in {len(missing)} files "
                            f"(e.g. {sorted(missing)[0][0]})")
    return problems


def local_index_first(environ: dict[str, str], simple: Path) -> dict[str, str]:
    """uv's variables for installing from the local index ``simple`` before any other: it goes
    first in ``UV_INDEX`` (asked before ``UV_EXTRA_INDEX_URL`` and ``UV_INDEX_URL``), and the
    ``first-index`` strategy stops at the first index that has a package."""
    return {**environ, "UV_INDEX": " ".join(filter(None, [simple.resolve().as_uri(), environ.get("UV_INDEX", "")])),
            "UV_INDEX_STRATEGY": "first-index"}


def smoke(dist: Path = DIST, scratch: Path = SMOKE) -> None:
    """The README's smallest install from ``dist/simple`` in a fresh venv, then its 'Evaluate a
    model' commands there.

    How abduct-* come only from what was built: the local index is the *first* index uv asks
    (``local_index_first``), and uv's ``first-index`` strategy takes a package from the first
    index that has it, with no look at later ones, where a public abduct-core of a higher version
    would otherwise win (as it does with pip's ``--extra-index-url`` and with the
    ``unsafe-best-match`` strategy tools/pip_to_uv.py sets for pip's extra indexes). Third-party
    packages, absent from the local index, come from the configured indexes as everywhere else;
    torch is capped by constraints.txt. ``--find-links`` folders are not indexes and would still
    be looked at, so afterwards every installed abduct-* distribution must be one of ``dist``'s
    wheels, file for file (their RECORD hashes), or the step fails: nothing came from elsewhere,
    and nothing from a copy uv had cached before the wheel was rebuilt."""
    simple = dist / "simple"
    if not (simple / "index.html").exists():
        raise ReleaseError(f"error: no index in {shown(simple)}: run the index step first")
    names = smallest_install()
    commands = evaluate_commands()
    shutil.rmtree(scratch, ignore_errors=True)
    venv, work = scratch / "venv", scratch / "work"
    work.mkdir(parents=True)
    uv = find_uv()
    env = local_index_first(uv_environment(), simple)
    started = time.monotonic()
    made = run([uv, "venv", "-q", "--python", sys.executable, str(venv)], env=env)
    if made.returncode != 0:
        raise ReleaseError(f"error: uv venv failed:\n{made.stderr.strip()}")
    # --refresh-package: a rebuilt wheel keeps its file name; uv must not reuse what it cached before
    refresh = [arg for d in distributions() for arg in ("--refresh-package", d.name)]
    installed = run([uv, "pip", "install", "-q", "--python", str(venv / "bin" / "python"), "-c", str(CONSTRAINTS),
                     *refresh, *names], env=env)
    if installed.returncode != 0:
        raise ReleaseError(f"error: uv pip install {' '.join(names)} from {shown(simple)} failed:\n"
                           f"{installed.stderr.strip()}")
    site_packages = next((venv / "lib").glob("python*/site-packages"))
    problems = built_exactly(dist, site_packages)
    if problems:
        raise ReleaseError("\n".join(f"error: {p}" for p in problems))
    say(f"smoke: {' '.join(names)} installed from {shown(simple)} into a fresh venv "
        f"({len(installed_abduct(site_packages))} abduct-* wheels, as built) in {time.monotonic() - started:.0f} s")
    path = os.pathsep.join([str(venv / "bin"), os.environ.get("PATH", "")])
    run_env = {key: value for key, value in os.environ.items() if key not in {"PYTHONPATH", "PYTHONHOME"}}
    run_env.update(PATH=path, VIRTUAL_ENV=str(venv), ABDUCT_CACHE_DIR=str(scratch / "cache"))
    for command in commands:
        started = time.monotonic()
        done = run(["bash", "-euo", "pipefail", "-c", command], cwd=work, env=run_env)
        if done.returncode != 0:
            raise ReleaseError(f"error: README.md's '{command}' failed in the venv of built wheels "
                               f"(exit {done.returncode}):\n{(done.stdout + done.stderr).strip()[-3000:]}")
        words = shlex.split(command, comments=True)
        outputs = [words[i + 1] for i, word in enumerate(words[:-1]) if word == "--out"]
        if "eval" in words:
            for out in outputs:
                expected = ["results.json", *(["report.html", "samples.html"] if "abduct-report" in names else [])]
                lacking = [f for f in expected if not (work / out / f).is_file()]
                if lacking:
                    raise ReleaseError(f"error: README.md's '{command}' wrote no {', '.join(lacking)} in {out}")
        say(f"smoke: ran '{command}' ({time.monotonic() - started:.0f} s)")


# --- the whole dry run -----------------------------------------------------------------------


# The examples (a plugin to copy, the tutorial's) are built, checked and smoke-tested with the
# rest, but they are not abduct's to publish: their users copy the source, not the wheel.
NOT_PUBLISHED = ("abduct_plugin_example-", "abduct_tutorial-")


def would_upload(dist: Path = DIST) -> None:
    """List what the release publishes and gather it, hard-linked, in ``dist/upload/`` (what the
    workflow's publish job uploads)."""
    files = [path for path in sorted(dist.glob("*.whl")) + sorted(dist.glob("*.tar.gz"))
             if not path.name.startswith(NOT_PUBLISHED)]
    upload = dist / "upload"
    shutil.rmtree(upload, ignore_errors=True)
    upload.mkdir()
    for path in files:
        os.link(path, upload / path.name)
    say(f"dry run: would upload these {len(files)} files to PyPI from {upload.name}/ (not uploaded: the release "
        f"workflow publishes them, by trusted publishing, with attestations; the examples are not published):")
    for path in files:
        say(f"  {path.name}  {path.stat().st_size // 1024} KiB  sha256:{sha256(path)}")


def run_steps(steps: list[str], dist: Path) -> None:
    actions: dict[str, Callable[[Path], object]] = {"build": build, "check": check, "verify-data": _verify_or_fail,
                                                    "index": index, "smoke": smoke}
    timings = []
    for step in steps:
        started = time.monotonic()
        actions[step](dist)
        timings.append(f"{step} {time.monotonic() - started:.1f} s")
    say(f"seconds: {', '.join(timings)}")


def _verify_or_fail(dist: Path, only: Iterable[str] = ()) -> None:
    problems = verify_data(dist, only)
    if problems:
        raise ReleaseError("\n".join(f"error: {p}" for p in problems))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python tools/release.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("steps", nargs="*", metavar="STEP", help=f"steps to run, of {', '.join(STEPS)}")
    parser.add_argument("--dry-run", action="store_true", help="every step, then the list of what would be uploaded")
    parser.add_argument("--dist", type=Path, default=DIST, help="the artifacts' folder (default: dist/)")
    parser.add_argument("--package", nargs="+", default=[], metavar="NAME", help="verify-data: only these")
    args = parser.parse_args(argv)
    if unknown := [step for step in args.steps if step not in STEPS]:
        parser.error(f"no step {', '.join(unknown)} (the steps: {', '.join(STEPS)})")
    if not args.steps and not args.dry_run:
        print(REFUSAL, file=sys.stderr)
        return 2
    dist = args.dist.resolve()
    try:
        if args.package:
            if args.steps != ["verify-data"]:
                parser.error("--package goes with the verify-data step alone")
            _verify_or_fail(dist, args.package)
            return 0
        run_steps(STEPS if args.dry_run else args.steps, dist)
        if args.dry_run:
            would_upload(dist)
    except ReleaseError as failure:
        print(failure, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
