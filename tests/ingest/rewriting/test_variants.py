"""The variant filter and answer parsing on hand-made answers: every text gets a reason, nothing is silent."""

from __future__ import annotations

from collections import Counter

import pytest

from ingest.rewriting.answers import normalize, passage_text, question_lines
from ingest.rewriting.variants import decide, screen


@pytest.mark.parametrize(
    "answer, n, lines, counts",
    [
        ("", 3, [], {"empty_answer": 1}),
        ("   \n\n ", 3, [], {"empty_answer": 1}),
        ("Sure! Here are some:\n:\n??", 3, [], {"unusable_line": 3, "no_usable_line": 1}),
        (
            "1. Who wrote Dune?\n2) 'When was Dune published?'\n- * Where was Herbert born?\nQ4: Is it a film?",
            3,
            ["Who wrote Dune?", "When was Dune published?", "Where was Herbert born?"],
            {"beyond_n": 1},
        ),
        ("Question 1: What is X?", 1, ["What is X?"], {}),
        ("Paris", 1, [], {"unusable_line": 1, "no_usable_line": 1}),  # one word is not a question
        # a leading year and colon is the question's, not a list marker; nor is a decimal
        ("1984: which party won?", 1, ["1984: which party won?"], {}),
        ("3.5 million people live in which city?", 1, ["3.5 million people live in which city?"], {}),
        ("1) 1984: which party won?\n(2) Who led it?", 2, ["1984: which party won?", "Who led it?"], {}),
        # preambles are skipped, not taken as the variant; a question after a preamble's colon is kept
        (
            "Here is a comparison question:\nIs Tylenol safer than Advil?",
            1,
            ["Is Tylenol safer than Advil?"],
            {"unusable_line": 1},
        ),
        ("Here is a comparison question: Is Tylenol safer than Advil?", 1, ["Is Tylenol safer than Advil?"], {}),
        (
            "Sure! Here are three sibling questions.\nWhat are the side effects of ibuprofen?",
            1,
            ["What are the side effects of ibuprofen?"],
            {"unusable_line": 1},
        ),
        (
            "Certainly, below are the questions\nThe following questions ask about aspirin",
            1,
            [],
            {"unusable_line": 2, "no_usable_line": 1},
        ),
        # a question that opens like a preamble is a question; a numbered list with colons loses its numbers
        ("The following year, who won the league?", 1, ["The following year, who won the league?"], {}),
        ("1: What is X?\n2: Who made Y?", 2, ["What is X?", "Who made Y?"], {}),
        ("10:30 is when which train leaves?", 1, ["10:30 is when which train leaves?"], {}),
    ],
)
def test_question_lines(answer, n, lines, counts):
    got, c = question_lines(answer, n)
    assert got == lines and c == Counter(counts)


def test_passage_text():
    assert passage_text("Passage: The tower opened in 1889.") == ("The tower opened in 1889.", Counter())
    assert passage_text("  \n") == ("", Counter({"empty_answer": 1}))


def test_normalize():
    assert normalize('  "Who wrote  Dune?" ') == normalize("who wrote dune") == "who wrote dune"
    assert normalize("Who wrote Dune?") != normalize("Who wrote Dune 2?")


def _cands(texts, cosines, **kw):
    cands = screen("Who wrote Dune?", texts, "query", ["key"] * len(texts))
    cands[0].cosine = 1.0
    for c, cos in zip(cands[1:], cosines):
        if c.reason is None:
            c.cosine = cos
    decide(
        cands,
        **({"filtered": True, "band": (0.4, 0.9), "include_original": True, "original_searched_alongside": True} | kw),
    )
    return [(c.variant_idx, c.reason, c.kept) for c in cands]


def test_band_is_inclusive_and_identical_duplicate_are_screened():
    texts = [
        "who wrote dune",
        "Who is Frank Herbert?",
        "who is frank herbert",
        "Dune author?",
        "Best sci-fi books?",
        "Who wrote the novel Dune?",
        "Dune's writer?",
    ]
    cos = [None, 0.9, None, 0.4, 0.1, 0.95, 0.39999]
    assert _cands(texts, cos) == [
        (0, "original", True),
        (1, "identical", False),
        (2, "kept", True),
        (3, "duplicate", False),
        (4, "kept", True),
        (5, "cosine_low", False),
        (6, "cosine_high", False),
        (7, "cosine_low", False),
    ]


def test_fallback_when_nothing_survives_and_include_original():
    assert _cands(["Totally unrelated question?"], [0.1]) == [(0, "fallback", True), (1, "cosine_low", False)]
    assert _cands([], []) == [(0, "fallback", True)]  # an answer without usable lines
    assert _cands(["Who is Frank Herbert?"], [0.6], include_original=False) == [
        (0, "original", False),
        (1, "kept", True),
    ]
    # unfiltered forms (HyDE passage, Query2Doc) keep any new text; the original is only the fallback
    assert _cands(["A passage far from the query."], [0.05], filtered=False, original_searched_alongside=False) == [
        (0, "original", False),
        (1, "kept", True),
    ]


def test_screened_candidates_keep_their_call_key_and_have_no_cosine():
    cands = screen("Who wrote Dune?", ["Who wrote Dune?"], "query", ["abc"])
    assert (cands[1].reason, cands[1].cosine, cands[1].llm_call_key) == ("identical", None, "abc")
    assert cands[0].llm_call_key is None


def test_v2_prompts_ask_for_siblings_and_an_unnamed_comparison():
    """The prompts the study uses (the highest version on disk): S2 asks for sibling questions about other
    entities of the same kind, S4 for a comparison with an entity the question does not name; the v1 files
    stay for the provenance of cached answers."""
    from ingest.llm import load_prompt

    neighbor, comparative = load_prompt("rewrite_neighbor"), load_prompt("rewrite_comparative")
    assert (neighbor.key, comparative.key) == ("rewrite_neighbor.v2", "rewrite_comparative.v2")
    assert "other entities of the same kind" in neighbor.text and "ibuprofen" in neighbor.text
    assert "does not name" in comparative.text and "Advil" in comparative.text
    assert load_prompt("rewrite_neighbor", 1).key == "rewrite_neighbor.v1"
