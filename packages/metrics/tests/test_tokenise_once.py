"""Each sentence is PTB-tokenised exactly once, as COCOEvalCap drives pycocoevalcap: on text
the tokenizer rewrites (brackets, emoticons, quotes, URLs, PTB escapes, initials, ellipses,
non-ASCII), and for any mix of raw text and tokenizer output given to the public API."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pycocoevalcap.bleu.bleu import Bleu
from pycocoevalcap.cider.cider import Cider
from pycocoevalcap.rouge.rouge import Rouge
from pycocoevalcap.tokenizer.ptbtokenizer import PTBTokenizer

from abduct.host import get_registry
from abduct_metrics._coco import CocoCaptionMetric
from abduct_metrics._common import SCALE
from abduct_metrics._ptb import LINE_BREAK_WARNING, PtbTokens, as_tokens, ptb_tokenize
from abduct_testing.profiles import examples

TOL = 1e-9

# What PTB rewrites, and which a second pass rewrites again (``:)`` -> ``:-rrb-`` -> ``-rrb-``).
REWRITTEN = [
    "he smiles :) and waves (twice) at the [camera]",
    "she says \"come here\" and 'sit' {now}",
    "see http://example.com/a_b?c=1&d=2 for more",
    "the -lrb- man -rrb- walks & talks",
    "J. R. R. Tolkien meets U.S. officials at 3 p.m.",
    "wait... what?! no -- never ;)",
    "a café in Zürich — naïve déjà vu",
    "it's the dog's ball, isn't it?",
    "A. B. c d.",
    ":-) :( :-( <3",
]


def direct(predictions: dict[str, str], references: dict[str, list[str]], meteor) -> dict[str, tuple]:
    """COCOEvalCap's procedure: tokenise gts and res once each, then call the scorers on them
    (``meteor``: the session's pycocoevalcap ``Meteor()``, see conftest)."""
    tokenizer = PTBTokenizer()
    gts = tokenizer.tokenize({k: [{"caption": r} for r in references[k]] for k in predictions})
    res = tokenizer.tokenize({k: [{"caption": predictions[k]}] for k in predictions})
    return {"bleu": Bleu(4).compute_score(gts, res, verbose=0), "meteor": meteor.compute_score(gts, res),
            "rouge_l": Rouge().compute_score(gts, res), "cider": Cider().compute_score(gts, res)}


def rewritten_data() -> tuple[dict[str, str], dict[str, list[str]]]:
    n = len(REWRITTEN)
    predictions = {f"r{i}": REWRITTEN[i] for i in range(n)}
    references = {f"r{i}": [REWRITTEN[(i + 1) % n], REWRITTEN[i].replace("the", "a")] for i in range(n)}
    return predictions, references


def assert_equal_to_direct(result, theirs, ids) -> None:
    corpus, each = theirs["bleu"]
    for n in range(4):
        assert abs(result.corpus[f"bleu_{n + 1}"] - SCALE * corpus[n]) <= SCALE * TOL
        np.testing.assert_allclose([result.per_sample[k][f"bleu_{n + 1}"] for k in ids], SCALE * np.asarray(each[n]),
                                   rtol=0, atol=SCALE * TOL)
    for key in ("meteor", "rouge_l", "cider"):
        corpus, each = theirs[key]
        assert abs(result.corpus[key] - SCALE * corpus) <= SCALE * TOL
        np.testing.assert_allclose([result.per_sample[k][key] for k in ids], SCALE * np.asarray(each, float), rtol=0,
                                   atol=SCALE * TOL)


def test_second_pass_would_change_these_texts() -> None:
    """The premise of the tests below: PTB is not idempotent on this text."""
    once = ptb_tokenize(REWRITTEN)
    assert ptb_tokenize(once) != once


def test_raw_text_full_of_rewrites_equals_pycocoevalcap(reference_meteor) -> None:
    predictions, references = rewritten_data()
    result = CocoCaptionMetric().compute(predictions, references)
    assert_equal_to_direct(result, direct(predictions, references, reference_meteor), list(predictions))


def test_tokens_are_scored_as_given(reference_meteor) -> None:
    """Tokenizer output handed back (typed, or marked with ``pretokenized``) gives the values of
    the raw text, i.e. the scorers see the tokens of one pass."""
    predictions, references = rewritten_data()
    ids = list(predictions)
    res = dict(zip(ids, ptb_tokenize([predictions[k] for k in ids])))
    flat = iter(ptb_tokenize([r for k in ids for r in references[k]]))
    gts = {k: [next(flat) for _ in references[k]] for k in ids}
    theirs = direct(predictions, references, reference_meteor)
    assert_equal_to_direct(CocoCaptionMetric().compute(res, gts), theirs, ids)
    plain_res = {k: str(v) for k, v in res.items()}
    plain_gts = {k: [str(r) for r in v] for k, v in gts.items()}
    marked = get_registry().create("metric", "cider,pretokenized=true").compute(plain_res, plain_gts)
    assert abs(marked.corpus["cider"] - SCALE * theirs["cider"][0]) <= SCALE * TOL
    # unmarked, the tokens would be tokenised a second time: a different number
    again = get_registry().create("metric", "cider").compute(plain_res, plain_gts)
    assert abs(again.corpus["cider"] - SCALE * theirs["cider"][0]) > SCALE * 1e-6


FRAGMENTS = st.sampled_from(REWRITTEN + ["a dog runs", "two people sit on a bench", "the man rides a horse"])


@settings(max_examples=examples(6), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(FRAGMENTS, FRAGMENTS, st.booleans(), st.booleans()), min_size=1, max_size=5))
def test_any_mix_of_raw_and_tokenised_text_is_tokenised_once(rows) -> None:
    """Property: whichever sentences arrive as tokens, every value equals the raw text's."""
    predictions = {f"k{i}": p for i, (p, _, _, _) in enumerate(rows)}
    references = {f"k{i}": [r] for i, (_, r, _, _) in enumerate(rows)}
    ids = list(predictions)
    res_tokens = ptb_tokenize([predictions[k] for k in ids])
    ref_tokens = ptb_tokenize([references[k][0] for k in ids])
    mixed_pred = {k: (res_tokens[i] if rows[i][2] else predictions[k]) for i, k in enumerate(ids)}
    mixed_refs = {k: [ref_tokens[i] if rows[i][3] else references[k][0]] for i, k in enumerate(ids)}
    metric = CocoCaptionMetric(("bleu", "rouge-l", "cider"))
    raw = metric.compute(predictions, references)
    mixed = metric.compute(mixed_pred, mixed_refs)
    for k in ids:
        for key, value in raw.per_sample[k].items():
            assert abs(mixed.per_sample[k][key] - value) <= TOL, (k, key)


def test_tokens_type_survives_marking() -> None:
    tokens = ptb_tokenize(["A man :) walks."])
    assert isinstance(tokens[0], PtbTokens) and tokens[0] == "a man :-rrb- walks"
    assert as_tokens(tokens[0]) is tokens[0]
    assert isinstance(as_tokens("plain"), PtbTokens)


def test_pretokenized_with_clean_non_ascii_is_refused() -> None:
    from abduct import AbductError
    with pytest.raises(AbductError, match="already tokenised"):
        CocoCaptionMetric(("cider",), clean_non_ascii=True, pretokenized=True)


def test_empty_after_tokenisation_scores_zero_with_one_warning(reference_meteor) -> None:
    predictions = {"a": "...", "b": "a dog runs", "c": "a cat sits"}
    references = {"a": ["a dog runs"], "b": ["a dog runs"], "c": ["?"]}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = CocoCaptionMetric().compute(predictions, references)
    messages = [str(w.message) for w in caught if "no token" in str(w.message)]
    assert len(messages) == 1 and "'a'" in messages[0] and "1 more" in messages[0]
    for key in ("rouge_l", "cider", "meteor", "bleu_1"):
        assert result.per_sample["a"][key] <= TOL and result.per_sample["c"][key] <= TOL
    assert result.per_sample["b"]["rouge_l"] == pytest.approx(SCALE)
    assert_equal_to_direct(result, direct(predictions, references, reference_meteor), list(predictions))


@pytest.mark.parametrize("brk", ["\r", "\r\n", "\x0b", "\x0c"])
def test_line_break_inside_a_sentence_is_a_space_with_a_warning(brk) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tokens = ptb_tokenize([f"a dog{brk}runs", "a cat"])
    assert tokens == ["a dog runs", "a cat"]
    assert [str(w.message) for w in caught] == [LINE_BREAK_WARNING]


def test_newline_needs_no_warning() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert ptb_tokenize(["a dog\nruns"]) == ["a dog runs"]
    assert not caught
