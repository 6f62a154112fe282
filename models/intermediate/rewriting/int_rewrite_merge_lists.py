"""The always-merge lists: for every complete group and every helper (a solo strategy other than the
baseline), the max-score union of the baseline's and the helper's documents, top 10 (udfs/fusion/comb_max.py,
ties by doc_id; udfs/ensembles.py::merge_table). What the router expands to and the reader reads."""

from udfs.ensembles import merge_table


def model(dbt, session):
    dbt.config(materialized="table", tags=["rewriting"])
    # each dbt.ref on its own line: dbt finds a python model's refs by parsing these calls
    groups = dbt.ref("int_rewrite_groups")
    runs = dbt.ref("int_rewrite_fusion_input")
    strategies = dbt.ref("int_rewrite_solo_strategies")
    n_groups = groups.filter("complete").aggregate("count(*)").fetchall()[0][0]
    bits = [b for (b,) in strategies.order("bit").project("bit").fetchall()]
    return merge_table(
        runs.order("group_id, doc_id, bit").to_arrow_table(),
        n_groups,
        base_bit=0,
        helper_bits=[b for b in bits if b != 0],
        n_runs=len(bits),
        k=10,
    )
