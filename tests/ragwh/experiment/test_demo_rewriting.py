"""``experiments/demo-rewriting.yml`` end to end on its bundled corpus (30 questions), once per module: the README's
rewriting SQL runs against it, and the rewriting paper tables are written from its marts.

The tiny packaged LLM is swapped for a scripted OpenAI-compatible server on 127.0.0.1 (the same prompts, instant
answers: tests/ingest/rewriting/fixtures.py), so the module costs one `ragwh run` of the demo without the
model's generation time (~1-2 min on 2 cores: MiniLM embeddings, two dbt builds); the tiny model's own run
time is measured in benchmarks/README.md."""

from __future__ import annotations

import re

import duckdb
import pytest
from typer.testing import CliRunner

from ragwh.cli import app
from ragwh.experiment.config.rewriting import load_experiment
from ragwh.experiment.tables import export_tables
from tests.ingest.llm.chat_server import ChatServer
from tests.ingest.rewriting.fixtures import respond_http
from tests.ragwh.experiment.test_tables import check_latex
from warehouse.paths import PROJECT_ROOT

CONFIG = PROJECT_ROOT / "experiments" / "demo-rewriting.yml"


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("demo_rewriting")
    warehouse = tmp / "demo.duckdb"
    with pytest.MonkeyPatch.context() as mp, ChatServer(respond_http) as server:
        for var in ("RAGWH_LLM_REPLAY_ONLY",):
            mp.delenv(var, raising=False)
        mp.setenv("RAGWH_LLM_BACKEND", "openai")
        mp.setenv("RAGWH_LLM_BASE_URL", server.base_url)
        mp.setenv("RAGWH_LLM_MODEL", "test-model")
        args = ["run", "--config", str(CONFIG), "--warehouse", str(warehouse), "--report", str(tmp / "demo.html")]
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 0, result.output
        asked = server.n_requests
        # a rerun with nothing changed makes no LLM call: failed answers are final after one run (llm.max_attempts 1)
        rerun = CliRunner().invoke(app, args)
        assert rerun.exit_code == 0, rerun.output
        assert server.n_requests == asked and "> rewrite [" not in rerun.output and "> read [" not in rerun.output
        config = load_experiment(CONFIG)
    assert "DEMO NUMBERS, NOT RESULTS" in (tmp / "demo.html").read_text()
    return warehouse, config, tmp


def readme_rewriting_sql() -> list[str]:
    """The statements of the README's rewriting SQL section, as written there."""
    text = (PROJECT_ROOT / "README.md").read_text()
    section = text.split("## The query-rewriting study in SQL", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```sql\n(.*?)```", section, re.S)
    statements = [s.strip() for block in blocks for s in block.split(";\n")]
    return [s.rstrip(";") for s in statements if s and not all(line.startswith("--") for line in s.splitlines())]


def test_the_readme_rewriting_sql_answers_on_the_demo(demo):
    statements = readme_rewriting_sql()
    assert len(statements) == 3
    con = duckdb.connect(str(demo[0]), read_only=True)
    try:
        for sql in statements:
            assert con.execute(sql).fetchall(), sql
        assert con.execute("SELECT count(DISTINCT query_id) FROM queries").fetchone()[0] == 30
        assert con.execute("SELECT count(*) FROM rewrite_answer_quality").fetchone()[0] > 0
        # the demo has misses to rescue: the dense baseline (no LLM involved) misses 15-50% of its questions
        s1_miss = con.execute("SELECT miss_rate FROM rewrite_failure_modes WHERE strategy = 'S1'").fetchone()[0]
        assert 0.15 <= s1_miss <= 0.5, s1_miss
    finally:
        con.close()


def test_rewriting_paper_tables_from_the_demo(demo):
    warehouse, config, tmp = demo
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        result = export_tables(con, config, tmp / "tables")
        # the marks are the paper's: the uncorrected paired-bootstrap p (Holm's p is an added column)
        solo = con.execute("SELECT strategy, metric, p_value FROM rewrite_solo WHERE strategy <> 'S1'").fetchall()
    finally:
        con.close()
    written = {p.name for p in result.files}
    for name in (
        "rewriting-solo",
        "rewriting-oracle",
        "rewriting-ensembles",
        "rewriting-router",
        "rewriting-budget",
        "rewriting-tau-sweep",
        "rewriting-helpers",
        "rewriting-answers",
    ):
        assert {f"{name}.tex", f"{name}.csv", f"{name}.md"} <= written, name
    tex = (tmp / "tables" / "rewriting-solo.tex").read_text()
    assert "DEMO NUMBERS, NOT RESULTS" in tex and r"\textbf{" in tex and r"$\pm$" in tex
    marked = sum(p is not None and p < 0.05 for _, _, p in solo)
    assert tex.count(r"\textsuperscript{*") - tex.count(r"\hphantom{\textsuperscript{") == marked
    check_latex(tmp / "tables" / "tables.tex")
