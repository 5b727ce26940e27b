"""What the confidence intervals of the caption metrics resample: BLEU's per-example
sufficient statistics recompute pycocoevalcap's corpus BLEU exactly, and CIDEr-D's per-example
scores (document frequencies of the full set held fixed) approximate re-running CIDEr-D on a
resample within a bound stated here and in docs/reading-the-numbers.md."""

from __future__ import annotations

import json

import numpy as np
import pytest
from pycocoevalcap.bleu.bleu import Bleu
from pycocoevalcap.cider.cider import Cider

from abduct import UnitScores
from abduct.host import metric_of_rows
from abduct_metrics._coco import CocoCaptionMetric, Tokenised, tokenize_all
from abduct_metrics._common import SCALE
from abduct_metrics.captions import bleu_statistics
from abduct_metrics.testing import generated_data
from abduct_testing import shared_data_dir

TOL = 1e-9


def value(scores: UnitScores) -> float:
    """The metric over every unit, as the run reports it."""
    return float(metric_of_rows(scores)(np.asarray(scores.values, dtype=np.float64)))


def _var_val(n: int) -> tuple[dict[str, str], dict[str, list[str]]]:
    """Real sentences: VAR val events, each "predicted" by the next event of its chain."""
    shared = shared_data_dir()
    path = None if shared is None else shared / "var" / "var_val_v1.0.json"
    if path is None or not path.is_file():
        pytest.skip("the VAR annotation files are not here")
    chains = [[e["sentence"] for e in x["events"]] for x in json.loads(path.read_text()).values()]
    pairs = [(c[i], c[(i + 1) % len(c)]) for c in chains if len(c) > 1 for i in range(len(c))][:n]
    return {f"e{i}": p for i, (_, p) in enumerate(pairs)}, {f"e{i}": [r] for i, (r, _) in enumerate(pairs)}


@pytest.fixture(scope="module", params=["var-val", "generated"])
def tokens(request: pytest.FixtureRequest) -> tuple[Tokenised, Tokenised]:
    data = _var_val(300) if request.param == "var-val" else generated_data(120, seed=4, related=True)
    return tokenize_all(*data)


def test_bleu_statistics_recompute_pycocoevalcap_corpus_bleu(tokens: tuple[Tokenised, Tokenised]) -> None:
    gts, res = tokens
    corpus, _ = Bleu(4).compute_score(gts, res, verbose=0)
    rows = bleu_statistics(gts, res)
    assert list(rows) == list(res) and all(len(r) == 10 for r in rows.values())
    for n in range(1, 5):
        assert value(UnitScores.corpus("example", f"bleu-{n}", rows)) == pytest.approx(corpus[n - 1], abs=TOL)
    # a subset (what a resample is): its summed statistics give pycocoevalcap's BLEU of the subset
    half = list(res)[::2]
    sub, _ = Bleu(4).compute_score({k: gts[k] for k in half}, {k: res[k] for k in half}, verbose=0)
    assert value(UnitScores.corpus("example", "bleu-4", {k: rows[k] for k in half})) == pytest.approx(sub[3], abs=TOL)
    assert 0 < corpus[3] < corpus[0] < 1  # not a degenerate case


def test_the_metric_hands_its_bleu_statistics_over() -> None:
    predictions, references = generated_data(20, seed=5, related=True)
    result = CocoCaptionMetric(("bleu",)).compute(predictions, references)
    rows = result.info["bleu_statistics"]
    assert value(UnitScores.corpus("example", "bleu-4", rows, SCALE)) == pytest.approx(result.corpus["bleu_4"], abs=SCALE * TOL)


def test_cider_with_fixed_document_frequencies_is_close_to_rerunning_it(tokens: tuple[Tokenised, Tokenised]) -> None:
    """The interval's CIDEr-D of a resample is the mean of per-example scores whose document
    frequencies come from the full set; CIDEr-D re-run on the resample counts them anew, and a
    resample's repeated references lower their n-grams' idf (a bootstrap artefact: re-running
    is not the truth either). On eight resamples the two differ by under 5% of the full-set
    value, and the difference varies far less than the resampled values do, so the interval's
    width is nearly the same either way."""
    gts, res = tokens
    full, scores = Cider().compute_score(gts, res)
    per = np.asarray(scores, dtype=float)
    ids = list(res)
    rng = np.random.default_rng(0)
    errors, means = [], []
    for _ in range(8):
        drawn = rng.integers(0, len(ids), len(ids))
        again, _ = Cider().compute_score({str(j): gts[ids[i]] for j, i in enumerate(drawn)},
                                         {str(j): res[ids[i]] for j, i in enumerate(drawn)})
        means.append(per[drawn].mean())
        errors.append(again - means[-1])
    worst = float(np.max(np.abs(errors)))
    print(f"CIDEr-D, re-run minus fixed document frequencies: max abs error {worst:.5f}, mean {np.mean(errors):.5f}, "
          f"sd {np.std(errors):.5f}; full value {full:.4f}, sd of the resampled values {np.std(means):.4f}")
    assert 0 < worst <= 0.05 * full  # the approximation is real, and small
    assert np.std(errors) <= 0.25 * np.std(means)
