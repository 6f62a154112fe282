"""LLM induction, A1 contexts and query generation end to end against a real local HTTP server.

The server answers deterministically from the prompt (a canned valid or invalid structure, a context
sentence, a query): these are test stand-ins for a model, never results. Documents are hand-made
(three short articles with a gold heading tree) and chunked with the project's chunker.
"""

from __future__ import annotations

import json
import re

import pytest
from typer.testing import CliRunner

from ingest.chunking.contexts import generate_contexts
from ingest.chunking.stage import chunk_corpus
from ingest.chunking.tokens import count_tokens
from ingest.genqueries import QUERY_TYPES, generate_queries
from ingest.llm import LLMCacheMiss, LLMConfig, open_llm
from ingest.structure import induce
from ingest.structure.segments import Heading, build_sections, verify_sections
from tests.ingest.llm.chat_server import ChatServer, last_user_message

VOCAB = (
    "river valley harbour castle bridge market temple forest meadow tower garden village station "
    "harvest winter summer treaty council museum library festival mountain island coast desert"
).split()


def _article(d: int) -> tuple[str, list[str], list[Heading]]:
    paras = []
    for p in range(8):
        words = [VOCAB[(d * 5 + p * 3 + k) % len(VOCAB)] for k in range(44)]
        paras.append(f"Doc{d} paragraph {p}: " + " ".join(words) + ".")
    headings = [
        Heading(1, "Introduction", 2),
        Heading(1, "History", 1),
        Heading(2, "Early", 2),
        Heading(1, "Geography", 3),
    ]
    return f"Article {d}", paras, headings


def load_articles(con, n_docs: int = 3) -> None:
    for d in range(1, n_docs + 1):
        title, paras, headings = _article(d)
        text, offs, pos = title + "\n\n", [], len(title) + 2
        for k, p in enumerate(paras):
            offs.append((pos, pos + len(p)))
            text += p + ("\n\n" if k < len(paras) - 1 else "")
            pos += len(p) + 2
        rows, _ = build_sections(headings, offs)
        assert verify_sections(rows, offs) == []
        doc_id = f"wikipedia/{d}"
        con.execute(
            "INSERT INTO documents VALUES (?, 'wikipedia', ?, ?, NULL, NULL, 'hand-made.xml')", [doc_id, title, text]
        )
        con.executemany(
            "INSERT INTO paragraphs VALUES (?, ?, ?, ?)", [(doc_id, k, s, e) for k, (s, e) in enumerate(offs)]
        )
        con.executemany(
            "INSERT INTO sections VALUES ('gold', ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    doc_id,
                    r.section_idx,
                    r.parent_idx,
                    r.level,
                    r.title,
                    r.para_start,
                    r.para_end,
                    r.char_start,
                    r.char_end,
                )
                for r in rows
            ],
        )


def structure(*sections) -> str:
    return json.dumps(
        {"sections": [{"title": t, "level": lv, "first_paragraph": a, "last_paragraph": b} for t, lv, a, b in sections]}
    )


def respond(body: dict) -> str:
    """Stand-in model: answers by prompt kind (and, for induction, by document)."""
    msg = last_user_message(body)
    first = body["messages"][0]["content"]
    if "Reconstruct the document's section structure" in first:
        doc = re.search(r"\[1\] Doc(\d)", first).group(1)
        correcting = len(body["messages"]) == 3
        if doc == "1":  # valid at once; same spans as the gold tree
            return (
                "```json\n"
                + structure(("Intro", 1, 1, 2), ("Past", 1, 3, 3), ("Early days", 2, 4, 5), ("Land", 1, 6, 8))
                + "\n```"
            )
        if doc == "2":  # overlapping ranges, fixed when the violations are listed
            if correcting:
                assert "overlap" in msg
                return structure(("Intro", 1, 1, 3), ("Rest", 1, 4, 8))
            return "Here you go: " + structure(("Intro", 1, 1, 4), ("Rest", 1, 3, 8))
        return "I am unable to determine sections."  # doc 3: never JSON -> failed
    if "<chunk>" in msg:
        chunk = msg.split("<chunk>\n", 1)[1].split("\n</chunk>", 1)[0]
        return f"  This chunk opens with {chunk.split()[0]} and belongs to one of the hand-made articles.  "
    if msg.startswith("Paraphrase the following search question"):
        query = msg.rsplit("Question: ", 1)[1].strip()
        if "zeppelin" in query:  # a paraphrase that copies the passage: rejected at the second filter
            return "Paraphrased question: " + " ".join(VOCAB[:8])
        return f"Paraphrased question: could you say {query[0].lower() + query[1:]}"
    passage = re.search(r"<(?:passage|section)>\n(.*?)\n</", msg, re.S).group(1)
    if "factoid question" in msg:
        return "Question: Which odd quokka fact appears?" if "Doc1" not in passage else passage[:40]  # doc 1 copies
    if "only vaguely" in msg:
        return '"What did that place become known for?"'
    if "BOTH passages" in msg:
        return "How are the two xylophone episodes connected?"
    return "What broad zeppelin story does this part tell?" if "Doc3" in passage else "What overall saga unfolds here?"


@pytest.fixture()
def server():
    with ChatServer(respond) as s:
        yield s


def http(server, **kw) -> LLMConfig:
    return LLMConfig(model="stand-in", base_url=server.base_url, timeout_s=5, max_retries=1, backoff_s=0.01, **kw)


def table(con, sql):
    return con.execute(sql).fetchall()


def test_llm_induction_end_to_end(con, server):
    load_articles(con)
    report = induce(
        con, "llm", "wikipedia", open_llm(con, config=http(server), progress=False), chunk=True, show_progress=False
    )
    r = report["corpora"]["wikipedia"]
    assert (r["documents"], r["usable"], r["usable_first_try"], r["self_corrected"], r["repaired"], r["failed"]) == (
        3,
        2,
        1,
        1,
        0,
        1,
    )
    assert server.n_requests == 3 + 2  # 3 first answers, corrections for docs 2 and 3
    assert report["llm"]["calls"] == 5 and report["llm"]["cache_hits"] == 0
    assert r["mean_sections_induced"] == pytest.approx((4 + 2) / 2) and r["mean_sections_gold"] == 4
    log = table(con, "SELECT doc_id, status, n_sections, detail FROM induction_log ORDER BY doc_id")
    assert [x[:3] for x in log] == [
        ("wikipedia/1", "usable", 4),
        ("wikipedia/2", "usable", 2),
        ("wikipedia/3", "failed", None),
    ]
    assert log[0][3] == "valid first answer" and log[1][3].startswith(
        "self-corrected; first answer: section 2: overlap"
    )
    assert table(con, "SELECT record_id, stage FROM quarantine") == [("wikipedia/3", "induce:llm")]
    assert table(
        con,
        "SELECT title, level, parent_idx, para_start, para_end FROM sections "
        "WHERE structure = 'induced:llm' AND doc_id = 'wikipedia/1' ORDER BY section_idx",
    ) == [("Intro", 1, None, 0, 1), ("Past", 1, None, 2, 4), ("Early days", 2, 1, 3, 4), ("Land", 1, None, 5, 7)]
    # doc 1 copies the gold tree, so its induced structural chunks equal the gold ones
    ident = r["span_identity_counts"]
    assert ident["documents"] == 2 and r["span_identity"] == pytest.approx(ident["identical"] / ident["induced_chunks"])
    d1 = table(
        con,
        "SELECT count(*) FROM chunks i JOIN chunks g ON g.doc_id = i.doc_id AND g.chunkset = 'structural:gold' "
        "AND (g.char_start, g.char_end) = (i.char_start, i.char_end) "
        "WHERE i.chunkset = 'structural:induced:llm' AND i.doc_id = 'wikipedia/1'",
    )[0][0]
    assert (
        d1
        == table(con, "SELECT count(*) FROM chunks WHERE chunkset = 'structural:gold' AND doc_id = 'wikipedia/1'")[0][0]
    )
    assert table(con, "SELECT reason, n FROM funnel WHERE stage = 'induce:llm' ORDER BY reason") == [
        ("correction_skipped", 0),
        ("cut_answers", 0),
        ("failed", 1),
        ("input", 3),
        ("kept", 2),
        ("legal_as_returned", 1),
        ("repaired", 0),
        ("schema_valid", 2),
        ("self_corrected", 1),
        ("structured", 3),
        ("truncated", 0),
        ("usable", 2),
    ]
    # structured output is on by default: every request carried its document's schema (8 paragraphs)
    for body in server.bodies:
        schema = body["response_format"]["json_schema"]["schema"]
        assert body["response_format"]["type"] == "json_schema" and schema["properties"]["sections"]["maxItems"] == 8
    assert {b["response_format"]["json_schema"]["name"] for b in server.bodies} == {
        "induce_structure",
        "induce_correction",
    }
    # doc 1's fenced JSON satisfies the schema; doc 2's has overlaps (legal JSON, not a tiling); doc 3 is prose
    assert table(con, "SELECT doc_id, outcome, structured, schema_valid FROM induction_log ORDER BY doc_id") == [
        ("wikipedia/1", "legal_as_returned", True, True),
        ("wikipedia/2", "legal_after_correction", True, True),
        ("wikipedia/3", "failed", True, False),
    ]

    before = table(con, "SELECT * FROM sections WHERE structure = 'induced:llm' ORDER BY doc_id, section_idx")
    again = induce(con, "llm", "wikipedia", open_llm(con, config=http(server), progress=False), show_progress=False)
    assert server.n_requests == 5 and again["llm"]["calls"] == 0 and again["llm"]["cache_hits"] == 5
    assert table(con, "SELECT * FROM sections WHERE structure = 'induced:llm' ORDER BY doc_id, section_idx") == before

    replay = open_llm(con, config=LLMConfig(model="stand-in", replay_only=True), progress=False)
    induce(con, "llm", "wikipedia", replay, show_progress=False)
    con.execute("DELETE FROM llm_calls WHERE item_id = 'wikipedia/2' AND prompt_name = 'induce_correction'")
    with pytest.raises(LLMCacheMiss, match=r"wikipedia/2 \(induce_correction.v1\)"):
        induce(con, "llm", "wikipedia", replay, show_progress=False)
    assert server.n_requests == 5


def test_llm_induction_falls_back_to_free_text_when_the_server_refuses_the_schema(con, server, caplog):
    load_articles(con)
    server.refuse_response_format = True
    with caplog.at_level("WARNING"):
        report = induce(
            con, "llm", "wikipedia", open_llm(con, config=http(server), progress=False), show_progress=False
        )
    r = report["corpora"]["wikipedia"]
    assert (r["usable"], r["failed"], r["structured"], r["schema_valid"]) == (2, 1, 0, 2)
    # one refused structured request; then the first round (3) and the corrections (2) as free text
    assert ["response_format" in b for b in server.bodies].count(True) >= 1
    assert sum("response_format" not in b for b in server.bodies) == 5
    assert table(con, "SELECT DISTINCT structured FROM induction_log") == [(False,)]
    refused = [m for m in caplog.messages if "structured output refused" in m]
    assert refused and all("\n" not in m and "unknown field response_format" in m for m in refused)
    # the free-text answers are stored under free-text keys: a run with llm.structured false replays them
    n = server.n_requests
    again = induce(
        con,
        "llm",
        "wikipedia",
        open_llm(con, config=http(server), progress=False),
        show_progress=False,
        structured=False,
    )
    assert again["llm"]["calls"] == 0 and server.n_requests == n


def test_a1_contexts_end_to_end(con, server):
    load_articles(con, 2)
    chunk_corpus(con, "wikipedia", "texttiling", show_progress=False)
    fixed = table(con, "SELECT chunk_id FROM chunks WHERE chunkset = 'fixed' ORDER BY chunk_id")
    report = generate_contexts(con, "wikipedia", open_llm(con, config=http(server), progress=False))
    r = report["corpora"]["wikipedia"]
    assert (r["chunks"], r["contexts"], r["empty_answers"], r["calls"]) == (len(fixed), len(fixed), 0, len(fixed))
    rows = table(
        con,
        "SELECT chunk_id, depth, prefix, prefix_tokens FROM chunk_prefixes WHERE prefix_kind = 'llm_context' ORDER BY chunk_id",
    )
    assert [x[0] for x in rows] == [c[0] for c in fixed] and {x[1] for x in rows} == {0}
    first = rows[0][2]
    assert (
        first.startswith("This chunk opens with Doc1") and first.endswith("articles.\n\n") and not first.startswith(" ")
    )
    assert [x[3] for x in rows] == count_tokens([x[2] for x in rows]).tolist()
    prompt = next(b for b in server.bodies if "Doc1 paragraph 0" in b["messages"][0]["content"].split("<chunk>")[1])
    content = prompt["messages"][0]["content"]
    assert (
        content.startswith("<document>\nArticle 1\n\nDoc1 paragraph 0")
        and "Answer only with the succinct context" in content
    )
    # re-chunking keeps the contexts of unchanged chunks; a rerun makes no call
    chunk_corpus(con, "wikipedia", "texttiling", show_progress=False)
    again = generate_contexts(con, "wikipedia", open_llm(con, config=http(server), progress=False))
    assert again["corpora"]["wikipedia"]["calls"] == 0 and server.n_requests == len(fixed)
    assert (
        table(
            con,
            "SELECT chunk_id, depth, prefix, prefix_tokens FROM chunk_prefixes WHERE prefix_kind = 'llm_context' ORDER BY chunk_id",
        )
        == rows
    )


def test_generated_queries_end_to_end(con, server):
    load_articles(con, 3)
    chunk_corpus(con, "wikipedia", "texttiling", show_progress=False)
    report = generate_queries(con, "wikipedia", open_llm(con, config=http(server), progress=False), seed=3, per_doc=1)
    f = report["funnel"]
    # factoid: doc 1 copies its passage (rejected), docs 2-3 pass; structural: doc 3's paraphrase copies the passage
    assert f["factoid"] == {
        "candidates": 3,
        "passage_truncated": 0,
        "rejected_shared_4gram": 1,
        "survivors": 2,
        "paraphrase_survivors": 2,
        "final": 2,
    }
    assert f["underspecified"]["survivors"] == 3 and f["multihop"]["survivors"] == 3
    assert f["structural"]["survivors"] == 3 and f["structural"]["paraphrase_rejected_shared_4gram"] == 1
    # per-type cap 250: every type keeps all its paraphrase survivors (no balancing down to the smallest type)
    assert report["final_per_type_cap"] == 250
    assert report["finals"] == {"factoid": 2, "underspecified": 3, "multihop": 3, "structural": 2}
    assert report["rouge_l"]["first_queries"]["n"] == 12 and report["rouge_l"]["finals"]["n"] == 10
    # 12 candidates; 11 paraphrase requests, but identical requests (the same survivor text) are sent once:
    # factoid 1, underspecified 1, multihop 1, structural 2 distinct texts
    assert server.n_requests == 12 + 5
    queries = table(con, "SELECT query_id, doc_id, query_type, text FROM queries ORDER BY query_id")
    assert len(queries) == 10 and all(q[0].startswith("wikipedia/gen-") for q in queries)
    assert all(q[3].startswith("could you say ") for q in queries)  # only paraphrases enter
    ev = table(
        con, "SELECT e.query_id, count(*), min(match_method), max(match_method) FROM evidence e GROUP BY 1 ORDER BY 1"
    )
    spans = {q[0]: 2 if q[2] == "multihop" else 1 for q in queries}
    assert {e[0]: e[1] for e in ev} == spans and {(e[2], e[3]) for e in ev} == {("generated", "generated")}
    structural = table(
        con,
        "SELECT e.doc_id, e.char_start, e.char_end FROM evidence e JOIN queries q USING (query_id) "
        "WHERE q.query_type = 'structural'",
    )
    gold_top = set(
        table(con, "SELECT doc_id, char_start, char_end FROM sections WHERE structure = 'gold' AND level = 1")
    )
    assert set(structural) <= gold_top
    assert report["bm25"]["units"] == "structural:gold chunks" and report["bm25"]["queries"] == 10
    assert 0.0 <= report["bm25"]["top1_gold_rate"] <= 1.0
    funnel = dict(
        ((s, r), n)
        for s, r, n in table(con, "SELECT stage, reason, n FROM funnel WHERE starts_with(stage, 'generated_queries')")
    )
    assert funnel[("generated_queries:factoid", "rejected_shared_4gram")] == 1
    before = table(con, "SELECT * FROM queries ORDER BY query_id")
    again = generate_queries(con, "wikipedia", open_llm(con, config=http(server), progress=False), seed=3, per_doc=1)
    assert again["calls"] == 0 and server.n_requests == 17
    assert table(con, "SELECT * FROM queries ORDER BY query_id") == before


def test_cli_runs_the_llm_stages_against_the_server(warehouse_file, server, monkeypatch):
    from ragwh.cli import app
    from warehouse.db import connect

    con = connect(warehouse_file)
    load_articles(con, 2)
    con.close()
    monkeypatch.setenv("RAGWH_LLM_BACKEND", "openai")
    monkeypatch.setenv("RAGWH_LLM_BASE_URL", server.base_url)
    monkeypatch.setenv("RAGWH_LLM_MODEL", "stand-in")
    runner = CliRunner()
    result = runner.invoke(app, ["induce", "--inducer", "llm", "--corpus", "wikipedia"])
    assert result.exit_code == 0, result.output
    assert "induced:llm" in result.output
    result = runner.invoke(app, ["contexts", "--corpus", "wikipedia"])
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["generate-queries", "--seed", "3", "--per-doc", "1"])
    assert result.exit_code == 0, result.output
    n = server.n_requests
    result = runner.invoke(app, ["induce", "--inducer", "llm", "--replay-only", "--no-chunk"])
    assert result.exit_code == 0, result.output
    assert server.n_requests == n
    monkeypatch.setenv("RAGWH_LLM_MODEL", "another-model")
    result = runner.invoke(app, ["induce", "--inducer", "llm", "--replay-only", "--no-chunk"])
    assert result.exit_code == 1 and "replay-only" in result.output


def test_cut_and_empty_answers_are_counted_and_handled_by_each_stage(con):
    """The server cuts every answer for doc 2 at max_tokens and answers doc 3 with nothing: contexts keep a
    cut context (counted) and quarantine an empty one; generated queries reject both; nothing is half-written."""

    def cutting(body):
        first = body["messages"][0]["content"]
        if "Doc2" in first and "Paraphrase" not in first:
            return {"content": "What does the", "finish_reason": "length"}
        if "Doc3" in first and "Paraphrase" not in first:
            return {"content": "   ", "finish_reason": "stop"}
        return respond(body)

    load_articles(con, 3)
    chunk_corpus(con, "wikipedia", "texttiling", show_progress=False)
    with ChatServer(cutting) as server:
        r = generate_contexts(con, "wikipedia", open_llm(con, config=http(server), progress=False))["corpora"][
            "wikipedia"
        ]
        per_doc = dict(table(con, "SELECT doc_id, count(*) FROM chunks WHERE chunkset = 'fixed' GROUP BY 1"))
        assert (r["cut_at_max_tokens"], r["empty_answers"]) == (per_doc["wikipedia/2"], per_doc["wikipedia/3"])
        assert r["contexts"] == per_doc["wikipedia/1"] + per_doc["wikipedia/2"]
        assert table(con, "SELECT DISTINCT stage, reason FROM quarantine") == [
            ("contexts", "model returned an empty context; the chunk has no llm_context prefix")
        ]
        funnel = dict(table(con, "SELECT reason, n FROM funnel WHERE stage = 'contexts'"))
        assert (
            funnel["cut_at_max_tokens"] == per_doc["wikipedia/2"] and funnel["empty_answer"] == per_doc["wikipedia/3"]
        )
        assert table(con, "SELECT count(*) FROM llm_calls WHERE finish_reason = 'length'") == [
            (per_doc["wikipedia/2"],)
        ]

        report = generate_queries(
            con, "wikipedia", open_llm(con, config=http(server), progress=False), seed=3, per_doc=1
        )
    f = report["funnel"]
    # every type has one candidate per document: doc 2's answer is cut, doc 3's empty
    assert all(f[t]["rejected_cut_at_max_tokens"] == 1 and f[t]["rejected_empty"] == 1 for t in QUERY_TYPES)
    assert not any(
        q.startswith(("wikipedia/gen-2-", "wikipedia/gen-3-")) for (q,) in table(con, "SELECT query_id FROM queries")
    )


def test_the_final_draw_caps_each_type_separately(con, server):
    load_articles(con, 3)
    chunk_corpus(con, "wikipedia", "texttiling", show_progress=False)
    report = generate_queries(
        con, "wikipedia", open_llm(con, config=http(server), progress=False), seed=3, per_doc=1, final_per_type=2
    )
    survivors = {t: report["funnel"][t]["paraphrase_survivors"] for t in QUERY_TYPES}
    assert survivors == {"factoid": 2, "underspecified": 3, "multihop": 3, "structural": 2}
    assert report["finals"] == {t: min(2, n) for t, n in survivors.items()} and report["final_per_type_cap"] == 2
    assert table(con, "SELECT query_type, count(*) FROM queries GROUP BY 1 ORDER BY 1") == [
        ("factoid", 2),
        ("multihop", 2),
        ("structural", 2),
        ("underspecified", 2),
    ]
    assert table(con, "SELECT value FROM corpus_meta WHERE key = 'genq_final_per_type'") == [("2",)]
    with pytest.raises(ValueError, match="final_per_type"):
        generate_queries(con, "wikipedia", open_llm(con, config=http(server), progress=False), final_per_type=0)


def test_a1_shows_a_document_longer_than_the_window_in_part(con):
    """With a context window, every chunk of a long document sees the same shortened document (title and
    the first paragraphs that fit with its longest chunk); a short one is shown whole."""
    from ingest.llm import LLMCache
    from tests.ingest.structure.test_induce_llm import WindowedScripted

    load_articles(con, 2)
    chunk_corpus(con, "wikipedia", "texttiling", show_progress=False)
    backend = WindowedScripted(lambda r: "A context.", window=300)
    report = generate_contexts(con, "wikipedia", LLMCache(con, backend, progress=False), max_tokens=20)
    r = report["corpora"]["wikipedia"]
    n_fixed = table(con, "SELECT count(*) FROM chunks WHERE chunkset = 'fixed'")[0][0]
    assert (r["documents"], r["documents_truncated"], r["chunks_with_truncated_document"]) == (2, 2, n_fixed)
    for doc in ("Doc1", "Doc2"):
        shown = {
            m.messages[0]["content"].split("</document>")[0]
            for m in backend.requests
            if f"<document>\nArticle {doc[-1]}" in m.messages[0]["content"]
        }
        assert len(shown) == 1  # one shortened document for all its chunks (a shared prompt prefix)
        text = shown.pop()
        assert f"{doc} paragraph 0" in text and f"{doc} paragraph 7" not in text
    assert all(backend.prompt_tokens(m.messages) + 20 <= 300 for m in backend.requests)
    wide = WindowedScripted(lambda r: "A context.", window=10_000)
    again = generate_contexts(con, "wikipedia", LLMCache(con, wide, progress=False), max_tokens=20)["corpora"][
        "wikipedia"
    ]
    assert again["documents_truncated"] == 0 and again["calls"] == n_fixed  # whole documents: new prompts


def test_a_structural_passage_longer_than_the_window_is_cut_to_its_first_paragraphs(con):
    from ingest.llm import LLMCache
    from tests.ingest.structure.test_induce_llm import WindowedScripted

    load_articles(con, 2)
    chunk_corpus(con, "wikipedia", "texttiling", show_progress=False)

    def script(r):
        return (
            "Could you say which quokka anecdote the text gives?"
            if r.prompt.startswith("query_paraphrase")
            else "Which odd quokka fact appears?"
        )

    backend = WindowedScripted(script, window=100_000)
    generate_queries(con, "wikipedia", LLMCache(con, backend, progress=False), seed=3, per_doc=1)
    longest = {
        t: max(backend.prompt_tokens(r.messages) for r in backend.requests if r.prompt.startswith(f"query_{t}"))
        for t in QUERY_TYPES
    }
    assert longest["structural"] > longest["multihop"]  # a 3-paragraph section is the longest passage
    narrow = WindowedScripted(script, window=longest["multihop"] + 96)
    report = generate_queries(con, "wikipedia", LLMCache(con, narrow, progress=False), seed=3, per_doc=1)
    f = report["funnel"]
    assert f["structural"]["passage_truncated"] > 0 and all(f[t]["passage_truncated"] == 0 for t in QUERY_TYPES[:3])
    assert all(narrow.prompt_tokens(r.messages) + 96 <= narrow.window for r in narrow.requests)
    cut = [r for r in narrow.requests if r.prompt.startswith("query_structural")]
    assert any("paragraph" in r.messages[0]["content"] for r in cut)  # still a passage, only shorter
