"""The HTML report: every section from mart rows, 'not run' with reasons on an empty warehouse, and a
real render in headless Chromium."""

from __future__ import annotations

import shutil
import struct
import subprocess
import zlib

from ragwh.experiment.config.chunking import load_config
from ragwh.experiment.report import render_report, write_report

CELL = ("demo", "all-MiniLM-L6-v2", "none")
CONDITIONS = ["A0", "A2", "A3-d1", "A3-d2", "A3", "A4", "G2", "G3-d1", "G3-d2", "G3", "G4", "P"]
METRICS = ["cov-nDCG@10", "MRR", "nDCG@10", "R@50", "TBC@512", "TBC@1024", "TBC@2048"]


def _fill_marts(con) -> None:
    """Mart tables with the evaluation models' columns and a few hand-made rows."""
    con.execute("""CREATE TABLE contrasts AS SELECT *, 'preregistered' AS family, embedder AS control_embedder,
            3 AS family_size, 10000 AS n_boot, 1 AS n_far_side FROM (VALUES
        ('C2', 'A3', 'P', 'demo', 'all-MiniLM-L6-v2', 'none', 'cov-nDCG@10', 20, 5, 0.031, 0.010, 0.052, 0.004, 0.012, 0.41, TRUE),
        ('C3', 'G3', 'A3', 'demo', 'all-MiniLM-L6-v2', 'none', 'cov-nDCG@10', 20, 5, -0.020, -0.061, 0.018, 0.310, 0.620, -0.20, TRUE),
        ('C4', 'A4', 'A3', 'demo', 'all-MiniLM-L6-v2', 'none', 'cov-nDCG@10', 20, 5, 0.000, -0.010, 0.010, 1.000, 1.000, 0.00, TRUE),
        ('C2', 'A3', 'P', 'demo', 'all-MiniLM-L6-v2', 'none', 'MRR', 20, 5, 0.050, -0.010, 0.110, 0.090, 0.270, 0.30, FALSE))
        AS t(contrast, treatment, control, corpus, embedder, reranker, metric, n_queries, n_docs, mean_delta, ci_low, ci_high,
             p_value, p_holm, dz, is_primary)""")
    con.execute("""CREATE TABLE primary_contrasts AS SELECT *, 0.05 AS mde, mean_delta AS mixed_coef, 0.01 AS mixed_se,
        ci_low AS mixed_ci_low, ci_high AS mixed_ci_high, p_value AS mixed_p_value, TRUE AS mixed_converged
        FROM contrasts WHERE is_primary""")
    rows = [
        (
            *CELL,
            c,
            m,
            20,
            5,
            0.5 + 0.01 * i + 0.02 * j,
            0.2,
            0.45 + 0.01 * i + 0.02 * j,
            0.55 + 0.01 * i + 0.02 * j,
            2000,
        )
        for i, c in enumerate(CONDITIONS)
        for j, m in enumerate(METRICS)
    ]
    con.execute(
        "CREATE TABLE condition_means (corpus VARCHAR, embedder VARCHAR, reranker VARCHAR, condition VARCHAR, "
        "metric VARCHAR, n_queries BIGINT, n_docs BIGINT, mean_value DOUBLE, sd_value DOUBLE, ci_low DOUBLE, "
        "ci_high DOUBLE, n_boot BIGINT)"
    )
    con.executemany("INSERT INTO condition_means VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
    con.execute("""CREATE TABLE metric_cuts AS
        SELECT corpus, embedder, reranker, condition, metric, 'query_type' AS cut, qt AS cut_value,
               10 AS n_queries, mean_value AS mean_value
        FROM condition_means, (VALUES ('extractive'), ('boolean')) AS q(qt)
        UNION ALL SELECT corpus, embedder, reranker, condition, metric, 'topic_bucket', '(none)', 20, mean_value
        FROM condition_means""")
    con.execute("""CREATE TABLE dose_response AS SELECT * FROM (VALUES
        ('induced', 'demo', 'all-MiniLM-L6-v2', 'none', 'cov-nDCG@10', 4, 20, 0, 5, 0.01, -0.01, 0.03, 0.4),
        ('gold', 'demo', 'all-MiniLM-L6-v2', 'none', 'cov-nDCG@10', 4, 20, 0, 5, 0.02, 0.00, 0.04, 0.04))
        AS t(family, corpus, embedder, reranker, metric, n_levels, n_queries, n_dropped, n_docs, slope, ci_low, ci_high, p_value)""")
    con.execute("""CREATE TABLE section_recall_summary AS SELECT * FROM (VALUES
        ('demo', 'all-MiniLM-L6-v2', 'A4', 20, 19, 1, 18, 18 / 19), ('demo', 'all-MiniLM-L6-v2', 'G4', 20, 19, 1, 19, 1.0))
        AS t(corpus, embedder, condition, n_queries, n_judged, n_unjudged, n_recalled, section_recall)""")
    con.execute("""INSERT INTO funnel VALUES ('demo', 'questions', 'input', 23), ('demo', 'questions', 'kept', 20),
        ('demo', 'questions', 'unanswerable', 1), ('demo', 'questions', 'numeric_only', 2)""")
    con.execute("""INSERT INTO chunks SELECT cs, cs || '|demo/d|' || i, 'demo/d', i, 0, 1, tok, 0
        FROM (VALUES ('fixed', 250), ('structural:gold', 240), ('doc', 900)) AS t(cs, tok), range(5) AS r(i)""")


def test_every_section_renders_from_marts(con):
    _fill_marts(con)
    config = load_config(None)
    page = render_report(con, config, "all-MiniLM-L6-v2", {"A1": "no LLM backend", "C1": "A1 not run"})
    for anchor in ("contrasts", "forest", "means", "dose", "cuts", "budget", "routing", "funnel", "sizes", "notrun"):
        assert f'<section id="{anchor}">' in page, anchor
    assert page.count('src="data:image/svg+xml;base64,') == 5  # forest, dose, token budget, funnel, sizes
    assert "0.600 [0.550, 0.650]" in page  # Table 2: G4's cov-nDCG@10 mean with its clustered interval
    assert "<b>0.610 [0.560, 0.660]</b>" in page  # the best condition of the column (P here) in bold
    assert "DEMO NUMBERS, NOT RESULTS" in page
    assert "★ C2" in page and "MixedLM" in page and "0.947" in page  # section recall 18/19
    assert "C1: not run — A1 not run" in page
    assert "not run: no topic labels" in page  # QASPER-like corpus: every topic is '(none)'


def test_empty_warehouse_says_not_run_everywhere(con):
    page = render_report(con, load_config(None), "all-MiniLM-L6-v2", {})
    assert "<img" not in page
    for reason in (
        "contrasts mart is empty or absent",
        "condition_means mart is empty or absent",
        "no two-stage runs",
        "nothing was ingested",
        "no chunks",
    ):
        assert reason in page, reason


def _png_size_and_colours(path) -> tuple[int, int, int]:
    """Width, height and the number of distinct RGB(A) pixels of a PNG (8-bit, non-interlaced)."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos : pos + 8])
        chunk = data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", chunk[:10])
            channels = {2: 3, 6: 4}[colour]
        elif kind == b"IDAT":
            idat += chunk
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * channels + 1
    # sample the filter-free bytes of every 50th row: enough to tell a blank page from a rendered one
    samples = {
        raw[r * stride + 1 + i : r * stride + 1 + i + channels]
        for r in range(0, height, 50)
        for i in range(0, width * channels, channels * 7)
    }
    return width, height, len(samples)


def test_renders_in_headless_chromium(con, tmp_path):
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    assert chromium, "Chromium is required (Debian: apt-get install chromium); .ci/run installs it"
    _fill_marts(con)
    report = write_report(con, load_config(None), tmp_path / "report.html", {"A1": "no LLM backend"})
    shot = tmp_path / "shot.png"
    cmd = [
        chromium,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        f"--user-data-dir={tmp_path / 'profile'}",
        "--window-size=1200,3000",
        f"--screenshot={shot}",
        report.as_uri(),
    ]
    subprocess.run(cmd, check=True, capture_output=True, timeout=120)
    width, height, colours = _png_size_and_colours(shot)
    assert (width, height) == (1200, 3000)
    assert colours > 20, "the screenshot is (nearly) blank"


def test_truncation_exclusions_and_a_zero_p(con):
    """The truncation table next to the contrasts, the index coverage and exclusion funnel, and a
    bootstrap p of exactly 0 shown as < 1/B (its Holm adjustment over m contrasts as < m/B)."""
    _fill_marts(con)
    con.execute("DROP TABLE contrasts")
    con.execute("""CREATE TABLE contrasts AS SELECT *, 'preregistered' AS family, embedder AS control_embedder FROM (VALUES
        ('C2', 'A3', 'P', 'demo', 'all-MiniLM-L6-v2', 'none', 'cov-nDCG@10', 20, 5, 0.031, 0.010, 0.052, 0.0, 0.0, 3, 0.41,
         TRUE, 10000, 0),
        ('C3', 'G3', 'A3', 'demo', 'all-MiniLM-L6-v2', 'none', 'cov-nDCG@10', 20, 5, -0.020, -0.061, 0.018, 0.31, 0.62, 3,
         -0.2, TRUE, 10000, 1550))
        AS t(contrast, treatment, control, corpus, embedder, reranker, metric, n_queries, n_docs, mean_delta, ci_low,
             ci_high, p_value, p_holm, family_size, dz, is_primary, n_boot, n_far_side)""")
    con.execute("""CREATE TABLE embedding_truncation AS SELECT * FROM (VALUES
        ('demo', 'all-MiniLM-L6-v2', 'A2', 254, 100, 7, 0.07::double, 350, 0.0123::double, 50.0::double, 0),
        ('demo', 'all-MiniLM-L6-v2', 'A3', 254, 100, 19, 0.19::double, 1200, 0.0421::double, 63.2::double, 0))
        AS t(corpus, embedder, condition, max_tokens, n_texts, n_truncated, share_truncated, tokens_cut,
             content_share_cut, mean_cut_when_truncated, n_uncounted)""")
    con.execute("""CREATE TABLE condition_index AS SELECT * FROM (VALUES
        ('demo', 'A3', 5, 60, 1, 11, 200.0, 12.0), ('demo', 'G3', 5, 58, 0, 0, 210.0, 11.0))
        AS t(corpus, condition, n_docs, n_chunks, n_fallback_docs, n_fallback_chunks, mean_content_tokens,
             mean_prefix_tokens)""")
    con.execute("""CREATE TABLE evaluation_exclusions AS SELECT * FROM (VALUES
        ('demo', 'all-MiniLM-L6-v2', 'none', 'A3', 'scored', 17, 4), ('demo', 'all-MiniLM-L6-v2', 'none', 'A3',
         'structure_fallback', 3, 1), ('demo', 'other', 'none', 'A3', 'scored', 99, 9))
        AS t(corpus, embedder, reranker, condition, reason, n_queries, n_docs)""")
    page = render_report(con, load_config(None), "all-MiniLM-L6-v2", {})
    for anchor in ("truncation", "exclusions"):
        assert f'<section id="{anchor}">' in page, anchor
    assert page.index('id="contrasts"') < page.index('id="truncation"') < page.index('id="forest"')
    assert "&lt; 3/10,000" in page  # Table 1's Holm p of a bootstrap p = 0 adjusted over m = 3 contrasts
    assert "0.310" in page and "19.0%" in page and "4.21%" in page
    assert "structure_fallback" in page and "3 <small>(1)</small>" in page and ">99 <" not in page


def test_the_primary_embedder_is_found_at_its_stored_precision(con, monkeypatch):
    """The marts name the embedder with its precision (all-MiniLM-L6-v2@bf16); the report's primary cell does too."""
    import ingest.retrieval.precision as precision
    from ragwh.experiment.report.data import primary_embedder_name

    _fill_marts(con)
    config = load_config(None)
    monkeypatch.setattr(precision, "cpu_bf16_feature", lambda: "amx_bf16")
    assert primary_embedder_name(con, config) == "all-MiniLM-L6-v2"  # what the marts hold (written on another machine)
    con.execute("UPDATE condition_means SET embedder = embedder || '@bf16'")
    assert primary_embedder_name(con, config) == "all-MiniLM-L6-v2@bf16"
    monkeypatch.setattr(precision, "cpu_bf16_feature", lambda: None)
    assert primary_embedder_name(con, config) == "all-MiniLM-L6-v2@bf16"  # the one precision stored
