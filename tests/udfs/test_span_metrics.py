import numpy as np
import pytest

from tests.udfs.metric_reference import span_recall as ref_recall
from tests.udfs.metric_reference import tbc as ref_tbc
from udfs.metrics.span_recall import span_coverage, span_recall
from udfs.metrics.token_budget import token_budget_coverage


def test_span_recall_hand_case():
    # spans [0,100) (60% covered by [0,60)) and [200,300) (40% by [260,300)); third span untouched
    rs, re = [[0, 260, 500]], [[60, 300, 600]]
    ss, se = [[0, 200, 1000]], [[100, 300, 1100]]
    np.testing.assert_allclose(span_coverage(rs, re, ss, se)[:3], [0.6, 0.4, 0.0])
    assert span_recall(rs, re, ss, se)[0] == pytest.approx(1 / 3)
    assert span_recall(rs, re, ss, se, k=1)[0] == pytest.approx(1 / 3)
    # union: two chunks of 30% each on the same span reach the threshold together, not alone
    assert span_recall([[0, 30]], [[30, 60]], [[0]], [[100]])[0] == 1.0
    assert span_recall([[0, 30]], [[30, 60]], [[0]], [[100]], k=1)[0] == 0.0


def test_token_budget_hand_case():
    # ranked chunks with tokens 300, 300, 100: budget 512 takes only the first (the second would exceed)
    rs, re, tok = [[0, 100, 200]], [[100, 200, 300]], [[300, 300, 100]]
    ss, se = [[50, 80]], [[150, 250]]  # overlapping spans: gold = [50,250), 200 chars
    assert token_budget_coverage(rs, re, tok, ss, se, 512)[0] == pytest.approx(50 / 200)
    assert token_budget_coverage(rs, re, tok, ss, se, 600)[0] == pytest.approx(150 / 200)
    assert token_budget_coverage(rs, re, tok, ss, se, 700)[0] == pytest.approx(1.0)
    assert token_budget_coverage(rs, re, tok, ss, se, 299)[0] == 0.0


def test_prefix_tokens_are_charged():
    rs, re, ss, se = [[0, 100]], [[100, 200]], [[0]], [[200]]
    assert token_budget_coverage(rs, re, [[250, 250]], ss, se, 512)[0] == 1.0
    assert token_budget_coverage(rs, re, [[250 + 20, 250 + 20]], ss, se, 512)[0] == 0.5


def test_against_character_reference():
    rng = np.random.default_rng(5)
    cases = []
    for _ in range(300):
        n = int(rng.integers(0, 15))
        a = rng.integers(0, 400, n)
        ranking = [(int(x), int(x + rng.integers(0, 80))) for x in a]
        tokens = [int(t) for t in rng.integers(0, 200, n)]
        spans = [(int(s), int(s + rng.integers(1, 100))) for s in rng.integers(0, 400, int(rng.integers(1, 7)))]
        cases.append((ranking, tokens, spans))
    rs = [[a for a, _ in c[0]] for c in cases]
    re = [[b for _, b in c[0]] for c in cases]
    tok = [c[1] for c in cases]
    ss = [[a for a, _ in c[2]] for c in cases]
    se = [[b for _, b in c[2]] for c in cases]
    for k in (5, 50):
        np.testing.assert_allclose(span_recall(rs, re, ss, se, k), [ref_recall(r, s, k) for r, _, s in cases])
    for budget in (0, 512, 1024, 2048):
        got = token_budget_coverage(rs, re, tok, ss, se, budget)
        np.testing.assert_allclose(got, [ref_tbc(r, t, s, budget) for r, t, s in cases], atol=1e-12)
        assert ((got >= 0) & (got <= 1)).all()
