"""BERTScore equals bert_score.score run directly, on a tiny random local BERT."""

from __future__ import annotations

import json
from pathlib import Path

import bert_score
import numpy as np
import pytest

from abduct.cli import main
from abduct.errors import AbductError
from abduct.testing import MetricContract
from abduct_metrics._bertscore import BertScore
from abduct_metrics.testing import generated_data

TOL = 1e-9


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
    (p, r, f), digest = bert_score.score([predictions[k] for k in ids], [references[k] for k in ids],
                                         model_type=str(model_dir), device="cpu", return_hash=True, **kwargs)
    return ids, [t.double().numpy() for t in (p, r, f)], digest


def _assert_equal(result, ids, columns) -> None:
    for key, col in zip(("bertscore_precision", "bertscore_recall", "bertscore_f1"), columns):
        np.testing.assert_allclose([result.per_sample[k][key] for k in ids], col, rtol=0, atol=TOL)
        assert abs(result.corpus[key] - float(np.mean(col))) <= TOL


@pytest.mark.parametrize("idf", [False, True])
def test_equals_bert_score(data, tiny_bert, idf) -> None:
    ours = BertScore(model=str(tiny_bert), num_layers=2, idf=idf, batch_size=8).compute(*data)
    ids, columns, digest = _direct(data, tiny_bert, num_layers=2, idf=idf, batch_size=8)
    _assert_equal(ours, ids, columns)
    assert ours.info["hash"] == digest
    assert ("_idf_" in digest) == idf


@pytest.mark.filterwarnings("ignore:The given NumPy array is not writable")
def test_rescaled_with_custom_baseline(data, tiny_bert, baseline_file) -> None:
    ours = BertScore(model=str(tiny_bert), num_layers=1, rescale_with_baseline=True,
                     baseline_path=str(baseline_file), lang="en", batch_size=16).compute(*data)
    ids, columns, digest = _direct(data, tiny_bert, num_layers=1, rescale_with_baseline=True,
                                   baseline_path=str(baseline_file), lang="en", batch_size=16)
    _assert_equal(ours, ids, columns)
    assert digest.endswith("-custom-rescaled") and ours.info["hash"] == digest


def test_layer_changes_the_number(data, tiny_bert) -> None:
    one = BertScore(model=str(tiny_bert), num_layers=1).compute(*data)
    two = BertScore(model=str(tiny_bert), num_layers=2).compute(*data)
    assert one.corpus["bertscore_f1"] != two.corpus["bertscore_f1"]
    assert "_L1_" in one.info["hash"] and "_L2_" in two.info["hash"]


def test_configuration_errors(tiny_bert, tmp_path) -> None:
    with pytest.raises(AbductError, match="num_layers is required"):
        BertScore(model=str(tiny_bert))
    with pytest.raises(AbductError, match="no rescaling baseline"):
        BertScore(model=str(tiny_bert), num_layers=2, rescale_with_baseline=True)
    with pytest.raises(AbductError, match="could not load model"):
        BertScore(model=str(tmp_path / "missing-model"), num_layers=2)


def test_cli_prints_hash(data, tiny_bert, tmp_path, capsys) -> None:
    predictions, references = data
    (tmp_path / "p.json").write_text(json.dumps(predictions))
    (tmp_path / "r.json").write_text(json.dumps(references))
    code = main(["metric", "bertscore", "--predictions", str(tmp_path / "p.json"), "--references",
                 str(tmp_path / "r.json"), "-o", f"model={tiny_bert}", "-o", "num_layers=2", "-o", "batch_size=4",
                 "--json"])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    ids, columns, digest = _direct(data, tiny_bert, num_layers=2, batch_size=4)
    assert out["bertscore_hash"] == digest
    assert abs(out["bertscore_f1"] - float(np.mean(columns[2]))) <= TOL


class TestBertScoreContract(MetricContract):
    @pytest.fixture(autouse=True)
    def _model(self, tiny_bert):
        self.model_dir = tiny_bert

    def make_metric(self):
        return BertScore(model=str(self.model_dir), num_layers=2)
