"""The reader stage on hand-made reader inputs (a table standing in for the dbt view) and a scripted LLM
(a test stand-in, never results): rows and call keys, shared calls, a free rerun, post-processing,
errors, replacement, fitting to a context window; then end to end over the real view on a synthetic
warehouse, scored by the answer mart."""

from __future__ import annotations

import pyarrow as pa
import pytest

from ingest.llm import Completion, LLMCache, LLMRequest, Sampling, cache_key, load_prompt
from ingest.llm.scripted import ScriptedBackend
from ingest.rewriting.index import RewriteError
from ingest.rewriting.reader import clean_answer, clean_long_answer, reader_messages, reader_stage
from tests.fixtures.synthetic_rewriting import Scale, load_synthetic
from tests.ingest.structure.test_induce_llm import WindowedScripted  # prompt tokens = whitespace words
from warehouse.db import connect, replace_where, transaction
from warehouse.dbt import run_dbt

CELL = ("towns", "emb", "rr")
STAGE = "reader:emb:rr"
LLM_SEED = 7
DOCS = {
    "d1": "Avalon river\n\nThe river Avon flows through Avalon.",
    "d2": "Brisk castle\n\nThe castle of Brisk was built in 1204.",
    "d3": "Corvin market\n\nThe market of Corvin was founded by Ada.",
    "d4": "Dalby river\n\nThe river of Dalby is long.",
}
QUERIES = {"towns/q1": "Which river flows through Avalon?", "towns/q2": "Who founded the market in Corvin?"}
S1 = {"towns/q1": ["d1", "d2"], "towns/q2": ["d3", "d1"]}
MERGED = {"towns/q1": ["d2", "d1"], "towns/q2": ["d3", "d1"]}  # q2's merge changes nothing
TOP1 = {"towns/q1": 0.4, "towns/q2": 0.6}  # the router expands when top-1 < tau
TAUS = (0.5, 0.7)
SEEDS = (42, 123)
N_GROUPS = 2 * 2 * (1 + 1 + len(TAUS))  # queries x seeds x (S1, always-merge, router per tau)


def _groups(corpus="towns", embedder="emb", reranker="rr"):
    """(setting, helper, tau, seed, query_id, expanded, doc_ids) of the hand-made cell."""
    out = []
    for seed in SEEDS:
        for q in QUERIES:
            out.append(("S1", None, None, seed, q, None, S1[q]))
            out.append(("always-merge", "Q2D", None, seed, q, None, MERGED[q]))
            for tau in TAUS:
                expanded = TOP1[q] < tau
                out.append(("router", "Q2D", tau, seed, q, expanded, MERGED[q] if expanded else S1[q]))
    return [(corpus, embedder, reranker, *g) for g in out]


def _inputs_table(groups, docs, top_k=5) -> pa.Table:
    rows = [
        (c, e, r, s, h, t, seed, q, x, rank, d)
        for c, e, r, s, h, t, seed, q, x, docs in groups
        for rank, d in enumerate(docs, 1)
    ]
    cols = list(zip(*rows))
    return pa.table(
        {
            "corpus": cols[0],
            "embedder": cols[1],
            "reranker": cols[2],
            "setting": cols[3],
            "helper": pa.array(cols[4], pa.string()),
            "tau": pa.array(cols[5], pa.float64()),
            "seed": pa.array(cols[6], pa.int32()),
            "query_id": cols[7],
            "query_text": [QUERIES[q] for q in cols[7]],
            "expanded": pa.array(cols[8], pa.bool_()),
            "top_k": pa.array([top_k] * len(rows), pa.int32()),
            "rank": pa.array(cols[9], pa.int32()),
            "doc_id": cols[10],
            "score": pa.array([1.0 - 0.1 * rank for rank in cols[9]], pa.float64()),
            "passage": [docs[d] for d in cols[10]],
        }
    )


def _make_inputs(con, groups, docs=DOCS) -> None:
    table = _inputs_table(groups, docs)
    con.register("_inputs", table)
    con.execute("CREATE OR REPLACE TABLE rewrite_reader_inputs AS SELECT * FROM _inputs")
    con.unregister("_inputs")


def respond(request: LLMRequest) -> str | Completion:
    """q1 over S1's list: a labelled, multi-line answer; over the merged list: cut at max_tokens;
    q2: only a label (empty once cleaned)."""
    content = request.messages[0]["content"]
    if "Corvin" in content.rsplit("Question: ", 1)[1]:
        return "Answer:\n   \n"
    if "[1] Avalon" in content:
        return "  \nAnswer: the Avon\nIt flows through the town."
    return Completion("Answer: Avon river and", finish_reason="length")


@pytest.fixture()
def cell(con):
    _make_inputs(con, _groups() + _groups(reranker="other"))
    return con


def _run(con, backend, **kwargs):
    llm = LLMCache(con, backend, seed=LLM_SEED, progress=False)
    report = reader_stage(con, "towns", llm, embedder="emb", reranker="rr", show_progress=False, **kwargs)
    return report, llm


def _answers(con):
    return {
        r[:5]: r[5:]
        for r in con.execute(
            "SELECT setting, helper, tau, seed, query_id, top_k, answer, llm_call_key FROM reader_answers "
            "WHERE corpus = 'towns' AND embedder = 'emb' AND reranker = 'rr' ORDER BY ALL"
        ).fetchall()
    }


def _funnel(con):
    return dict(con.execute("SELECT reason, n FROM funnel WHERE corpus = 'towns' AND stage = ?", [STAGE]).fetchall())


def test_one_row_per_group_with_its_call_key(cell):
    backend = ScriptedBackend(respond)
    report, llm = _run(cell, backend)
    answers = _answers(cell)
    assert set(answers) == {g[3:8] for g in _groups()}
    assert all(top_k == 5 for top_k, _, _ in answers.values())
    # the key is the request's cache key: prompt, rendered passages in rank order, sampling with the LLM seed
    prompt = load_prompt("reader_answer")
    content = prompt.render(query=QUERIES["towns/q1"], passages=f"[1] {DOCS['d1']}\n\n[2] {DOCS['d2']}")
    assert content == reader_messages(prompt, QUERIES["towns/q1"], [DOCS["d1"], DOCS["d2"]])[0]["content"]
    request = LLMRequest(
        "any",
        "reader_answer.v1",
        ({"role": "user", "content": content},),
        Sampling(temperature=0.0, top_p=1.0, max_tokens=32, seed=LLM_SEED),
    )
    assert answers[("S1", None, None, 42, "towns/q1")][2] == cache_key(llm.model, request)
    stored = dict(cell.execute("SELECT cache_key, response_text FROM llm_calls").fetchall())
    assert all(key in stored for _, _, key in answers.values())
    assert {r.item_id for r in backend.requests} == {
        "towns/q1|reader|S1|-|-|42",
        "towns/q2|reader|S1|-|-|42",
        "towns/q1|reader|always-merge|Q2D|-|42",
    }
    assert report["groups"] == N_GROUPS and report["seconds"].keys() == {"read", "prompts", "llm", "write"}


def test_identical_passage_lists_share_one_call(cell):
    backend = ScriptedBackend(respond)
    report, llm = _run(cell, backend)
    # 3 distinct (query, list): q1 over S1's list, q1 over the merged list, q2 over its one list
    assert llm.calls == len(backend.requests) == 3
    assert {r.sampling for r in backend.requests} == {Sampling(0.0, 1.0, 32, LLM_SEED)}
    answers = _answers(cell)
    for seed in SEEDS:
        for q in QUERIES:
            s1, merge = answers[("S1", None, None, seed, q)], answers[("always-merge", "Q2D", None, seed, q)]
            for tau in TAUS:
                assert answers[("router", "Q2D", tau, seed, q)] == (merge if TOP1[q] < tau else s1)
    assert _funnel(cell) == {
        "groups": N_GROUPS,
        "distinct_prompts": 3,
        "llm_calls": 3,
        "llm_cached": N_GROUPS - 3,
        "empty_answer": 8,
        "cut": 6,
        "shortened": 0,
    }
    assert {k: report[k] for k in _funnel(cell)} == _funnel(cell)


def test_per_arm_calls_ask_each_arm_separately(cell):
    """calls per_arm (the paper's reading): each arm (S1, always-merge, router) gets its own seeded request at the
    study's temperature, so a router list equal to S1's is a separate call; lists repeated across rewriting seeds
    or taus within one arm still share one. The run's choice is corpus_meta reader_calls."""
    backend = ScriptedBackend(respond)
    report, llm = _run(cell, backend, calls="per_arm", temperature=0.7)
    by_arm = {}
    for r in backend.requests:
        by_arm.setdefault(r.item_id.split("|")[2], set()).add((r.sampling, r.messages[0]["content"]))
    assert {a: {s for s, _ in v} for a, v in by_arm.items()} == {
        arm: {Sampling(0.7, 1.0, 32, LLM_SEED + offset)}
        for arm, offset in (("S1", 0), ("always-merge", 1), ("router", 2))
    }
    # S1: 2 distinct (query, list); always-merge: q1's merged list and q2's one list; the router: the lists it reads
    assert (len(by_arm["S1"]), len(by_arm["always-merge"])) == (2, 2) and len(by_arm["router"]) >= 2
    assert llm.calls == len(backend.requests) == report["distinct_prompts"] == sum(len(v) for v in by_arm.values())
    assert report["calls"] == "per_arm"
    assert cell.execute("SELECT value FROM corpus_meta WHERE corpus = 'towns' AND key = 'reader_calls'").fetchall() == [
        ("per_arm",)
    ]
    _run(cell, ScriptedBackend(respond))
    assert cell.execute("SELECT value FROM corpus_meta WHERE key = 'reader_calls'").fetchall() == [("shared",)]
    with pytest.raises(ValueError, match="reader calls must be one of shared, per_arm"):
        _run(cell, ScriptedBackend(respond), calls="both")


def test_rerun_makes_no_call(cell):
    _run(cell, ScriptedBackend(respond))
    first = _answers(cell)
    backend = ScriptedBackend(respond)
    _, llm = _run(cell, backend)
    assert llm.calls == 0 and backend.requests == [] and llm.hits == N_GROUPS
    assert _answers(cell) == first
    assert (_funnel(cell)["llm_calls"], _funnel(cell)["llm_cached"]) == (0, N_GROUPS)


def test_post_processing_in_the_stage(cell):
    _run(cell, ScriptedBackend(respond))
    answers = _answers(cell)
    assert answers[("S1", None, None, 42, "towns/q1")][1] == "the Avon"  # label and second line dropped
    assert answers[("always-merge", "Q2D", None, 123, "towns/q1")][1] == "Avon river and"  # cut: kept, counted
    q2 = [a for k, (_, a, _) in answers.items() if k[4] == "towns/q2"]
    assert q2 == [""] * 8  # a label alone: stored as '' and counted (empty_answer 8 above)


@pytest.mark.parametrize(
    "raw, clean",
    [
        ("Paris", "Paris"),
        ("  Paris \n", "Paris"),
        ("Answer: Paris", "Paris"),
        ("answer:Paris", "Paris"),
        ("ANSWER :  Paris", "Paris"),
        ("\n\nParis\nbecause it is the capital", "Paris"),
        ("Answer:\n\nParis", "Paris"),
        ("", ""),
        ("   \n \n", ""),
        ("Answer:", ""),
        ("The answer: Paris", "The answer: Paris"),
    ],
)
def test_clean_answer(raw, clean):
    assert clean_answer(raw) == clean


@pytest.mark.parametrize(
    "raw, clean",
    [
        ("The Avon flows through Avalon.", "The Avon flows through Avalon."),
        (
            "Answer: The Avon flows through Avalon.\nIt rises in the hills.",
            "The Avon flows through Avalon. It rises in the hills.",
        ),
        ("  \n answer :\n\n The Avon   flows.\n", "The Avon flows."),
        ("Answer:", ""),
        ("", ""),
    ],
)
def test_clean_long_answer(raw, clean):
    assert clean_long_answer(raw) == clean


def test_long_mode_for_sentence_answers(cell):
    """Long mode (gold answers are sentences, as EnterpriseRAG-Bench's): the long prompt, no 'a few words'
    instruction, 256 tokens by default, and the whole reply kept as one line."""
    backend = ScriptedBackend(lambda r: "Answer: The Avon.\nIt flows through the town.")
    report, _ = _run(cell, backend, mode="long")
    assert report["mode"] == "long" and report["prompt"] == "reader_answer_long.v1"
    content = backend.requests[0].messages[0]["content"]
    assert "a few words" not in content and "full sentences" in content
    assert {r.sampling.max_tokens for r in backend.requests} == {256}
    assert {r.prompt for r in backend.requests} == {"reader_answer_long.v1"}
    assert {a for _, a, _ in _answers(cell).values()} == {"The Avon. It flows through the town."}
    # the short mode's prompt is another request: nothing is answered from the long mode's cache
    short = ScriptedBackend(respond)
    report, llm = _run(cell, short)
    assert report["prompt"] == "reader_answer.v1" and llm.calls == 3
    with pytest.raises(ValueError, match="reader mode must be one of short, long"):
        _run(cell, short, mode="medium")


def test_missing_view_and_empty_cell_are_clear_errors(con):
    llm = LLMCache(con, ScriptedBackend(respond), progress=False)
    with pytest.raises(RewriteError, match=r"build the rewriting marts first \(`dbt build --select \+tag:rewriting`"):
        reader_stage(con, "towns", llm, embedder="emb", reranker="rr", show_progress=False)
    _make_inputs(con, _groups())
    with pytest.raises(
        RewriteError,
        match="no rows for corpus 'towns', embedder 'emb', reranker 'none' "
        r"\(cells it has: towns/emb/rr\)",
    ):
        reader_stage(con, "towns", llm, embedder="emb", reranker="none", show_progress=False)
    with pytest.raises(RewriteError, match="needs an LLM"):
        reader_stage(con, "towns", None, embedder="emb", reranker="rr", show_progress=False)
    assert llm.calls == 0


def test_a_run_replaces_the_cells_previous_rows_only(cell):
    stale = pa.table(
        {
            "corpus": ["towns", "towns"],
            "embedder": ["emb", "emb"],
            "reranker": ["rr", "other"],
            "setting": ["router", "S1"],
            "helper": ["Q2D", None],
            "tau": [0.9, None],
            "seed": pa.array([42, 42], pa.int32()),
            "query_id": ["towns/q1", "towns/q1"],
            "top_k": pa.array([5, 5], pa.int32()),
            "answer": ["old", "other cell"],
            "llm_call_key": ["k-old", "k-other"],
        }
    )
    old_funnel = pa.table(
        {
            "corpus": ["towns", "towns"],
            "stage": [STAGE, "reader:emb:other"],
            "reason": ["groups", "groups"],
            "n": pa.array([99, 5], pa.int64()),
        }
    )
    with transaction(cell):
        replace_where(cell, "reader_answers", "TRUE", [], stale)
        replace_where(cell, "funnel", "TRUE", [], old_funnel)
    _run(cell, ScriptedBackend(respond))
    assert ("router", "Q2D", 0.9, 42, "towns/q1") not in _answers(cell) and len(_answers(cell)) == N_GROUPS
    assert cell.execute("SELECT answer FROM reader_answers WHERE reranker = 'other'").fetchall() == [("other cell",)]
    assert _funnel(cell)["groups"] == N_GROUPS
    assert cell.execute("SELECT n FROM funnel WHERE stage = 'reader:emb:other'").fetchall() == [(5,)]


def test_fitting_drops_trailing_passages_and_cuts_the_last(con):
    docs = {**DOCS, "long": "Avalon river\n\n" + " ".join(f"w{i}" for i in range(200))}
    _make_inputs(
        con,
        [
            ("towns", "emb", "rr", "S1", None, None, 42, "towns/q1", None, ["d1", "long", "d2"]),
            ("towns", "emb", "rr", "S1", None, None, 42, "towns/q2", None, ["d3", "d4"]),
        ],
        docs,
    )
    prompt = load_prompt("reader_answer")
    base = len(reader_messages(prompt, QUERIES["towns/q1"], [DOCS["d1"]])[0]["content"].split())
    window = base + 3 + 48 + 32  # "[2] Avalon river", w0..w47 of the long passage, and the answer's 32 tokens
    backend = WindowedScripted(lambda r: "Avon", window)
    report, _ = _run(con, backend)
    q1, q2 = sorted(backend.requests, key=lambda r: r.item_id)
    content = q1.messages[0]["content"]
    assert len(content.split()) + 32 <= window
    assert "[2] Avalon river\n\nw0 w1" in content and " w47\n" in content and "w48" not in content
    assert "[3]" not in content  # the third passage is dropped
    assert "[2] " + DOCS["d4"] in q2.messages[0]["content"]  # fits whole: unchanged
    assert report["shortened"] == 1 and _funnel(con)["shortened"] == 1

    tiny = WindowedScripted(lambda r: "Avon", 10)
    with pytest.raises(
        RewriteError, match=r"reader prompt towns/q1\|reader\|S1\|-\|-\|42 does not fit .* lower max_tokens"
    ):
        _run(con, tiny)
    assert tiny.requests == []


def test_end_to_end_over_the_dbt_view(warehouse_file, tmp_path):
    """The real view on a small synthetic warehouse, then the answer mart scores what the reader wrote."""
    scale = Scale(corpora=(("hotpotqa", 8),))
    extra = ["--indirect-selection", "cautious", "--target-path", str(tmp_path / "target")]
    con = connect(warehouse_file)
    try:
        load_synthetic(con, scale, seed=3)
        con.execute("DELETE FROM reader_answers")
    finally:
        con.close()
    run_dbt(
        "build",
        warehouse_file,
        select="+rewrite_reader_inputs",
        progress=False,
        extra=[*extra, "--exclude", "resource_type:test"],
    )
    con = connect(warehouse_file)
    try:
        gold = dict(con.execute("SELECT query_id, answer FROM query_answers WHERE answer_idx = 0").fetchall())

        def answer(request: LLMRequest) -> str:  # the first gold alias of the question's query
            question = request.messages[0]["content"].rsplit("Question: ", 1)[1].split("\n")[0]
            return "Answer: " + gold[f"hotpotqa/q{int(question.rsplit(' ', 1)[1]):05d}"]

        llm = LLMCache(con, ScriptedBackend(answer), progress=False)
        report = reader_stage(
            con, "hotpotqa", llm, embedder=scale.embedder, reranker=scale.reranker, show_progress=False
        )
        n_view = con.execute(
            "SELECT count(DISTINCT (setting, helper, tau, seed, query_id)) FROM rewrite_reader_inputs"
        ).fetchone()[0]
        assert report["groups"] == n_view == con.execute("SELECT count(*) FROM reader_answers").fetchone()[0]
        assert llm.calls == report["distinct_prompts"] < n_view / 4  # router and seed repeats cost nothing
    finally:
        con.close()
    run_dbt("build", warehouse_file, select="+rewrite_answer_scores", progress=False, extra=extra)
    con = connect(warehouse_file, read_only=True)
    try:
        assert con.execute("SELECT count(*), min(em), max(em) FROM rewrite_answer_scores").fetchone() == (n_view, 1, 1)
    finally:
        con.close()
