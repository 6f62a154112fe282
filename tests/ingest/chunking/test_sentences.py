"""The rule-based sentence splitter: hand cases for each rule, and tiling offsets."""

from __future__ import annotations

import numpy as np
import pytest

from ingest.chunking.sentences import sentence_starts, split_sentences


def pieces(text: str) -> list[str]:
    return [text[s:e] for s, e in split_sentences(text)]


@pytest.mark.parametrize(
    "text, expected",
    [
        ("One. Two! Three? Four", ["One. ", "Two! ", "Three? ", "Four"]),
        # abbreviations, et al., figure references and decimals never split
        ("Smith et al. (2019) use e.g. BERT. Next.", ["Smith et al. (2019) use e.g. BERT. ", "Next."]),
        ("See Fig. 3 and Eq. 2 for details. Then stop.", ["See Fig. 3 and Eq. 2 for details. ", "Then stop."]),
        ("Accuracy rose by 3.5 points. It works.", ["Accuracy rose by 3.5 points. ", "It works."]),
        ("Work by J. Smith in the U.S. Army. Fine.", ["Work by J. Smith in the U.S. Army. ", "Fine."]),
        ("The value, i.e. Five, is odd. Yes.", ["The value, i.e. Five, is odd. ", "Yes."]),
        # citations before the period are words: the period ends the sentence
        ("As shown in [12]. We agree.", ["As shown in [12]. ", "We agree."]),
        ("As shown BIBREF3. We agree.", ["As shown BIBREF3. ", "We agree."]),
        ("Prior work (Lee, 2020). Ours differs.", ["Prior work (Lee, 2020). ", "Ours differs."]),
        # a lowercase continuation never splits; a digit or an opening bracket/quote before a capital does
        ("It costs approx. ten. Done.", ["It costs approx. ten. ", "Done."]),
        ("It ended in 2019. 2020 was new.", ["It ended in 2019. ", "2020 was new."]),
        ('He said "no." Then left.', ['He said "no." ', "Then left."]),
        ("Done. (See below.) Next.", ["Done. ", "(See below.) ", "Next."]),
        ("Wait... What?", ["Wait... ", "What?"]),
        ("No terminal punctuation", ["No terminal punctuation"]),
        ("Trailing space. ", ["Trailing space. "]),
        ("etc. is not an abbreviation here etc. Next one.", ["etc. is not an abbreviation here etc. ", "Next one."]),
    ],
)
def test_rules(text, expected):
    assert pieces(text) == expected


def test_offsets_tile_and_shift():
    text = "Alpha beta. Gamma delta!  Epsilon."
    spans = split_sentences(text, offset=100)
    assert spans[0][0] == 100 and spans[-1][1] == 100 + len(text)
    assert all(a[1] == b[0] for a, b in zip(spans, spans[1:]))
    assert [text[s - 100 : e - 100] for s, e in spans] == ["Alpha beta. ", "Gamma delta!  ", "Epsilon."]
    assert split_sentences("") == []


def test_random_texts_tile_and_are_deterministic():
    rng = np.random.default_rng(7)
    alphabet = list("abcXYZ 12.!?()[]\"'") + [" e.g. ", " Fig. ", " et al. ", ". The ", "\u00a0"]
    for _ in range(300):
        text = "".join(rng.choice(alphabet, size=int(rng.integers(1, 80))))
        spans = split_sentences(text)
        assert spans[0][0] == 0 and spans[-1][1] == len(text)
        assert all(s < e for s, e in spans) and all(a[1] == b[0] for a, b in zip(spans, spans[1:]))
        assert sentence_starts(text) == sentence_starts(text)
