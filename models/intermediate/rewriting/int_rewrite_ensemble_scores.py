"""Every subset of the solo strategies x every fusion rule (max, rrf, combsum, combmnz), scored per
complete group (cell x seed x query) with HIT@10, R@10, nDCG@10 and MRR@10: the kernel of
udfs/ensembles.py over int_rewrite_fusion_input, emitting metrics only (no fused list is stored). The
kernel's (rule, chunk) pieces run on one thread per core the process may use (at most 4): the table is the
same bit for bit with any number."""

import numpy as np

from udfs.cores import usable_cores
from udfs.ensembles import ensemble_table


def model(dbt, session):
    dbt.config(materialized="table", tags=["rewriting"])
    rrf_k = rrf_constant(dbt.config.get("rrf_k"), dbt.config.get("rrf_k_default"), session)
    # each dbt.ref on its own line: dbt finds a python model's refs by parsing these calls
    groups = dbt.ref("int_rewrite_groups")
    runs = dbt.ref("int_rewrite_fusion_input")
    subsets = dbt.ref("int_rewrite_subsets")
    strategies = dbt.ref("int_rewrite_solo_strategies")
    masks = np.array([m for (m,) in subsets.order("subset_mask").project("subset_mask").fetchall()], dtype=np.int64)
    return ensemble_table(
        runs.order("group_id, doc_id, bit").to_arrow_table(),
        groups.filter("complete").order("group_id").project("group_id, n_relevant, cell_mask").to_arrow_table(),
        masks,
        len(strategies.fetchall()),
        k=10,
        rrf_k=rrf_k,
        workers=min(4, usable_cores()),
    )


def rrf_constant(passed, default, session) -> int:
    """The setting rewriting_rrf_k as macro setting resolves it: --vars, else experiment_settings, else the default."""
    if passed not in (None, ""):
        return int(passed)
    # fetchall: a connection may not start other work while a result is unfinished
    exists = session.execute(
        "SELECT count(*) FROM duckdb_tables() WHERE schema_name = 'main' AND table_name = 'experiment_settings'"
    ).fetchall()[0][0]
    rows = (
        session.execute("SELECT value_json FROM experiment_settings WHERE name = 'rewriting_rrf_k'").fetchall()
        if exists
        else []
    )
    return int(rows[0][0]) if rows else int(default)
