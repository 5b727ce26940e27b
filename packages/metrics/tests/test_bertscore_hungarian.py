"""bertscore-hungarian: one-to-one matching checked by hand and by brute force, BERTScore pairs
equal to bert_score.score run directly (gold as candidate, precision), on tiny local models."""

from __future__ import annotations

import itertools
import json
import shutil
import warnings
from pathlib import Path

import bert_score
import numpy as np
import pytest
from scipy.optimize import linear_sum_assignment

from abduct import Metric, Settings
from abduct.host import get_registry
from abduct_metrics.matching import match_one_to_one
from abduct_metrics.responses import split_responses
from abduct_metrics.testing import build_tiny_distilbert
from abduct_testing import MetricContract, hub_snapshot, main, unreachable_hub

TOL = 1e-9
AVG, MAX = "bertscore_hungarian_avg", "bertscore_hungarian_max"


def create(spec: str) -> Metric:
    metric: Metric = get_registry().create("metric", spec, Settings(device="cpu", batch_size=8))
    return metric


# -- the matching, on fixed matrices ------------------------------------------------------------
@pytest.mark.parametrize(("matrix", "pairs", "avg", "top"), [
    # more responses than gold sentences: the third response is left over
    ([[0.2, 0.9, 0.4], [0.8, 0.7, 0.1]], [(0, 1), (1, 0)], (0.9 + 0.8) / 2, 0.9),
    # more gold sentences than responses: gold 0 is left over, although its 0.5 beats gold 1's 0.6 on column 0 ...
    ([[0.5, 0.1], [0.6, 0.3], [0.2, 0.9]], [(1, 0), (2, 1)], (0.6 + 0.9) / 2, 0.9),
    # ... one to one: the greedy choice (0.9 for both) is not allowed
    ([[0.9, 0.8], [0.9, 0.1]], [(0, 1), (1, 0)], (0.8 + 0.9) / 2, 0.9),
    ([[0.3, 0.8, 0.1]], [(0, 1)], 0.8, 0.8),
    ([[0.4], [0.7], [0.2]], [(1, 0)], 0.7, 0.7),
])
def test_hand_computed_matchings(matrix, pairs, avg, top) -> None:
    found = match_one_to_one(np.array(matrix))
    assert [(i, j) for i, j, _ in found.pairs] == pairs
    assert abs(found.avg - avg) <= TOL and found.max == top


def test_tied_optima_take_the_highest_pair_whatever_the_order() -> None:
    """0.9 + 0.2 and 0.5 + 0.6 tie (up to float rounding): avg is 0.55 either way; scipy's max
    is 0.6 or 0.9 depending on the row order, ours is 0.9 in every order."""
    base = np.array([[0.9, 0.5], [0.6, 0.2]])
    scipy_max = set()
    for rows, cols in itertools.product(itertools.permutations(range(2)), repeat=2):
        matrix = base[list(rows)][:, list(cols)]
        r, c = linear_sum_assignment(matrix, maximize=True)
        scipy_max.add(float(matrix[r, c].max()))
        found = match_one_to_one(matrix)
        assert abs(found.avg - 0.55) <= TOL and found.max == 0.9
    assert scipy_max == {0.6, 0.9}  # the tie is real: the official code's max depends on the order


def _brute_force(matrix: np.ndarray) -> tuple[float, float]:
    """Best total over every one-to-one assignment, and the highest pair among the best ones."""
    flipped = matrix if matrix.shape[0] <= matrix.shape[1] else matrix.T
    k = flipped.shape[0]
    totals = {}
    for cols in itertools.permutations(range(flipped.shape[1]), k):
        values = [flipped[i, j] for i, j in enumerate(cols)]
        totals[cols] = (sum(values), max(values))
    best = max(t for t, _ in totals.values())
    return best / k, max(m for t, m in totals.values() if t >= best - 1e-9)


def test_equals_brute_force_on_matrices_full_of_ties() -> None:
    rng = np.random.default_rng(0)
    for _ in range(300):
        matrix = rng.integers(0, 4, size=(int(rng.integers(1, 5)), int(rng.integers(1, 5)))) / 4
        found = match_one_to_one(matrix)
        avg, top = _brute_force(matrix)
        assert abs(found.avg - avg) <= TOL and found.max == top, matrix
        assert len(found.pairs) == min(matrix.shape)
        assert len({i for i, _, _ in found.pairs}) == len({j for _, j, _ in found.pairs}) == len(found.pairs)


def test_a_unique_optimum_is_scipys() -> None:
    rng = np.random.default_rng(1)
    for _ in range(100):
        matrix = rng.random((int(rng.integers(1, 6)), int(rng.integers(1, 6))))
        r, c = linear_sum_assignment(matrix, maximize=True)
        found = match_one_to_one(matrix)
        assert [(i, j) for i, j, _ in found.pairs] == sorted(zip(r.tolist(), c.tolist()))
        assert found.avg == pytest.approx(float(matrix[r, c].mean()), abs=TOL)
        assert found.max == float(matrix[r, c].max())


def test_an_empty_set_has_no_pairs() -> None:
    for shape in ((0, 3), (2, 0), (0, 0)):
        assert match_one_to_one(np.zeros(shape)) == match_one_to_one(np.zeros((0, 0)))
        assert match_one_to_one(np.zeros(shape)).avg == 0.0 == match_one_to_one(np.zeros(shape)).max


# -- with the real bert-score --------------------------------------------------------------------
GOLDS = {
    "q1": ["a man rides a horse in the snow", "the dog plays with a red ball", "two people are sitting"],
    "q2": ["a woman is standing on the beach"],
    "q3": ["the cat is on the table", "a young man is running"],
}
SAID = {
    "q1": "A man is riding a white horse. The dog is playing.",  # 3 gold, 2 responses
    "q2": "1. a woman stands in the water\n2. the woman is sitting on the beach\n3. a dog runs",  # 1 gold, 3
    "q3": "- the cat is on the table\n- the cat is on the table",  # a duplicated response
}


def _direct_precision(model_dir: Path, layers: int, golds: list[str], responses: list[str]) -> np.ndarray:
    """bert_score.score with every gold sentence as the candidate against every response."""
    cands = [g for g in golds for _ in responses]
    refs = [r for _ in golds for r in responses]
    p, _, _ = bert_score.score(cands, refs, model_type=str(model_dir), num_layers=layers, device="cpu")
    return p.double().numpy().reshape(len(golds), len(responses))


@pytest.fixture(scope="module")
def scored(tiny_bert):
    metric = create(f"bertscore-hungarian,model={tiny_bert},num_layers=2")
    return metric, metric.compute(SAID, GOLDS)


def test_pairs_are_bert_score_precision_with_gold_as_candidate(scored, tiny_bert) -> None:
    _, result = scored
    for key, golds in GOLDS.items():
        responses = split_responses(SAID[key])
        assert result.info["responses"][key] == responses
        matrix = _direct_precision(tiny_bert, 2, golds, responses)
        avg, top = _brute_force(matrix)
        assert abs(result.per_sample[key][AVG] - avg) <= TOL and abs(result.per_sample[key][MAX] - top) <= TOL
        assert result.per_sample[key]["matched_pairs"] == min(len(golds), len(responses))
        for i, j, score in result.info["pairs"][key]:
            assert abs(score - matrix[int(i), int(j)]) <= TOL
    for key in (AVG, MAX):
        assert abs(result.corpus[key] - np.mean([row[key] for row in result.per_sample.values()])) <= TOL
    assert result.corpus[AVG] < result.corpus[MAX]


def test_gold_as_candidate_precision_is_the_responses_recall(tiny_bert) -> None:
    """The side matters: P(gold -> response) = R(response -> gold), not P(response -> gold)."""
    golds, responses = GOLDS["q1"], split_responses(SAID["q1"])
    precision = _direct_precision(tiny_bert, 2, golds, responses)
    _, recall, _ = bert_score.score([r for _ in golds for r in responses], [g for g in golds for _ in responses],
                                    model_type=str(tiny_bert), num_layers=2, device="cpu")
    np.testing.assert_allclose(precision.ravel(), recall.double().numpy(), atol=1e-6)
    swapped = _direct_precision(tiny_bert, 2, responses, golds).T
    assert np.abs(precision - swapped).max() > 1e-3


def test_order_and_duplicates_do_not_change_the_numbers(scored) -> None:
    metric, result = scored
    shuffled = {k: "\n".join(f"- {s}" for s in reversed(split_responses(text))) for k, text in SAID.items()}
    again = metric.compute(shuffled, {k: list(reversed(v)) for k, v in GOLDS.items()})
    for key in GOLDS:
        for value in (AVG, MAX):
            assert abs(again.per_sample[key][value] - result.per_sample[key][value]) <= 1e-6
    # q3's two identical responses tie on every pair: the pair scores are the same either way
    assert result.info["responses"]["q3"] == ["the cat is on the table"] * 2


def test_empty_sets_score_zero_and_are_counted(scored) -> None:
    metric, _ = scored
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = metric.compute({"a": "   ", "b": "A dog runs."}, {"a": ["a dog"], "b": ["a dog runs"]})
    assert result.per_sample["a"] == {AVG: 0.0, MAX: 0.0, "matched_pairs": 0.0}
    assert result.info["empty_sets"] == 1 and result.info["empty_ids"] == ["a"]
    assert result.corpus[AVG] == pytest.approx(result.per_sample["b"][AVG] / 2)
    assert any("record 'a'" in str(w.message) and "counted" in str(w.message) for w in caught)
    with pytest.warns(UserWarning, match="record 'c'"):
        blank_gold = metric.score_sets({"c": ["  "]}, {"c": ["a dog"]})
    assert blank_gold.per_sample["c"][AVG] == 0.0 and blank_gold.info["empty_sets"] == 1


def test_configuration_is_recorded(scored, tiny_bert) -> None:
    _, result = scored
    config = result.info["configuration"]
    assert config["model"] == str(tiny_bert) and config["num_layers"] == 2
    assert (config["idf"], config["rescale_with_baseline"]) == (False, False)
    assert (config["candidate"], config["reference"], config["score"]) == ("gold", "response", "precision")
    assert "_L2_no-idf_" in result.info["hash"] and result.info["hash"].endswith("_hungarian_gold-candidate_P")


def test_split_modes(tiny_bert) -> None:
    whole = create(f"bertscore-hungarian,model={tiny_bert},num_layers=2,split=none")
    result = whole.compute({"a": "A man rides. A dog plays."}, {"a": ["a man rides", "a dog plays"]})
    assert result.info["responses"]["a"] == ["A man rides. A dog plays."]
    assert result.per_sample["a"]["matched_pairs"] == 1.0


def test_defaults_are_distilbert_layer_5_from_the_hub_cache(tmp_path) -> None:
    """The official setting: distilbert-base-uncased at bert-score's layer for it (5); here a
    tiny random DistilBERT stands in the hub cache under that name (no download)."""
    model_dir = build_tiny_distilbert(tmp_path / "tiny-distilbert")
    with unreachable_hub(tmp_path / "hf-cache") as cache:
        snapshot = hub_snapshot(cache, "distilbert-base-uncased")
        for file in model_dir.iterdir():
            shutil.copy(file, snapshot / file.name)
        result = create("bertscore-hungarian").compute({"q": SAID["q1"]}, {"q": GOLDS["q1"]})
    assert result.info["configuration"]["model"] == "distilbert-base-uncased"
    assert result.info["configuration"]["num_layers"] == 5 and "_L5_" in result.info["hash"]
    matrix = _direct_precision(model_dir, 5, GOLDS["q1"], split_responses(SAID["q1"]))
    assert abs(result.corpus[AVG] - _brute_force(matrix)[0]) <= TOL


def test_cli_prints_avg_max_and_hash(tiny_bert, tmp_path, capsys) -> None:
    (tmp_path / "p.json").write_text(json.dumps(SAID))
    (tmp_path / "r.json").write_text(json.dumps(GOLDS))
    files = ["--predictions", str(tmp_path / "p.json"), "--references", str(tmp_path / "r.json"), "--json"]
    assert main(["metric", f"bertscore-hungarian,model={tiny_bert},num_layers=2", *files]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {AVG, MAX, "bertscore_hungarian_hash"} and out[AVG] <= out[MAX]
    assert main(["metric", f"bertscore-hungarian,model={tiny_bert},num_layers=2,split=words", *files]) == 2
    assert "'words' is not one of items, lines, none" in capsys.readouterr().err


@pytest.mark.parametrize(("text", "responses"), [
    ('["A man falls.", "He slips", ""]', ["A man falls.", "He slips"]),
    ("```python\n['x y', 'z']\n```", ["x y", "z"]),
    ('[{"Outcome": "o", "Explanation": "he slips"}, {"Outcome": "p"}]', ["he slips", "p"]),
    ("Three scenarios:\n1. The man falls.\n2) He slips\n   on the ice.\n(3) A dog runs.",
     ["The man falls.", "He slips on the ice.", "A dog runs."]),
    ("**Scenario 1:** he falls\n**Scenario 2:** he jumps", ["he falls", "he jumps"]),
    ("- a\n* b\n• c", ["a", "b", "c"]),
    ("He falls.\nHe gets up.", ["He falls.", "He gets up."]),
    ('He falls. "Ouch!" he says. 3 dogs bark? then rain', ["He falls.", '"Ouch!" he says.', "3 dogs bark? then rain"]),
    ("[laughs] he falls. Then he cries", ["[laughs] he falls.", "Then he cries"]),
    ("  \n ", []),
])
def test_split_responses(text, responses) -> None:
    assert split_responses(text) == responses


class TestBertScoreHungarianContract(MetricContract):
    @pytest.fixture(autouse=True)
    def _model(self, tiny_bert):
        self.model_dir = tiny_bert

    def make_metric(self):
        return create(f"bertscore-hungarian,model={self.model_dir},num_layers=2")
