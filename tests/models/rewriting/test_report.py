"""The rewriting section of the one HTML report (ragwh/experiment/report/rewriting.py) from the
built marts: every sub-section with its figures and tables, 'not run' with the reason where a mart is
empty, absent when the rewriting marts are, and the tiny-model label."""

from __future__ import annotations

import duckdb

from ragwh.experiment.config.chunking import load_config
from ragwh.experiment.report import render_report
from ragwh.experiment.report.rewriting import NAV, _tiny_model_label, rewriting_sections

CELLS = 4  # hotpotqa and ambignq with a reranker, scifact cosine-only, the hand-made cell


def test_sections_render_from_the_marts(db):
    sections = rewriting_sections(db)
    page = "".join(sections)
    for anchor, _ in NAV:
        assert f'<section id="{anchor}">' in page, anchor
    # tau curve, Jaccard heatmap and Pareto front per cell; tables stay tables
    assert page.count('src="data:image/png;base64,') == 3 * CELLS
    assert page.count("<table") >= 2 * CELLS + 3
    assert "★ " in page  # the best ensemble of each cell is marked
    # the cosine stack and the hand cell have no control runs: the budget table says so, row by row (two scopes)
    assert page.count(">not_run<") == 2 * 2 * 2 and "have not been produced yet" in page
    # which strategies and seeds each cell shows, read from the warehouse
    assert "shown: solo strategies S1, HyDE, Q2D; controls none; seeds 42, 123</p>" in page
    assert "shown: solo strategies S1, HyDE, Q2D, S2, S3, S4; controls S1-ann4, S1-pool100; seeds 42, 123, 2024" in page
    # the paper's seed-42 pre-declared ensembles and the share of the reference ensemble's gain
    assert page.count("seed 42 (the paper&#x27;s post-hoc scope): pre-declared") == CELLS and "S1+HyDE+S3+S4" in page
    assert "not run:" not in page  # every sub-section has rows here
    assert "TINY-MODEL OUTPUT" not in page  # synthetic texts, not the packaged model


def test_the_papers_tables_in_its_numbering(db):
    page = "".join(rewriting_sections(db))
    tables = page.split('<section id="rw-tables">', 1)[1].split("</section>", 1)[0]
    titles = [t.split("</h3>", 1)[0] for t in tables.split("<h3>")[1:]]
    assert [t.split(":", 1)[0] for t in titles] == [
        "Table 3",
        "Table 4",
        "Table 5",
        "Table 6",
        "Table 11",
        "Table 12",
        "Table 13",
        "Table 14",
    ]
    assert "not run" not in tables  # every table has rows in the built marts
    assert tables.count("<table") >= 8 * CELLS - 2  # one per cell and seed scope; a cosine-only cell has no router


def test_the_papers_defaults_in_the_tables(db):
    """Marks on the uncorrected p (Holm an added column), the paper's fixed tau first and the additions labelled,
    the paper's budget share beside the scope-consistent one, Table 14 split triggered / untriggered at tau 0.65."""
    from ragwh.experiment.tables.build import Context, build
    from ragwh.experiment.tables.rewriting import definitions
    from ragwh.experiment.tables.spec import marks_for

    SOLO, _, ENSEMBLES, ROUTER, BUDGET, _, HELPERS, ANSWERS = definitions("HIT@10")  # the setting's default
    solo = build(db, SOLO, Context())
    p = {
        (c, s, m): (pv, ph)
        for c, s, m, pv, ph in db.execute(
            "select corpus, strategy, metric, p_value, p_holm from rewrite_solo"
        ).fetchall()
    }
    n_marked = n_differ = 0
    for t in solo:
        assert t.headers[3] == "Holm p (HIT@10)"
        for row in t.rows:
            for metric, cell in zip(t.headers[4:], row[4:]):
                pv, ph = p[(t.group["corpus"], row[0].text, metric)]
                assert cell.marks == marks_for(pv)
                n_marked += bool(cell.marks)
                n_differ += marks_for(pv) != marks_for(ph)
    assert n_marked > 0 and n_differ > 0  # the synthetic data tells the two markings apart
    ens = build(db, ENSEMBLES, Context())
    assert ens and all(t.headers[-2:] == ["p", "Holm p"] for t in ens)
    router = build(db, ROUTER, Context())
    for t in router:
        first = [r[1].text for r in t.rows if r[0].text == t.rows[0][0].text]
        assert first[0] == "the paper's fixed tau" and all(x.startswith("addition: ") for x in first[1:])
    assert {r[1].text for t in build(db, HELPERS, Context()) for r in t.rows} == {"0.650"}
    assert all(
        "paper's share" in t.headers and "share captured (addition)" in t.headers for t in build(db, BUDGET, Context())
    )
    answers = [r for t in build(db, ANSWERS, Context()) for r in t.rows]
    assert {(r[1].text, r[4].text) for r in answers} == {
        ("–", "all"),
        ("0.65", "all"),
        ("0.65", "triggered"),
        ("0.65", "untriggered"),
    }


def test_the_report_shows_rewriting_only_when_its_marts_have_rows(db, con):
    page = render_report(db, load_config(None), "all-MiniLM-L6-v2", {})
    assert '<a href="#rw-solo">' in page and '<section id="rw-pareto">' in page
    assert '<section id="contrasts">' in page  # the chunking sections are unchanged (and say not run here)
    assert rewriting_sections(con) == []  # a fresh warehouse: no rewriting marts
    con.execute("CREATE TABLE rewrite_solo (corpus VARCHAR)")
    assert rewriting_sections(con) == []  # built but empty
    assert "rw-solo" not in render_report(con, load_config(None), "all-MiniLM-L6-v2", {})


def test_sub_sections_without_rows_say_not_run(db):
    con = duckdb.connect()
    con.register("solo_rows", db.sql("SELECT * FROM rewrite_solo").to_arrow_table())
    con.execute("CREATE TABLE rewrite_solo AS SELECT * FROM solo_rows")
    page = "".join(rewriting_sections(con))
    for reason in (
        "rewrite_ensembles is empty",
        "rewrite_budget_baselines is empty",
        "rewrite_router_sweep is empty",
        "rewrite_jaccard is empty",
        "rewrite_router_pareto is empty",
        "rewrite_query_type_cuts is empty",
        "the reader stage has not run",
    ):
        assert reason in page, reason
    con.close()


def test_tiny_model_output_is_labelled():
    con = duckdb.connect()
    con.execute("CREATE TABLE rewrites AS SELECT 'k1' AS llm_call_key")
    con.execute("CREATE TABLE llm_calls AS SELECT 'k1' AS cache_key, 'HuggingFaceTB/SmolLM2-135M-Instruct' AS model")
    assert "TINY-MODEL OUTPUT, NOT RESULTS" in _tiny_model_label(con) and "SmolLM2-135M" in _tiny_model_label(con)
    con.execute("UPDATE llm_calls SET model = 'Qwen/Qwen2.5-7B-Instruct'")
    assert _tiny_model_label(con) == ""
