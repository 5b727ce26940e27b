"""`abduct score sherlock-*`: official-format predictions against answer keys."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy.stats import rankdata
from sherlock_test_util import write_json

from abduct_testing import main

IDS = ["a", "b", "c"]


def _score(capsys: pytest.CaptureFixture[str], task: str, preds: Path, key: Path, ids: Path | None = None) -> Any:
    argv = ["score", f"sherlock-{task}", "--predictions", str(preds), "--answer-key", str(key), "--json"]
    if ids is not None:
        argv += ["--instance-ids", str(ids)]
    code = main(argv)
    out, err = capsys.readouterr()
    return (code, json.loads(out)) if code == 0 else (code, err)


@pytest.fixture
def retrieval_key(tmp_path: Path) -> Path:
    return write_json(tmp_path / "key.json", {f"t{x}{y}": [x, y] for x in IDS for y in IDS})


def _matrix_predictions(matrix: list[list[float]]) -> dict[str, float]:
    return {f"t{x}{y}": matrix[i][j] for i, x in enumerate(IDS) for j, y in enumerate(IDS)}


def test_retrieval_all_tied(tmp_path: Path, retrieval_key: Path, capsys: pytest.CaptureFixture[str]) -> None:
    preds = write_json(tmp_path / "p.json", _matrix_predictions([[0.5] * 3] * 3))
    assert _score(capsys, "retrieval", preds, retrieval_key) == (0, {"im2txt": 2.0, "txt2im": 2.0, "p_at_1": 0.0})


def test_retrieval_hand_computed_ties_and_duplicate_rows(tmp_path: Path, retrieval_key: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    preds = write_json(tmp_path / "p.json", _matrix_predictions([[1, 1, 0], [2, 1, 1], [0, 0, 0]]))
    assert _score(capsys, "retrieval", preds, retrieval_key)[1] == {"im2txt": 2.0, "txt2im": 2.0, "p_at_1": 0.0}
    preds = write_json(tmp_path / "q.json", _matrix_predictions([[3, 1, 0], [3, 1, 0], [0, 0, 5]]))
    out = _score(capsys, "retrieval", preds, retrieval_key)[1]
    assert out["im2txt"] == pytest.approx(4 / 3) and out["txt2im"] == pytest.approx(4 / 3)
    assert out["p_at_1"] == pytest.approx(200 / 3)


def test_npy_with_and_without_instance_ids_equals_json(tmp_path: Path, retrieval_key: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    preds = _matrix_predictions([[0.9, 0.1, 0.3], [0.2, 0.2, 0.7], [0.3, 0.8, 0.4]])
    as_json = _score(capsys, "retrieval", write_json(tmp_path / "p.json", preds), retrieval_key)
    ids = sorted(preds)
    np.save(tmp_path / "p.npy", np.array([preds[t] for t in ids], dtype=np.float32))
    with_ids = _score(capsys, "retrieval", tmp_path / "p.npy", retrieval_key, write_json(tmp_path / "ids.json", ids))
    without_ids = _score(capsys, "retrieval", tmp_path / "p.npy", retrieval_key)
    assert as_json == with_ids == without_ids
    assert as_json[0] == 0 and as_json[1]["p_at_1"] == pytest.approx(100 / 3)


@pytest.mark.parametrize(
    "mutate, offending",
    [
        (lambda p: p.update(tab=float("nan")), "tab"),
        (lambda p: p.pop("tbc"), "tbc"),
        (lambda p: p.update(zzz=0.1), "zzz"),
        (lambda p: p.update(tca="high"), "tca"),
    ],
)
def test_bad_json_predictions_exit_2_naming_the_id(tmp_path: Path, retrieval_key: Path, capsys: pytest.CaptureFixture[str],
                                                   mutate: Any, offending: str) -> None:
    preds = _matrix_predictions([[0.5] * 3] * 3)
    mutate(preds)
    code, err = _score(capsys, "retrieval", write_json(tmp_path / "p.json", preds), retrieval_key)
    assert code == 2
    assert f"record {offending}" in err and "Traceback" not in err


def test_bad_npy_predictions_exit_2_naming_the_id(tmp_path: Path, retrieval_key: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    ids = sorted(_matrix_predictions([[0.0] * 3] * 3))
    np.save(tmp_path / "short.npy", np.zeros(len(ids) - 2, dtype=np.float32))
    code, err = _score(capsys, "retrieval", tmp_path / "short.npy", retrieval_key)
    assert code == 2 and f"record {ids[-2]}" in err
    np.save(tmp_path / "long.npy", np.zeros(len(ids) + 1, dtype=np.float32))
    code, err = _score(capsys, "retrieval", tmp_path / "long.npy", retrieval_key)
    assert code == 2 and "extra score" in err and ids[-1] in err
    values = np.zeros(len(ids), dtype=np.float64)
    values[4] = np.nan
    np.save(tmp_path / "nan.npy", values)
    code, err = _score(capsys, "retrieval", tmp_path / "nan.npy", retrieval_key)
    assert code == 2 and f"record {ids[4]}" in err and "NaN" in err
    np.save(tmp_path / "int.npy", np.zeros(len(ids), dtype=np.int64))
    assert _score(capsys, "retrieval", tmp_path / "int.npy", retrieval_key)[0] == 2
    bad_ids = write_json(tmp_path / "ids.json", ids[:-1] + ["nope"])
    np.save(tmp_path / "ok.npy", np.zeros(len(ids), dtype=np.float32))
    code, err = _score(capsys, "retrieval", tmp_path / "ok.npy", retrieval_key, bad_ids)
    assert code == 2 and "record nope" in err


def test_incomplete_retrieval_key_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    key = write_json(tmp_path / "key.json", {"t1": ["a", "a"], "t2": ["a", "b"]})
    code, err = _score(capsys, "retrieval", write_json(tmp_path / "p.json", {"t1": 0, "t2": 1}), key)
    assert code == 2 and "key.json" in err


def _localization_key(tmp_path: Path, with_auto: bool = True) -> Path:
    key: dict[str, Any] = {
        "g00": {"type": "gt", "image": "u1", "inst_id": "x", "bbox_idx": 0, "correct": True},
        "g01": {"type": "gt", "image": "u1", "inst_id": "y", "bbox_idx": 0, "correct": False},
        "g10": {"type": "gt", "image": "u1", "inst_id": "x", "bbox_idx": 1, "correct": False},
        "g11": {"type": "gt", "image": "u1", "inst_id": "y", "bbox_idx": 1, "correct": True},
    }
    if with_auto:
        key.update({
            "ax0": {"type": "auto", "image": "u1", "inst_id": "x", "IoU": 0.5},
            "ax1": {"type": "auto", "image": "u1", "inst_id": "x", "IoU": 0.51},
            "ay0": {"type": "auto", "image": "u1", "inst_id": "y", "IoU": 0.6},
            "ay1": {"type": "auto", "image": "u1", "inst_id": "y", "IoU": 0.2},
        })
    return write_json(tmp_path / "loc_key.json", key)


def test_localization_constant_predictor(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    key = _localization_key(tmp_path)
    preds = {t: 1.0 for t in json.loads(key.read_text())}
    # GT: lapjv on the all-equal 2x2 matrix swaps the boxes (0%); auto: ties go to the first
    # proposal, IoU 0.5 misses and 0.6 hits (50%)
    assert _score(capsys, "localization", write_json(tmp_path / "p.json", preds), key) == (
        0, {"gt_accuracy": 0.0, "auto_accuracy": 50.0})


def test_localization_correct_predictor(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    key = _localization_key(tmp_path)
    preds = {"g00": 1, "g01": 0, "g10": 0, "g11": 1, "ax0": 0.1, "ax1": 0.2, "ay0": 0.5, "ay1": 0.4}
    assert _score(capsys, "localization", write_json(tmp_path / "p.json", preds), key) == (
        0, {"gt_accuracy": 100.0, "auto_accuracy": 100.0})


def test_localization_key_without_auto_reports_gt_only(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    key = _localization_key(tmp_path, with_auto=False)
    preds = {"g00": 1, "g01": 0, "g10": 0, "g11": 1}
    assert _score(capsys, "localization", write_json(tmp_path / "p.json", preds), key) == (0, {"gt_accuracy": 100.0})


def _comparison_key(tmp_path: Path) -> Path:
    return write_json(tmp_path / "cmp_key.json", {
        "test_id_map": {f"c{i}": {"Input_iid": "s", "candidate": f"k{i}"} for i in range(3)},
        "annotations": [{"Input_iid": "s", "candidates": [
            {"source_iid": "k0", "annot1": 3, "annot2": 3},
            {"source_iid": "k1", "annot1": 1, "annot2": 2},
            {"source_iid": "k2", "annot1": 2, "annot2": 1},
        ]}],
    })


def test_comparison_hand_computed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    key = _comparison_key(tmp_path)
    code, out = _score(capsys, "comparison", write_json(tmp_path / "p.json", {"c0": 0, "c1": 0, "c2": 0}), key)
    assert code == 0
    assert out["accuracy"] == pytest.approx(0.0)
    assert out["human"] == pytest.approx(100 / 3)
    assert out["oracle"] == pytest.approx(200 / 3)
    code, out = _score(capsys, "comparison", write_json(tmp_path / "q.json", {"c0": 3, "c1": 1, "c2": 2}), key)
    assert out["accuracy"] == pytest.approx(100 * np.mean([1.0, 1 / 3]))


# -- against the published scorers' procedure on the synthetic validation files ---------------
def _random_predictions(ids: list[str], seed: int, levels: int | None = None) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    values = rng.integers(0, levels, len(ids)) if levels else rng.random(len(ids))
    return {t: float(np.float32(v)) for t, v in zip(ids, values)}


@pytest.mark.parametrize("levels", [None, 3])
def test_retrieval_matches_reference_procedure(corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                               levels: int | None) -> None:
    key_path = corpus / "val_retrieval" / "val_retrieval_1_answer_key.json"
    key = json.loads(key_path.read_text())
    preds = _random_predictions(sorted(key), 7, levels)
    # the published procedure: a set of image-side ids, a dict keyed by pairs, rankdata
    ids = list({v[0] for v in key.values()})
    decoded = {tuple(key[t]): p for t, p in preds.items()}
    sim = np.array([[decoded[(a, b)] for b in ids] for a in ids])
    r1, r0 = np.diagonal(rankdata(-sim, axis=1)), np.diagonal(rankdata(-sim, axis=0))
    expected = {"im2txt": float(np.mean(r1)), "txt2im": float(np.mean(r0)), "p_at_1": float(100 * np.mean(r1 == 1.0))}
    assert _score(capsys, "retrieval", write_json(tmp_path / "p.json", preds), key_path) == (0, expected)


@pytest.mark.parametrize("levels", [None, 2])
def test_localization_matches_reference_procedure(corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                  levels: int | None) -> None:
    import lapjv

    key_path = corpus / "val_localization" / "val_localization_answer_key.json"
    key = json.loads(key_path.read_text())
    preds = _random_predictions(sorted(key), 3, levels)
    gt: dict[str, list[Any]] = {}
    auto: dict[str, dict[str, list[Any]]] = {}
    for tid, a in key.items():
        if a["type"] == "gt":
            gt.setdefault(a["image"], []).append((tid, a))
        else:
            auto.setdefault(a["image"], {}).setdefault(a["inst_id"], []).append((preds[tid], a["IoU"]))
    gt_accs = []
    for rows in gt.values():
        n = int(np.sqrt(len(rows)))
        own = {a["inst_id"]: a["bbox_idx"] for _, a in rows if a["correct"]}
        sim = np.zeros((n, n))
        for tid, a in rows:
            sim[a["bbox_idx"], own[a["inst_id"]]] = preds[tid]
        gt_accs.append(np.mean(np.arange(n) == lapjv.lapjv(-sim)[0]))
    auto_accs = [np.mean([float(r[int(np.argmax([s for s, _ in r]))][1] > 0.5) for r in per.values()])
                 for per in auto.values()]
    expected = {"gt_accuracy": float(np.mean(gt_accs) * 100), "auto_accuracy": float(np.mean(auto_accs) * 100)}
    assert _score(capsys, "localization", write_json(tmp_path / "p.json", preds), key_path) == (0, expected)


# -- any magnitude ----------------------------------------------------------------------------
KEYS = {"retrieval": "val_retrieval/val_retrieval_1_answer_key.json",
        "localization": "val_localization/val_localization_answer_key.json"}
# exact power-of-two factors (normal and subnormal results) and decimal ones
FACTORS = [1e300, 1e-300, 2.0 ** -1040, 2.0 ** 1000]


def full_precision(out: dict[str, Any]) -> dict[str, Any]:
    """The full-precision figures of an ``abduct score`` output: the headline (official) ones
    with those ``full_precision`` gives where they differ."""
    figures = {k: v for k, v in out.items() if k not in ("full_precision", "official_unavailable")}
    return {**figures, **out.get("full_precision", {})}


@pytest.mark.parametrize("task", sorted(KEYS))
@pytest.mark.parametrize("levels", [None, 3])
def test_scaled_scores_score_like_the_unscaled_ones(corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                   task: str, levels: int | None) -> None:
    """In full precision c·s scores like s and -c·s like -s for any c > 0, from 1e300 (which
    aborts the official scorer inside lapjv) to subnormals; mixed signs too. (The headline is
    the official scorer's number: test_sherlock_official_arithmetic.py.)"""
    key_path = corpus / KEYS[task]
    base = _random_predictions(sorted(json.loads(key_path.read_text())), 11, levels)
    centred = {t: v - 0.5 for t, v in base.items()}  # mixed signs
    for sign in (1.0, -1.0):
        for preds in (base, centred):
            signed = {t: sign * v for t, v in preds.items()}
            code, expected = _score(capsys, task, write_json(tmp_path / "p.json", signed), key_path)
            assert code == 0 and "full_precision" not in expected  # float32-exact scores lose nothing
            for factor in FACTORS:
                scaled = {t: v * factor for t, v in signed.items()}
                code, got = _score(capsys, task, write_json(tmp_path / "s.json", scaled), key_path)
                assert code == 0 and full_precision(got) == expected, (sign, factor)


def test_nan_scores_are_refused_in_one_line(corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    key_path = corpus / KEYS["localization"]
    preds = _random_predictions(sorted(json.loads(key_path.read_text())), 1)
    first = next(iter(preds))
    preds[first] = float("nan")
    path = tmp_path / "p.json"
    path.write_text(json.dumps(preds))  # json writes NaN
    code, err = _score(capsys, "localization", path, key_path)
    assert code == 2 and len(err.strip().splitlines()) == 1 and f"record {first}, field 'score'" in err


def test_comparison_ties_and_scale(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """In full precision equal scores are ordered by the fixed offsets whatever their magnitude."""
    key = _comparison_key(tmp_path)
    outs = []
    for factor in (1.0, 1e300, 1e-300, 2.0 ** -1070):
        code, out = _score(capsys, "comparison", write_json(tmp_path / "p.json",
                                                             {"c0": factor, "c1": factor, "c2": 0.0}), key)
        assert code == 0
        outs.append(full_precision(out))
    assert all(out == outs[0] for out in outs)
