"""SQuAD answer normalization, EM and F1 against hand-computed cases and the official SQuAD v1.1
evaluation logic (its normalize_answer / f1_score / exact_match_score / metric_max_over_ground_truths,
re-typed below as the reference)."""

from __future__ import annotations

import re
import string
from collections import Counter

import numpy as np
import pytest

from udfs.metrics.squad import exact_match, normalize_answer, squad_scores, token_f1


# --- the official SQuAD v1.1 evaluate script (reference) -------------------------------------------
def ref_normalize_answer(s):
    def remove_articles(text):
        return re.sub(r"\b(a|an|the)\b", " ", text)

    def white_space_fix(text):
        return " ".join(text.split())

    def remove_punc(text):
        exclude = set(string.punctuation)
        return "".join(ch for ch in text if ch not in exclude)

    def lower(text):
        return text.lower()

    return white_space_fix(remove_articles(remove_punc(lower(s))))


def ref_f1_score(prediction, ground_truth):
    prediction_tokens = ref_normalize_answer(prediction).split()
    ground_truth_tokens = ref_normalize_answer(ground_truth).split()
    common = Counter(prediction_tokens) & Counter(ground_truth_tokens)
    num_same = sum(common.values())
    if num_same == 0:
        return 0
    precision = 1.0 * num_same / len(prediction_tokens)
    recall = 1.0 * num_same / len(ground_truth_tokens)
    f1 = (2 * precision * recall) / (precision + recall)
    return f1


def ref_exact_match_score(prediction, ground_truth):
    return ref_normalize_answer(prediction) == ref_normalize_answer(ground_truth)


def ref_metric_max_over_ground_truths(metric_fn, prediction, ground_truths):
    scores_for_ground_truths = []
    for ground_truth in ground_truths:
        score = metric_fn(prediction, ground_truth)
        scores_for_ground_truths.append(score)
    return max(scores_for_ground_truths)


# ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, norm",
    [
        ("The Eiffel Tower!", "eiffel tower"),
        ("  An apple,   a PEAR and the plum. ", "apple pear and plum"),
        ("theater anthem", "theater anthem"),  # articles only as whole words
        ("U.S.A.", "usa"),
        ("rock-'n'-roll", "rocknroll"),
        ("“Curly” quotes — stay", "“curly” quotes — stay"),  # only ASCII punctuation is removed
        ("", ""),
    ],
)
def test_normalization_hand_cases(text, norm):
    assert normalize_answer(text) == norm == ref_normalize_answer(text)


def test_f1_and_em_hand_cases():
    assert token_f1("The Eiffel Tower!", "eiffel tower in Paris") == pytest.approx(2 / 3)
    assert exact_match("the  Tower.", "tower") == 1.0
    assert token_f1("a a b", "a b b") == pytest.approx(2 / 3)  # multiset overlap: c = 2, P = R = 2/3
    assert token_f1("", "") == 0.0 and exact_match("", "the") == 1.0  # v1.1: no common token -> F1 0
    em, f1 = squad_scores(["Paris", "1889"], [["paris, France", "Paris"], ["in 1887"]])
    assert em.tolist() == [1.0, 0.0] and f1.tolist() == [1.0, 0.0]


def test_equals_the_official_script_on_random_strings():
    rng = np.random.default_rng(0)
    words = [
        "the",
        "a",
        "an",
        "The",
        "Paris",
        "paris,",
        "tower",
        "Tower.",
        "1889",
        "U.S.",
        "an-other",
        "x",
        "(1)",
        "théâtre",
        "naïve",
        "AN",
        "'s",
        "",
        "  ",
    ]
    preds, golds = [], []
    for _ in range(2000):
        preds.append(" ".join(rng.choice(words, int(rng.integers(0, 6)))))
        golds.append([" ".join(rng.choice(words, int(rng.integers(0, 5)))) for _ in range(int(rng.integers(1, 4)))])
    em, f1 = squad_scores(preds, golds)
    ref_em = [ref_metric_max_over_ground_truths(ref_exact_match_score, p, g) for p, g in zip(preds, golds)]
    ref_f1 = [ref_metric_max_over_ground_truths(ref_f1_score, p, g) for p, g in zip(preds, golds)]
    np.testing.assert_array_equal(em, np.array(ref_em, dtype=float))
    np.testing.assert_allclose(f1, ref_f1, atol=1e-15)
    assert 0 < em.mean() < 1 and 0 < f1.mean() < 1


def test_no_gold_answer_is_an_error():
    with pytest.raises(ValueError, match="row 1: a NULL prediction or no gold answer"):
        squad_scores(["a", "b"], [["a"], []])
