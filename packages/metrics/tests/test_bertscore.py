"""BERTScore equals bert_score.score run directly, on a tiny random local BERT."""

from __future__ import annotations

import json
from pathlib import Path

import bert_score
import numpy as np
import pytest

from abduct import AbductError, Metric, Settings
from abduct.host import get_registry
from abduct_metrics._common import SCALE
from abduct_metrics.testing import generated_data
from abduct_testing import MetricContract, main

TOL = 1e-9


def create(spec: str, batch_size: int = 64) -> Metric:
    """``bertscore,...`` built through the registry, as tasks and `abduct metric` build it."""
    metric: Metric = get_registry().create("metric", spec, Settings(device="cpu", batch_size=batch_size))
    return metric


@pytest.fixture(scope="module")
def data():
    return generated_data(40, seed=7, max_refs=3)


@pytest.fixture(scope="module")
def baseline_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("baseline") / "tiny.tsv"
    # bert-score reads it with pandas: header LAYER,P,R,F and one row per layer.
    path.write_text("LAYER,P,R,F\n0,0.31,0.32,0.315\n1,0.52,0.55,0.53\n2,0.61,0.63,0.62\n", encoding="utf-8")
    return path


def _direct(data, model_dir, **kwargs):
    predictions, references = data
    ids = list(predictions)
    # nthreads=0: bert-score's idf counts in this process, the same counts its default pool makes
    # (a pool forked from this threaded process can hang: see test_idf_forks_no_process)
    (p, r, f), digest = bert_score.score([predictions[k] for k in ids], [references[k] for k in ids],
                                         model_type=str(model_dir), device="cpu", return_hash=True, nthreads=0,
                                         **kwargs)
    return ids, [t.double().numpy() for t in (p, r, f)], digest


def _assert_equal(result, ids, columns) -> None:
    for key, col in zip(("bertscore_precision", "bertscore_recall", "bertscore_f1"), columns):
        np.testing.assert_allclose([result.per_sample[k][key] for k in ids], SCALE * col, rtol=0, atol=SCALE * TOL)
        assert abs(result.corpus[key] - SCALE * float(np.mean(col))) <= SCALE * TOL


def test_idf_forks_no_process(data, tiny_bert, monkeypatch: pytest.MonkeyPatch) -> None:
    """bert-score counts idf in a forked multiprocessing.Pool by default; forked from a process
    running threads it hung the test suite once (a pool that never joined). Ours counts in
    process, so a Pool is never made."""
    import bert_score.utils

    def no_pool(*args, **kwargs):
        raise AssertionError("bert-score's idf made a multiprocessing.Pool")

    monkeypatch.setattr(bert_score.utils, "Pool", no_pool)
    ours = create(f"bertscore,model={tiny_bert},num_layers=2,idf=true", batch_size=8).compute(*data)
    ids, columns, _ = _direct(data, tiny_bert, num_layers=2, idf=True, batch_size=8)
    _assert_equal(ours, ids, columns)


@pytest.mark.parametrize("idf", [False, True])
def test_equals_bert_score(data, tiny_bert, idf) -> None:
    ours = create(f"bertscore,model={tiny_bert},num_layers=2,idf={str(idf).lower()}", batch_size=8).compute(*data)
    ids, columns, digest = _direct(data, tiny_bert, num_layers=2, idf=idf, batch_size=8)
    _assert_equal(ours, ids, columns)
    assert ours.info["hash"] == digest
    assert ("_idf_" in digest) == idf


@pytest.mark.filterwarnings("ignore:The given NumPy array is not writable")
def test_rescaled_with_custom_baseline(data, tiny_bert, baseline_file) -> None:
    ours = create(f"bertscore,model={tiny_bert},num_layers=1,rescale_with_baseline=true,"
                  f"baseline_path={baseline_file},lang=en,batch_size=16").compute(*data)
    ids, columns, digest = _direct(data, tiny_bert, num_layers=1, rescale_with_baseline=True,
                                   baseline_path=str(baseline_file), lang="en", batch_size=16)
    _assert_equal(ours, ids, columns)
    assert digest.endswith("-custom-rescaled") and ours.info["hash"] == digest


def test_layer_changes_the_number(data, tiny_bert) -> None:
    one = create(f"bertscore,model={tiny_bert},num_layers=1").compute(*data)
    two = create(f"bertscore,model={tiny_bert},num_layers=2").compute(*data)
    assert one.corpus["bertscore_f1"] != two.corpus["bertscore_f1"]
    assert "_L1_" in one.info["hash"] and "_L2_" in two.info["hash"]


def test_configuration_errors(tiny_bert, tmp_path) -> None:
    with pytest.raises(AbductError, match="num_layers is required"):
        create(f"bertscore,model={tiny_bert}")
    with pytest.raises(AbductError, match="no rescaling baseline"):
        create(f"bertscore,model={tiny_bert},num_layers=2,rescale_with_baseline=true")
    with pytest.raises(AbductError, match="could not load model"):
        create(f"bertscore,model={tmp_path / 'missing-model'},num_layers=2")
    with pytest.raises(AbductError, match="option 'num_layers': 'two' is not an integer"):
        create(f"bertscore,model={tiny_bert},num_layers=two")
    with pytest.raises(AbductError, match="batch_size must be at least 1"):
        create(f"bertscore,model={tiny_bert},num_layers=2,batch_size=0")


def test_cli_prints_hash(data, tiny_bert, tmp_path, capsys) -> None:
    predictions, references = data
    (tmp_path / "p.json").write_text(json.dumps(predictions))
    (tmp_path / "r.json").write_text(json.dumps(references))
    files = ["--predictions", str(tmp_path / "p.json"), "--references", str(tmp_path / "r.json"), "--json"]
    ids, columns, digest = _direct(data, tiny_bert, num_layers=2, batch_size=4)
    for form in (["bertscore", "-o", f"model={tiny_bert}", "-o", "num_layers=2", "-o", "batch_size=4"],
                 [f"bertscore,model={tiny_bert},num_layers=2", "--batch-size", "4", "--device", "cpu"]):
        assert main(["metric", *form, *files]) == 0
        out = json.loads(capsys.readouterr().out)
        assert out["bertscore_hash"] == digest
        assert abs(out["bertscore_f1"] - SCALE * float(np.mean(columns[2]))) <= SCALE * TOL


@pytest.mark.filterwarnings("ignore:The given NumPy array is not writable")
def test_cli_typed_boolean_options(data, tiny_bert, baseline_file, tmp_path, capsys) -> None:
    predictions, references = data
    (tmp_path / "p.json").write_text(json.dumps(predictions))
    (tmp_path / "r.json").write_text(json.dumps(references))
    files = ["--predictions", str(tmp_path / "p.json"), "--references", str(tmp_path / "r.json"), "--json"]
    assert main(["metric", f"bertscore,model={tiny_bert},num_layers=1", "-o", "rescale_with_baseline=true",
                 "-o", f"baseline_path={baseline_file}", "-o", "idf=true", *files]) == 0
    out = json.loads(capsys.readouterr().out)
    _, columns, digest = _direct(data, tiny_bert, num_layers=1, idf=True, rescale_with_baseline=True,
                                 baseline_path=str(baseline_file), lang="en")
    assert out["bertscore_hash"] == digest and "_idf_" in digest and digest.endswith("-custom-rescaled")
    assert abs(out["bertscore_f1"] - SCALE * float(np.mean(columns[2]))) <= SCALE * TOL
    assert main(["metric", "bertscore", "-o", "idf=maybe", *files]) == 2
    assert "'maybe' is not a boolean" in capsys.readouterr().err
    assert main(["metric", "bertscore", "-o", "layers=3", *files]) == 2
    assert "no option 'layers'" in capsys.readouterr().err


class TestBertScoreContract(MetricContract):
    @pytest.fixture(autouse=True)
    def _model(self, tiny_bert):
        self.model_dir = tiny_bert

    def make_metric(self):
        return create(f"bertscore,model={self.model_dir},num_layers=2")
