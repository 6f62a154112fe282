"""Overlapping sentence windows (the rewriting study's ``sentence:512/50``): packing rules on hand-made
token counts, offsets and overlap on hand-made documents, and coexistence with the chunking study's sets."""

from __future__ import annotations

import numpy as np
import pytest

from ingest.chunking.sentence_windows import chunkset_name, pack_windows, sentence_chunk_stage
from ingest.chunking.stage import chunk_corpus
from ingest.chunking.tokens import count_tokens
from tests.ingest.chunking.chunk_docs import WORDS, insert_doc


@pytest.mark.parametrize(
    "tokens, size, overlap, windows",
    [
        ([100, 200, 150], 512, 50, [(0, 3)]),  # fits whole: one chunk
        ([300, 200, 20, 30, 300], 512, 50, [(0, 2), (2, 5)]),  # last unit 200 > 50: the next starts fresh
        ([200, 200, 40, 200], 512, 50, [(0, 3), (2, 4)]),  # the 40-token sentence is the overlap
        ([200, 200, 60, 200], 512, 50, [(0, 3), (3, 4)]),  # last sentence over 50 tokens: no overlap
        ([250, 20, 20, 495], 512, 50, [(0, 3), (3, 4)]),  # 20 + 495 > 512: the overlap is dropped
        ([250, 20, 20, 480], 512, 50, [(0, 3), (2, 4)]),  # 40 + 480 > 512 but 20 + 480 fits: trimmed
        ([250, 20, 20, 470], 512, 50, [(0, 3), (1, 4)]),  # 40 + 470 fits: the whole overlap kept
        ([600, 10], 512, 50, [(0, 1), (1, 2)]),  # an oversized unit is a chunk of its own
        ([30, 30, 30], 60, 30, [(0, 2), (1, 3)]),
    ],
)
def test_pack_windows(tokens, size, overlap, windows):
    got = pack_windows(np.array(tokens), size, overlap)
    assert got == windows
    for a, b in got:  # never over the size unless one unit alone is
        assert sum(tokens[a:b]) <= size or b - a == 1
    assert got[0][0] == 0 and got[-1][1] == len(tokens)
    assert all(a2 > a1 and a2 <= b1 for (a1, b1), (a2, _) in zip(got, got[1:]))  # cover in order, no gap


def test_overlap_is_trailing_units_at_most_overlap_tokens():
    tokens = np.array([100] * 4 + [10] * 6 + [100] * 4)
    windows = pack_windows(tokens, 300, 35)
    for (a1, b1), (a2, _) in zip(windows, windows[1:]):
        shared = tokens[a2:b1]
        assert shared.sum() <= 35
        if a2 > a1 + 1:  # the unit before the overlap would have pushed it over 35
            assert shared.sum() + tokens[a2 - 1] > 35 or a2 - 1 == a1


def test_chunkset_name():
    assert chunkset_name() == "sentence:512/50" and chunkset_name(256, 0) == "sentence:256/0"
    with pytest.raises(ValueError):
        chunkset_name(50, 50)


def _sentences(n: int, words: int, offset: int) -> str:
    return " ".join(
        "Then " + " ".join(WORDS[(offset + k * 7 + j) % len(WORDS)] for j in range(words)) + "." for k in range(n)
    )


def test_stage_offsets_overlap_titles_and_coexistence(con):
    short = insert_doc(con, "demo/short", "Short paper", [(1, "Intro", ["A short body. Two sentences."])])
    long_paras = [_sentences(6, 8, 0), _sentences(6, 8, 3), _sentences(6, 8, 5)]
    long = insert_doc(con, "demo/long", "Long paper", [(1, "Intro", long_paras[:1]), (1, "Rest", long_paras[1:])])
    chunk_corpus(con, "demo", show_progress=False)
    summary = sentence_chunk_stage(con, "demo", chunk_tokens=60, overlap=25)
    rows = con.execute(
        "SELECT doc_id, chunk_idx, char_start, char_end, content_tokens, section_idx FROM chunks "
        "WHERE chunkset = 'sentence:60/25' ORDER BY doc_id, chunk_idx"
    ).fetchall()
    by_doc: dict[str, list] = {}
    for r in rows:
        by_doc.setdefault(r[0], []).append(r)
    paras = dict(con.execute("SELECT doc_id, list(char_start ORDER BY para_idx) FROM paragraphs GROUP BY 1").fetchall())
    ends = dict(con.execute("SELECT doc_id, max(char_end) FROM paragraphs GROUP BY 1").fetchall())
    assert [(r[2], r[3]) for r in by_doc["demo/short"]] == [(paras["demo/short"][0], ends["demo/short"])]
    spans = [(r[2], r[3]) for r in by_doc["demo/long"]]
    assert len(spans) > 2 and spans[0][0] == paras["demo/long"][0] and spans[-1][1] == ends["demo/long"]
    for (s1, e1), (s2, e2) in zip(spans, spans[1:]):
        assert s1 < s2 < e1  # overlapping, in order (sentences of ~10 tokens: the overlap is never empty)
        assert count_tokens([long[s2:e1].strip()])[0] <= 25
    for doc_id, k, s, e, tokens, section in rows:
        text = short if doc_id == "demo/short" else long
        assert tokens == count_tokens([text[s:e].strip()])[0] and (tokens <= 60 or doc_id == "demo/short")
        assert section is None
    assert summary["multi_chunk"] == 1 and summary["single_chunk"] == 1 and summary["chunks"] == len(rows)
    prefixes = con.execute(
        "SELECT DISTINCT c.doc_id, p.prefix FROM chunk_prefixes p JOIN chunks c USING (chunk_id) "
        "WHERE c.chunkset = 'sentence:60/25' ORDER BY 1"
    ).fetchall()
    assert prefixes == [("demo/long", "Long paper "), ("demo/short", "Short paper ")]
    # the chunking study's stage leaves the sentence windows alone, and vice versa
    before = con.execute("SELECT count(*) FROM chunks WHERE chunkset <> 'sentence:60/25'").fetchone()[0]
    chunk_corpus(con, "demo", show_progress=False)
    assert con.execute("SELECT count(*) FROM chunks WHERE chunkset = 'sentence:60/25'").fetchone()[0] == len(rows)
    assert con.execute(
        "SELECT count(*) FROM chunk_prefixes p JOIN chunks c USING (chunk_id) WHERE c.chunkset = 'sentence:60/25'"
    ).fetchone()[0] == len(rows)
    sentence_chunk_stage(con, "demo", chunk_tokens=60, overlap=25)
    assert con.execute("SELECT count(*) FROM chunks WHERE chunkset <> 'sentence:60/25'").fetchone()[0] == before
    funnel = dict(con.execute("SELECT reason, n FROM funnel WHERE stage = 'chunk_sentence'").fetchall())
    assert funnel == {"input": 2, "single_chunk": 1, "multi_chunk": 1, "oversized_unit": 0}


def test_a_sentence_longer_than_the_window_is_cut_at_words(con):
    words = " ".join(f"token{j}" for j in range(300))
    text = insert_doc(con, "demo/run-on", "Run on", [(1, "Intro", [words + "."])])
    sentence_chunk_stage(con, "demo", chunk_tokens=100, overlap=10)
    spans = con.execute(
        "SELECT char_start, char_end, content_tokens FROM chunks WHERE chunkset = 'sentence:100/10' ORDER BY chunk_idx"
    ).fetchall()
    assert len(spans) > 3 and all(t <= 100 for _, _, t in spans)
    assert all(text[s - 1] == " " for s, _, _ in spans[1:])  # cut at word starts


def test_no_chunking_condition_selects_the_sentence_windows():
    import csv

    from warehouse.paths import PROJECT_ROOT

    with open(PROJECT_ROOT / "seeds" / "conditions.csv", newline="") as fh:
        chunkings = {row["chunking"] for row in csv.DictReader(fh)}
    assert chunkings == {"fixed", "structural", "doc"}  # int_condition_chunks maps these to fixed | structural:* | doc


def _windows(con, monkeypatch, additive: bool, corpus: str, size: int, overlap: int) -> tuple[list, dict]:
    """The chunk rows and funnel of ``corpus`` with sums allowed (``additive``) or every span counted on its own."""
    from ingest.chunking import sentence_windows

    monkeypatch.setattr(sentence_windows, "counts_add_at_whitespace", lambda tok: additive)
    monkeypatch.setattr(sentence_windows, "BLOCK_DOCS", 3)  # several blocks, as at scale
    summary = sentence_chunk_stage(con, corpus, chunk_tokens=size, overlap=overlap)
    rows = con.execute(
        "SELECT chunk_id, char_start, char_end, content_tokens FROM chunks WHERE chunkset = ? ORDER BY chunk_id",
        [chunkset_name(size, overlap)],
    ).fetchall()
    return rows, {k: v for k, v in summary.items() if k != "seconds"}


def test_summed_counts_equal_counting_every_span_on_odd_whitespace(con, monkeypatch):
    # separators the tokenizer removes (\x1c, \x0b, \x85) or keeps as spaces (\u2028, \xa0, \u3000), CJK,
    # accents, a literal [SEP], tabs and a run-on sentence cut at words: both paths give the same rows
    odd = [
        "Erste Straße.\x1cZweite Zeile!\u2028Third line? \x0bFourth.\x85Fifth…\xa0Sixth.\u3000Seventh 東京 "
        "stop.\tNaïve [SEP] test.",
        " ".join(f"w{j} token\x1cization retrieval\x0baugmented" for j in range(40)) + ".",
        "Then " + "\u2028".join(f"tok{j}" for j in range(80)) + ".",
        _sentences(12, 9, 2),
    ]
    insert_doc(con, "demo/odd", "Odd", [(1, "A", odd[:2]), (1, "B", odd[2:])])
    insert_doc(con, "demo/plain", "Plain", [(1, "A", [_sentences(20, 8, 1)])])
    # run-on sentences cut at words, the cut between 'token' and 'ization' ('token' + 'ization' is 3 tokens,
    # 'token\x1cization' 2): a window holding both sides must be counted on its text, not summed
    runs = ["Then " + " ".join(["token\x1cization"] * k) + ". Short end." for k in range(26, 34)]
    insert_doc(con, "demo/runs", "Runs", [(1, "A", runs)])
    insert_doc(con, "demo/short", "Short", [(1, "A", ["One line.\x1cTwo."])])
    # paragraphs glued by a separator the tokenizer removes (never written by a loader): counted whole
    insert_doc(con, "demo/glued", "Glued", [(1, "A", ["Then token", "ization"])])
    con.execute(
        "UPDATE documents SET text = replace(text, chr(10) || chr(10), chr(28) || chr(28)) WHERE doc_id = 'demo/glued'"
    )
    for size, overlap in ((40, 10), (64, 16), (512, 50)):
        summed = _windows(con, monkeypatch, True, "demo", size, overlap)
        counted = _windows(con, monkeypatch, False, "demo", size, overlap)
        assert summed == counted and len(summed[0]) >= 3


def test_summed_counts_equal_counting_every_span_on_real_corpora(con, monkeypatch, shared_data):
    from ingest.corpora.beir import load_beir
    from ingest.corpora.wikipedia.load import load_wikipedia

    load_wikipedia(con, shared_data / "wikipedia" / "enwiki_shared.xml", corpus="wiki")
    load_beir(con, shared_data / "beir_scifact", corpus="scifact")
    for corpus, size, overlap in (("wiki", 512, 50), ("wiki", 64, 16), ("scifact", 64, 16)):
        summed = _windows(con, monkeypatch, True, corpus, size, overlap)
        counted = _windows(con, monkeypatch, False, corpus, size, overlap)
        assert summed == counted and summed[1]["multi_chunk"] > 10


def test_summed_counts_tokenize_each_text_about_once(con, monkeypatch, shared_data):
    from ingest.chunking import sentence_windows
    from ingest.corpora.wikipedia.load import load_wikipedia

    load_wikipedia(con, shared_data / "wikipedia" / "enwiki_shared.xml", corpus="wiki")
    body = con.execute("SELECT sum(length(text)) FROM documents").fetchone()[0]
    seen = []
    monkeypatch.setattr(
        sentence_windows,
        "count_tokens",
        lambda texts, tok: seen.append(sum(map(len, texts))) or count_tokens(texts, tok),
    )
    _windows(con, monkeypatch, True, "wiki", 512, 50)
    summed, seen[:] = sum(seen), []
    _windows(con, monkeypatch, False, "wiki", 512, 50)
    assert summed < 1.1 * body < 0.5 * sum(seen)  # once (titles and all), against body + sentences + windows
