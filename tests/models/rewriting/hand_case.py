"""A hand-made cell of three queries, small enough to compute the paper's seed-42 ensembles by hand.

Cell ('hand', 'hand-embedder', 'hand-reranker'): solo strategies S1, HyDE and Q2D at seeds 42 and 123,
one relevant document per query (hand/r1, hand/r2, hand/r3). The lists (document, stage score):

    q1  S1    both seeds  d01 .90, d02 .80, d03 .70, d04 .60, d05 .55             miss
        HyDE  42          r1 .65, d01 .50                                          hit at 1
              123         d01 .50                                                  miss
        Q2D   42          d11 .95, d12 .93                                         miss
              123         r1 .99                                                   hit at 1
    q2  S1    both seeds  r2 .90, d01 .50                                          hit at 1
        HyDE  42          d02 .995, d03 .985, ..., d11 .905 (ten documents)        miss
              123         r2 .80                                                   hit at 1
        Q2D   42          r2 .40                                                   hit at 1
              123         d01 .30                                                  miss
    q3  S1    42          d01 .80                                                  miss
              123         d01 .80, r3 .70                                          hit at 2
        HyDE  42          r3 .90                                                   hit at 1
              123         d05 .30                                                  miss
        Q2D   42          d05 .20                                                  miss
              123         r3 .95                                                   hit at 1

Seed 42 by hand. Solo HIT@10: S1 1/3 (q2), HyDE 2/3 (q1, q3), Q2D 1/3 (q2): the best solo method on
seed 42 is HyDE (pooled over both seeds all three have 1/2 and the best is S1, the baseline first on
ties). The union of the members' lists merged by max score and cut at 10 (the paper's ensembles):

    S1+Q2D       q1 d11 .95, d12 .93, d01 .90, ... (no r1): miss; q2 r2 .90 first: hit, MRR 1;
                 q3 d01 .80, d05 .20: miss              -> HIT@10 1/3, MRR@10 1/3
    S1+HyDE+Q2D  q1 d11, d12, d01, d02, d03, r1 .65 at 6: hit, MRR 1/6; q2 HyDE's ten documents
                 (.995 .. .905) rank before r2 .90, which falls to 11: miss (the cut at 10);
                 q3 r3 .90 first: hit, MRR 1        -> HIT@10 2/3, MRR@10 7/18
    HyDE+Q2D     q1 d11, d12, r1 at 3: MRR 1/3; q2 r2 .40 at 11: miss; q3 r3 first
                                                    -> HIT@10 2/3, MRR@10 4/9

Deltas against the seed-42 best solo (HyDE, per query): HIT@10 S1+Q2D (-1, +1, -1) -> -1/3,
S1+HyDE+Q2D and HyDE+Q2D (0, 0, 0) -> 0; MRR@10 S1+HyDE+Q2D (1/6 - 1, 0, 0) -> -5/18.
The oracle union of S1+HyDE+Q2D at seed 42 hits every query (1.0) against its best member HyDE (2/3).

S1 at seed 42 searched an HNSW graph (index seed 42): its dense pools record which chunks exact search's
top P holds (``in_exact``): q1 (yes, yes, no, yes) recall 3/4, q2 (yes, yes) 1, q3 (yes, no) 1/2 ->
rewrite_ann_recall: 3 pools, 8 chunks, mean 3/4, min 1/2, share with full recall 1/3. S1 at seed 123
searched exactly (ann_seed NULL): not in the mart.
"""

from __future__ import annotations

import pyarrow as pa

from warehouse.db import replace_where, transaction
from warehouse.schema import arrow_schema

CELL = ("hand", "hand-embedder", "hand-reranker")
SEEDS = (42, 123)
QUERY_TYPES = {"hand/q1": "bridge", "hand/q2": "comparison", "hand/q3": "comparison"}
RELEVANT = {"hand/q1": "hand/r1", "hand/q2": "hand/r2", "hand/q3": "hand/r3"}
#: S1 seed 42's HNSW dense pools: (document, in exact search's top P) in dense rank order (module doc)
S1_HNSW_POOLS = {
    "q1": [("d01", True), ("d02", True), ("d07", False), ("d03", True)],
    "q2": [("r2", True), ("d01", True)],
    "q3": [("d01", True), ("d09", False)],
}

_S1_Q1 = [("d01", 0.90), ("d02", 0.80), ("d03", 0.70), ("d04", 0.60), ("d05", 0.55)]
LISTS: dict[tuple[str, int, str], list[tuple[str, float]]] = {
    **{("S1", s, "q1"): _S1_Q1 for s in SEEDS},
    ("HyDE", 42, "q1"): [("r1", 0.65), ("d01", 0.50)],
    ("HyDE", 123, "q1"): [("d01", 0.50)],
    ("Q2D", 42, "q1"): [("d11", 0.95), ("d12", 0.93)],
    ("Q2D", 123, "q1"): [("r1", 0.99)],
    **{("S1", s, "q2"): [("r2", 0.90), ("d01", 0.50)] for s in SEEDS},
    ("HyDE", 42, "q2"): [(f"d{i + 2:02d}", round(0.995 - 0.01 * i, 3)) for i in range(10)],
    ("HyDE", 123, "q2"): [("r2", 0.80)],
    ("Q2D", 42, "q2"): [("r2", 0.40)],
    ("Q2D", 123, "q2"): [("d01", 0.30)],
    ("S1", 42, "q3"): [("d01", 0.80)],
    ("S1", 123, "q3"): [("d01", 0.80), ("r3", 0.70)],
    ("HyDE", 42, "q3"): [("r3", 0.90)],
    ("HyDE", 123, "q3"): [("d05", 0.30)],
    ("Q2D", 42, "q3"): [("d05", 0.20)],
    ("Q2D", 123, "q3"): [("r3", 0.95)],
}

#: (subset, metric) -> (value, delta vs the seed-42 best solo HyDE) at seed 42, by hand (module doc)
SEED42 = {
    ("S1+Q2D", "HIT@10"): (1 / 3, -1 / 3),
    ("S1+HyDE+Q2D", "HIT@10"): (2 / 3, 0.0),
    ("HyDE+Q2D", "HIT@10"): (2 / 3, 0.0),
    ("S1+Q2D", "MRR@10"): (1 / 3, -1 / 3),
    ("S1+HyDE+Q2D", "MRR@10"): (7 / 18, -5 / 18),
    ("HyDE+Q2D", "MRR@10"): (4 / 9, -2 / 9),
}


def _table(name: str, rows: list[dict]) -> pa.Table:
    return pa.Table.from_pylist(rows, schema=arrow_schema(name))


def load_hand_case(con) -> None:
    """Append the hand-made cell to the warehouse (documents, queries, qrels, the strategies' texts,
    their MMR lists and the merged runs, lineage-consistent: every list is one original text's)."""
    corpus, embedder, reranker = CELL
    doc_ids = sorted(
        {f"hand/{d}" for lst in [*LISTS.values(), *S1_HNSW_POOLS.values()] for d, _ in lst} | set(RELEVANT.values())
    )
    runs, texts, text_runs = [], [], []
    for (strategy, seed, q), lst in sorted(LISTS.items()):
        query_id = f"hand/{q}"
        texts.append(
            {
                "corpus": corpus,
                "embedder": embedder,
                "query_id": query_id,
                "strategy": strategy,
                "seed": seed,
                "variant_idx": 0,
                "text": f"question {q}",
                "cosine": 1.0,
                "kept": True,
                "reason": "original",
                "llm_call_key": None,
            }
        )
        for rank, (d, score) in enumerate(lst, 1):
            runs.append(
                {
                    "corpus": corpus,
                    "embedder": embedder,
                    "reranker": reranker,
                    "strategy": strategy,
                    "seed": seed,
                    "query_id": query_id,
                    "rank": rank,
                    "doc_id": f"hand/{d}",
                    "score": score,
                    "variant_idx": 0,
                }
            )
            text_runs.append(
                {
                    "corpus": corpus,
                    "embedder": embedder,
                    "reranker": reranker,
                    "pool": 20,
                    "strategy": strategy,
                    "seed": seed,
                    "query_id": query_id,
                    "variant_idx": 0,
                    "stage": "mmr",
                    "rank": rank,
                    "chunk_id": f"sentence:512/50|hand/{d}|0",
                    "doc_id": f"hand/{d}",
                    "score": score,
                    "ann_seed": 42 if (strategy, seed) == ("S1", 42) else None,
                }
            )
        if (strategy, seed) == ("S1", 42):
            for rank, (d, exact) in enumerate(S1_HNSW_POOLS[q], 1):
                text_runs.append(
                    {
                        "corpus": corpus,
                        "embedder": embedder,
                        "reranker": reranker,
                        "pool": 20,
                        "strategy": strategy,
                        "seed": seed,
                        "query_id": query_id,
                        "variant_idx": 0,
                        "stage": "dense",
                        "rank": rank,
                        "chunk_id": f"sentence:512/50|hand/{d}|0",
                        "doc_id": f"hand/{d}",
                        "score": 1.0 - rank / 10,
                        "ann_seed": 42,
                        "in_exact": exact,
                    }
                )
    tables = {
        "documents": _table(
            "documents",
            [
                {
                    "doc_id": d,
                    "corpus": corpus,
                    "title": d,
                    "text": f"Doc {d}\n\nhand passage",
                    "topic_bucket": None,
                    "split": None,
                    "source_file": "hand",
                }
                for d in doc_ids
            ],
        ),
        "queries": _table(
            "queries",
            [
                {"query_id": q, "doc_id": None, "corpus": corpus, "text": f"hand question {q}", "query_type": t}
                for q, t in QUERY_TYPES.items()
            ],
        ),
        "qrels": _table("qrels", [{"query_id": q, "doc_id": d, "relevance": 1} for q, d in RELEVANT.items()]),
        "rewrites": _table("rewrites", texts),
        "rewrite_text_runs": _table("rewrite_text_runs", text_runs),
        "rewrite_runs": _table("rewrite_runs", runs),
    }
    with transaction(con):
        for name, table in tables.items():
            replace_where(con, name, "false", [], table)
