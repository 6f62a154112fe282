"""One dbt build of the rewriting marts on a small synthetic warehouse with bad input planted and a
hand-made cell (hand_case.py), shared by the tests of this folder; each test recomputes a mart from the
loaded tables (tests/models/rewriting/reference.py) and compares."""

from __future__ import annotations

import pytest

from tests.fixtures.synthetic_rewriting import Scale, load_synthetic
from tests.models.rewriting.hand_case import load_hand_case
from warehouse.db import connect
from warehouse.dbt import run_dbt

B = 300
SEED = 17
VARS = {"rewriting_bootstrap_b": B, "rewriting_bootstrap_seed": SEED}
#: two corpora with a reranker, all strategies and the controls; a cosine-only stack without S3 and controls
RERANKED = Scale(corpora=(("hotpotqa", 60), ("ambignq", 40)))
COSINE = Scale(
    corpora=(("scifact", 30),),
    embedder="all-MiniLM-L6-v2",
    reranker="none",
    strategies=("S1", "S2", "S4", "HyDE", "Q2D"),
    reader_helper=None,
)


def build(warehouse, tmp, vars=VARS):
    """``dbt build --select +tag:rewriting --indirect-selection cautious`` (the documented command)."""
    return run_dbt(
        "build",
        warehouse,
        select="+tag:rewriting",
        vars=vars,
        progress=False,
        extra=["--indirect-selection", "cautious", "--target-path", str(tmp / "target")],
    )


@pytest.fixture(scope="package")
def warehouse(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("rewriting")
    wh = tmp / "rewriting.duckdb"
    con = connect(wh)
    load_synthetic(con, RERANKED, seed=3)
    load_synthetic(con, COSINE, seed=4, replace=False)
    load_hand_case(con)  # three queries whose seed-42 ensembles are computed by hand (hand_case.py)
    # bad input, each counted, never silently dropped:
    con.execute("delete from qrels where query_id = 'hotpotqa/q00003'")  # no relevant judgment
    for table in ("rewrite_runs", "rewrite_text_runs"):  # a NaN in one ranking (and in the text list behind it)
        con.execute(f"""update {table} set score = 'nan'::double
                        where query_id = 'ambignq/q00005' and strategy = 'S2' and seed = 123 and doc_id = (
                          select doc_id from rewrite_runs where query_id = 'ambignq/q00005' and strategy = 'S2'
                          and seed = 123 and rank = 1 and corpus = 'ambignq')""")
    con.execute("delete from rewrite_runs where query_id = 'scifact/q00002' and strategy = 'S4' and seed = 42")
    con.execute("delete from query_answers where query_id = 'hotpotqa/q00010'")  # no gold answer
    con.close()
    build(wh, tmp)
    return wh, tmp


@pytest.fixture(scope="package")
def db(warehouse):
    con = connect(warehouse[0], read_only=True)
    yield con
    con.close()
