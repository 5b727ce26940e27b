"""Leaderboard submissions: ``test_set_predictions.zip`` holding
``test_set_predictions/comparison.npy`` (required), ``localization.npy`` and
``retrieval_{0..22}.npy`` (optional), each a 1-D float32 array in sorted-test_id order."""

from __future__ import annotations

import io
import json
import re
import warnings
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from abduct import AbductError, Settings
from abduct.kit import atomic_write_bytes
from abduct_sherlock.layout import ImageRoots, leaderboard_dir, leaderboard_files
from abduct_sherlock.leaderboard import LeaderboardRow, read_instances
from abduct_sherlock.records import OPTIONAL_INPUTS

if TYPE_CHECKING:
    from abduct import Scoring
    from abduct.host import Registry

ZIP_NAME = "test_set_predictions.zip"
FOLDER = "test_set_predictions"
# The test-set lengths the leaderboard's validator expects.
OFFICIAL_TEST_SIZES = {
    "comparison": 4719, "localization": 2365256,
    **{f"retrieval_{k}": n * n for k, n in enumerate(
        (1000, 989, 996, 1004, 982, 989, 996, 991, 988, 992, 992, 1000, 997, 990, 988, 987, 998, 983, 996, 983, 985,
         992, 998))},
}
RETRIEVAL_SPLITS = 23


def instance_files(data_dir: Path, tasks: Sequence[str] = ("comparison", "localization", "retrieval")) -> dict[str, Path]:
    """The public test instance files present in ``data_dir``, by submission entry name."""
    out: dict[str, Path] = {}
    for task in tasks:
        if task == "retrieval":
            folder = leaderboard_dir(data_dir, "test", "retrieval")
            pattern = re.compile(r"^test_retrieval_(\d+)_instances\.json$")
            found = sorted((int(m.group(1)), p) for p in (folder.glob("*.json") if folder.is_dir() else [])
                           if (m := pattern.match(p.name)))
            out.update({f"retrieval_{k}": p for k, p in found})
        elif task in ("comparison", "localization"):
            path = leaderboard_files(data_dir, "test", task)["instances"]
            if path.is_file():
                out[task] = path
        else:
            raise AbductError(f"unknown Sherlock task '{task}' (expected comparison, localization, retrieval)")
    return out


def _scores(engine: Scoring, rows: list[LeaderboardRow], per_image: bool) -> dict[str, float]:

    groups: dict[str, list[LeaderboardRow]] = {}
    for row in rows:
        groups.setdefault(row.image_url if per_image else "", []).append(row)
    out: dict[str, float] = {}
    for group in groups.values():
        values = engine.score_rows([r.visual for r in group], [r.inference for r in group])
        out.update(zip((r.test_id for r in group), values.tolist()))
    return out


def sorted_array(scores: dict[str, float], what: str) -> np.ndarray:
    """Scores in sorted-test_id order as float32; a NaN is an error naming its test id. +-inf
    pass (the leaderboard's validator refuses NaN only); finite scores that float32 cannot hold
    become +-inf there, which one warning says."""
    ids = sorted(scores)
    wide = np.array([scores[t] for t in ids], dtype=np.float64)
    bad = np.flatnonzero(np.isnan(wide))
    if len(bad):
        raise AbductError(f"{what}: the model gave a NaN score for test id {ids[bad[0]]}")
    with np.errstate(over="ignore"):
        arr = wide.astype(np.float32)
    lost = int(np.sum(np.isinf(arr) & np.isfinite(wide)))
    if lost:
        warnings.warn(f"{what}: {lost} finite score(s) beyond float32's range (3.4e38) are +-inf in the submission, "
                      "which reads float32; rescale the model's scores", stacklevel=2)
    return arr


def zip_bytes(arrays: dict[str, np.ndarray]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(f"{FOLDER}/", b"")
        for name in sorted(arrays, key=_entry_order):
            payload = io.BytesIO()
            np.save(payload, arrays[name])
            archive.writestr(f"{FOLDER}/{name}.npy", payload.getvalue())
    return buffer.getvalue()


def _entry_order(name: str) -> tuple[int, int]:
    if name.startswith("retrieval_"):
        return (2, int(name.split("_")[1]))
    return (0 if name == "comparison" else 1, 0)


def _zip_target(out_path: Path) -> Path:
    out_path = Path(out_path)
    if out_path.suffix.lower() == ".zip":
        if out_path.name != ZIP_NAME:
            raise AbductError(f"the leaderboard wants the zip named {ZIP_NAME}, not {out_path.name}")
        return out_path
    return out_path / ZIP_NAME


def write_submission(
    model_spec: str, data_dir: Path, out_path: Path, *, tasks: Sequence[str] = ("comparison", "localization", "retrieval"),
    settings: Settings | None = None, quiet: bool = False, registry: Registry | None = None,
) -> Path:
    """Score every public test instance file of ``tasks`` with the model and write the zip.

    The model goes through the same input policy as in ``abduct eval`` (``OPTIONAL_INPUTS``):
    a model that does not take regions sees the whole image. The public test files carry no
    clue and the test annotations are not released, so the inputs here have no context: a
    model that needs the clue is refused (one line) before any call."""
    from abduct.host import engine_for
    from abduct.kit import seed_everything

    settings = settings or Settings()
    target = _zip_target(out_path)
    files = instance_files(Path(data_dir), tasks)
    if "comparison" not in files:
        raise AbductError(f"{leaderboard_files(Path(data_dir), 'test', 'comparison')['instances']} not found; "
                          "the leaderboard requires comparison predictions")
    seed_everything(settings.seed)
    engines = engine_for(model_spec, settings, registry=registry, optional_inputs=OPTIONAL_INPUTS, use_cache=False,
                         quiet=quiet)
    engine = engines.scoring
    if engine is None:
        raise AbductError(f"model '{engines.loaded.spec.name}' does not score; a submission needs scores")
    roots = ImageRoots.for_data_dir(Path(data_dir))
    arrays = {}
    for name, path in files.items():
        rows = read_instances(path, roots)
        arrays[name] = sorted_array(_scores(engine, rows, per_image=name == "localization"), str(path))
    atomic_write_bytes(target, zip_bytes(arrays))
    return target


def expected_sizes(data_dir: Path | None) -> dict[str, int]:
    """Lengths per entry: the rows of the test instance files in ``data_dir``, else the official ones."""
    if data_dir is None:
        return dict(OFFICIAL_TEST_SIZES)
    sizes = {}
    for name, path in instance_files(Path(data_dir)).items():
        with open(path, encoding="utf-8") as handle:
            sizes[name] = len(json.load(handle))
    if "comparison" not in sizes:
        raise AbductError(f"no test_comparison_public/test_comparison_instances.json in {data_dir}")
    return sizes


def validate_submission(zip_path: Path, data_dir: Path | None = None) -> list[str]:
    """Check a submission as the leaderboard's validator does (name, entries, dtype, NaN,
    lengths); returns a report, raises AbductError on the first fatal problem."""
    zip_path = Path(zip_path)
    if zip_path.name != ZIP_NAME:
        raise AbductError(f"{zip_path}: the leaderboard wants the file named {ZIP_NAME}")
    if not zip_path.is_file():
        raise AbductError(f"submission not found: {zip_path}")
    sizes = expected_sizes(data_dir)
    try:
        archive = zipfile.ZipFile(zip_path)
    except zipfile.BadZipFile as exc:
        raise AbductError(f"{zip_path}: not a zip file ({exc})") from None
    report = []
    with archive:
        names = set(archive.namelist())
        retrieval = sorted((n for n in sizes if n.startswith("retrieval_")), key=_entry_order)
        for name in ("comparison", "localization", *retrieval):
            entry = f"{FOLDER}/{name}.npy"
            if entry not in names:
                if name == "comparison":
                    raise AbductError(f"{zip_path}: {entry} is missing (required)")
                continue
            arr = _load_entry(zip_path, entry, archive.read(entry))
            if arr.shape[0] != sizes[name]:
                raise AbductError(f"{zip_path}: {entry} has {arr.shape[0]} scores, expected {sizes[name]}")
            report.append(f"{entry}: {arr.shape[0]} {arr.dtype} scores, okay")
        present = [n for n in retrieval if f"{FOLDER}/{n}.npy" in names]
        if "localization" in sizes and f"{FOLDER}/localization.npy" not in names:
            report.append("localization.npy not found: localization will not be scored")
        if present and len(present) != len(retrieval):
            missing = [int(n.split("_")[1]) for n in retrieval if n not in present]
            raise AbductError(f"{zip_path}: retrieval splits missing: {missing} (submit all or none)")
        if not present:
            report.append("no retrieval_*.npy: retrieval will not be scored")
    report.append(f"{zip_path}: valid submission")
    return report


def _load_entry(zip_path: Path, entry: str, payload: bytes) -> np.ndarray:
    try:
        arr = np.load(io.BytesIO(payload), allow_pickle=False)
    except (ValueError, OSError) as exc:
        raise AbductError(f"{zip_path}: {entry} is not a .npy array ({exc})") from None
    if arr.dtype not in (np.float32, np.float64):
        raise AbductError(f"{zip_path}: {entry} has dtype {arr.dtype}; only float32 or float64 are accepted")
    if arr.ndim != 1:
        raise AbductError(f"{zip_path}: {entry} has shape {arr.shape}; expected a 1-D array")
    if np.isnan(arr).any():
        raise AbductError(f"{zip_path}: {entry} contains a NaN")
    return np.asarray(arr)
