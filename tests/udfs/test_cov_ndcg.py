import math

import numpy as np
import pytest

from tests.udfs.metric_reference import dcg as ref_dcg
from tests.udfs.metric_reference import greedy_idcg as ref_idcg
from tests.udfs.metric_reference import greedy_order
from udfs.metrics.cov_ndcg import cov_dcg, cov_idcg, cov_ndcg


def test_worked_example():
    ranking_s, ranking_e = [[0, 40, 0]], [[60, 100, 0]]  # [0,60), [40,100), then nothing
    spans_s, spans_e = [[0]], [[100]]
    dcg = cov_dcg(ranking_s, ranking_e, spans_s, spans_e)[0]
    idcg = cov_idcg([[0, 40]], [[60, 100]], spans_s, spans_e)[0]
    assert dcg == pytest.approx(0.6 + 0.4 / math.log2(3), abs=1e-12)
    assert round(dcg, 3) == 0.852 and round(idcg, 3) == 0.852
    assert cov_ndcg(ranking_s, ranking_e, spans_s, spans_e, [[0, 40]], [[60, 100]])[0] == pytest.approx(1.0)
    # A chunk covering the whole span joins the condition: the ideal becomes 1.0, the ranking scores less.
    with_full = cov_ndcg(ranking_s, ranking_e, spans_s, spans_e, [[0, 40, 0]], [[60, 100, 100]])[0]
    assert with_full == pytest.approx(dcg / 1.0) and with_full < 1.0


def test_hand_cases_two_spans_and_other_document():
    # spans [10,20) and [50,90); ranking: other-doc chunk (empty), [0,30), [40,70), [60,100)
    spans_s, spans_e = [[10, 50]], [[20, 90]]
    rs, re = [[0, 0, 40, 60]], [[0, 30, 70, 100]]
    g2 = (1.0 + 0.0) / 2  # rank 2 covers span 1 fully
    g3 = (0.0 + 20 / 40) / 2  # rank 3 covers [50,70) of span 2
    g4 = (0.0 + 20 / 40) / 2  # rank 4 newly covers [70,90) only ([60,70) already covered)
    expect = g2 / math.log2(3) + g3 / math.log2(4) + g4 / math.log2(5)
    assert cov_dcg(rs, re, spans_s, spans_e)[0] == pytest.approx(expect, abs=1e-12)
    # k cuts the list: only ranks 1..2 count
    assert cov_dcg(rs, re, spans_s, spans_e, k=2)[0] == pytest.approx(g2 / math.log2(3), abs=1e-12)


def test_idcg_zero_gives_zero():
    assert cov_ndcg([[0]], [[10]], [[50]], [[60]], [[0, 10]], [[10, 20]])[0] == 0.0


def test_bad_spans_raise():
    with pytest.raises(ValueError, match="no gold spans"):
        cov_dcg([[0]], [[10]], [[]], [[]])
    with pytest.raises(ValueError, match="char_end <= char_start"):
        cov_dcg([[0]], [[10]], [[5]], [[5]])


def _random_case(rng, tiling):
    doc_len = int(rng.integers(50, 400))
    if tiling:
        cuts = np.unique(np.concatenate([[0, doc_len], rng.integers(1, doc_len, int(rng.integers(1, 12)))]))
        pool = [(int(a), int(b)) for a, b in zip(cuts[:-1], cuts[1:])]
    else:
        pool = []
        for _ in range(int(rng.integers(1, 12))):
            a = int(rng.integers(0, doc_len - 1))
            pool.append((a, int(rng.integers(a + 1, doc_len + 1))))
    spans = []
    for _ in range(int(rng.integers(1, 7))):
        s = int(rng.integers(0, doc_len - 1))
        spans.append((s, int(rng.integers(s + 1, min(doc_len, s + 120) + 1))))
    ranking = [pool[i] for i in rng.permutation(len(pool))]
    ranking = ranking[: int(rng.integers(0, len(ranking) + 1))]
    ranking += [(0, 0)] * int(rng.integers(0, 3))  # other-document chunks
    rng.shuffle(ranking)
    return ranking, spans, pool


def _cols(rows):
    return [[a for a, _ in r] for r in rows], [[b for _, b in r] for r in rows]


@pytest.mark.parametrize("tiling", [True, False])
def test_against_character_reference(tiling):
    rng = np.random.default_rng(11 if tiling else 12)
    cases = [_random_case(rng, tiling) for _ in range(300)]
    rs, re = _cols([c[0] for c in cases])
    ss, se = _cols([c[1] for c in cases])
    ps, pe = _cols([c[2] for c in cases])
    for k in (3, 10):
        dcg = cov_dcg(rs, re, ss, se, k)
        idcg = cov_idcg(ps, pe, ss, se, k)
        np.testing.assert_allclose(dcg, [ref_dcg(r, s, k) for r, s, _ in cases], atol=1e-12)
        np.testing.assert_allclose(idcg, [ref_idcg(p, s, k) for _, s, p in cases], atol=1e-12)
        score = cov_ndcg(rs, re, ss, se, ps, pe, k)
        assert ((score >= 0) & (score <= 1)).all()
        if tiling:  # greedy is optimal on disjoint pools: no cap needed
            assert (dcg <= idcg + 1e-12).all()


def test_greedy_ideal_order_scores_exactly_one_and_tail_is_ignored():
    rng = np.random.default_rng(3)
    for tiling in (True, False):
        for _ in range(100):
            _, spans, pool = _random_case(rng, tiling)
            order = greedy_order(pool, spans, 10)
            if not order:
                continue
            tail = [pool[int(i)] for i in rng.integers(0, len(pool), 5)]
            rs, re = _cols([order + tail])
            ss, se = _cols([spans])
            ps, pe = _cols([pool])
            # the tail adds nothing: greedy stopped because no chunk adds coverage, or k is reached
            assert cov_ndcg(rs, re, ss, se, ps, pe, 10)[0] == pytest.approx(1.0, abs=1e-12)
            k = len(order)
            base = cov_ndcg(rs, re, ss, se, ps, pe, k)[0]
            assert base == pytest.approx(1.0, abs=1e-12)
            # anything below rank k changes nothing
            rs2, re2 = _cols([order + [(0, 0)] * 7])
            assert cov_ndcg(rs2, re2, ss, se, ps, pe, k)[0] == base


def test_each_gold_character_counted_once():
    # the same chunk ranked twice earns nothing the second time
    once = cov_dcg([[0]], [[50]], [[0]], [[100]])[0]
    twice = cov_dcg([[0, 0]], [[50, 50]], [[0]], [[100]])[0]
    assert once == twice == pytest.approx(0.5)
    # full coverage of every span sums to at most 1 undiscounted gain
    assert cov_dcg([[0, 0, 20]], [[100, 100, 80]], [[0, 30]], [[50, 100]], k=1)[0] == pytest.approx(1.0)


def test_an_empty_chunk_cannot_hide_an_overlap_from_the_greedy_ideal():
    # pool [60,70), [50,50) (empty), [0,100) over one span [0,100): greedy picks [0,100) first -> IDCG 1
    assert cov_idcg([[60, 50, 0]], [[70, 50, 100]], [[0]], [[100]], 10)[0] == pytest.approx(1.0)
