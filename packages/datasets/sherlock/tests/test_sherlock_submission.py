"""Writing and validating leaderboard submission zips."""

from __future__ import annotations

import io
import json
import shutil
import zipfile
from pathlib import Path

import numpy as np
import pytest
from sherlock_test_util import random_model

from abduct import AbductError
from abduct_sherlock.layout import ImageRoots
from abduct_sherlock.leaderboard import read_instances
from abduct_sherlock.submission import FOLDER, OFFICIAL_TEST_SIZES, validate_submission, zip_bytes
from abduct_testing import main


@pytest.fixture(scope="module")
def submission(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("submit")
    assert main(["sherlock", "submit", "--model", "random:3", "--data", str(corpus), "--out", str(out), "--quiet"]) == 0
    return out / "test_set_predictions.zip"


def _arrays(path: Path) -> dict[str, np.ndarray]:
    with zipfile.ZipFile(path) as archive:
        return {Path(n).stem: np.load(io.BytesIO(archive.read(n))) for n in archive.namelist() if n.endswith(".npy")}


def test_zip_layout_order_dtype_and_lengths(corpus: Path, submission: Path) -> None:
    with zipfile.ZipFile(submission) as archive:
        names = [n for n in archive.namelist() if n.endswith(".npy")]
    assert all(n.startswith(f"{FOLDER}/") for n in names)
    arrays = _arrays(submission)
    chunks = sorted(corpus.glob("test_retrieval_public/test_retrieval_*_instances.json"))
    assert set(arrays) == {"comparison", "localization", *(f"retrieval_{k}" for k in range(len(chunks)))}
    for name, arr in arrays.items():
        assert arr.dtype == np.float32 and arr.ndim == 1
    rows = read_instances(corpus / "test_comparison_public" / "test_comparison_instances.json", ImageRoots.for_data_dir(corpus))
    scores = dict(zip((r.test_id for r in rows),
                      random_model(3).score([r.visual for r in rows], [r.inference for r in rows])))
    expected = np.array([scores[t] for t in sorted(scores)], dtype=np.float32)
    np.testing.assert_array_equal(arrays["comparison"], expected)
    ids = json.loads((corpus / "test_comparison_public" / "test_comparison_instance_ids.json").read_text())
    assert ids == sorted(scores)


def test_validator_accepts_the_written_zip(corpus: Path, submission: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sherlock", "validate-submission", str(submission), "--data", str(corpus)]) == 0
    assert "valid submission" in capsys.readouterr().out
    # against the official test sizes the synthetic zip is too small
    with pytest.raises(AbductError, match="expected 4719"):
        validate_submission(submission)


def _write(tmp_path: Path, arrays: dict[str, np.ndarray], name: str = "test_set_predictions.zip") -> Path:
    path = tmp_path / name
    path.write_bytes(zip_bytes(arrays))
    return path


def test_validator_rejects_bad_zips(corpus: Path, submission: Path, tmp_path: Path) -> None:
    good = _arrays(submission)
    with pytest.raises(AbductError, match="named test_set_predictions.zip"):
        validate_submission(_write(tmp_path, good, "preds.zip"), corpus)
    bad = {k: v for k, v in good.items() if k != "comparison"}
    with pytest.raises(AbductError, match="comparison.npy is missing"):
        validate_submission(_write(tmp_path, bad), corpus)
    bad = dict(good, comparison=good["comparison"].astype(np.float16))
    with pytest.raises(AbductError, match="float16"):
        validate_submission(_write(tmp_path, bad), corpus)
    nan = good["localization"].copy()
    nan[3] = np.nan
    with pytest.raises(AbductError, match="NaN"):
        validate_submission(_write(tmp_path, dict(good, localization=nan)), corpus)
    with pytest.raises(AbductError, match="expected"):
        validate_submission(_write(tmp_path, dict(good, localization=good["localization"][:-1])), corpus)
    (tmp_path / "test_set_predictions.zip").write_bytes(b"junk")
    with pytest.raises(AbductError, match="not a zip"):
        validate_submission(tmp_path / "test_set_predictions.zip", corpus)


def test_partial_retrieval_is_rejected(corpus: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    shutil.copytree(corpus / "test_comparison_public", data / "test_comparison_public")
    shutil.copytree(corpus / "test_retrieval_public", data / "test_retrieval_public")
    chunk0 = data / "test_retrieval_public" / "test_retrieval_0_instances.json"
    shutil.copy(chunk0, data / "test_retrieval_public" / "test_retrieval_1_instances.json")
    n_cmp = len(json.loads((data / "test_comparison_public" / "test_comparison_instances.json").read_text()))
    n_ret = len(json.loads(chunk0.read_text()))
    arrays = {"comparison": np.zeros(n_cmp, np.float32), "retrieval_0": np.zeros(n_ret, np.float32)}
    with pytest.raises(AbductError, match=r"retrieval splits missing: \[1\]"):
        validate_submission(_write(tmp_path, arrays), data)
    arrays["retrieval_1"] = np.zeros(n_ret, np.float32)
    assert validate_submission(_write(tmp_path, arrays), data)[-1].endswith("valid submission")


def test_official_sizes_are_perfect_squares() -> None:
    assert len([k for k in OFFICIAL_TEST_SIZES if k.startswith("retrieval_")]) == 23
    assert OFFICIAL_TEST_SIZES["retrieval_0"] == 1_000_000 and OFFICIAL_TEST_SIZES["retrieval_3"] == 1_008_016


def test_submit_refuses_a_wrong_zip_name(corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["sherlock", "submit", "--model", "random", "--data", str(corpus), "--out", str(tmp_path / "x.zip"), "--quiet"])
    assert code == 2 and "test_set_predictions.zip" in capsys.readouterr().err
    assert not (tmp_path / "x.zip").exists()


def test_submit_refuses_a_model_that_needs_the_clue(corpus: Path, tmp_path: Path) -> None:
    from sherlock_test_util import registry_with_test_models

    from abduct_sherlock.submission import write_submission

    with pytest.raises(AbductError, match="needs context inputs"):  # the public test files carry no clue
        write_submission("clue-reader", corpus, tmp_path, registry=registry_with_test_models())
    assert not (tmp_path / "test_set_predictions.zip").exists()
