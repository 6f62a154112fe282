"""What the report reads: marts and loaded tables of the warehouse, as plain rows.

A mart that was not built reads as no rows (the section then says 'not run'), never as an error.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass

import duckdb

from ragwh.experiment.config.chunking import ExperimentConfig
from warehouse.paths import PROJECT_ROOT


def relation_exists(con: duckdb.DuckDBPyConnection, name: str) -> bool:
    return bool(
        con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = ?", [name]).fetchone()[0]
    )


def fetch_rows(con: duckdb.DuckDBPyConnection, sql: str, params: list | dict | None = None) -> list[dict]:
    cur = con.execute(sql, params or [])
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r)) for r in cur.fetchall()]


def mart(con: duckdb.DuckDBPyConnection, name: str, order: str = "") -> list[dict]:
    """All rows of mart ``name`` ([] when it was not built)."""
    return fetch_rows(con, f"SELECT * FROM {name} {order}") if relation_exists(con, name) else []


def seed_rows(name: str) -> list[dict]:
    with open(PROJECT_ROOT / "seeds" / f"{name}.csv", newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def condition_order() -> list[str]:
    return [r["condition"] for r in seed_rows("conditions")]


def contrast_rows(con: duckdb.DuckDBPyConnection) -> list[dict]:
    """Every row of the ``contrasts`` mart with the seed's question, primary cell first."""
    if not relation_exists(con, "contrasts"):
        return []
    questions = {r["contrast"]: r for r in seed_rows("contrast_family")}
    rows = fetch_rows(
        con, "SELECT * FROM contrasts ORDER BY is_primary DESC, corpus, embedder, reranker, metric, contrast"
    )
    for r in rows:
        seed = questions.get(r["contrast"], {})
        r["question"] = seed.get("question", "") or ("declared" if r.get("family") == "declared" else "")
        treatment, control = (
            r.get("treatment") or seed.get("treatment", "?"),
            r.get("control") or seed.get("control", "?"),
        )
        if r.get("control_embedder", r["embedder"]) != r["embedder"]:
            treatment, control = f"{treatment}@{r['embedder']}", f"{control}@{r['control_embedder']}"
        r["arms"] = f"{treatment} − {control}"
    return rows


def held_metrics(con: duckdb.DuckDBPyConnection, primary: str) -> list[str]:
    """Metrics held in ``condition_means``, the primary metric first, then alphabetical (the registry's names are
    :func:`udfs.metrics.registry.registered_metrics`)."""
    if not relation_exists(con, "condition_means"):
        return []
    names = [r[0] for r in con.execute("SELECT DISTINCT metric FROM condition_means ORDER BY 1").fetchall()]
    natural = lambda m: [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", m)]  # TBC@512 < TBC@1024
    return sorted(names, key=lambda m: (m != primary, natural(m)))


def condition_means(con: duckdb.DuckDBPyConnection) -> list[dict]:
    """Rows of the ``condition_means`` mart with ``mean``, ``n``, ``n_docs`` and the 95% document-clustered
    bootstrap interval ``ci_low`` .. ``ci_high`` (a mart built before it had them: ``mean ± 1.96 · sd / √n``)."""
    if not relation_exists(con, "condition_means"):
        return []
    has_ci = con.execute(
        "SELECT count(*) FROM information_schema.columns WHERE table_name = 'condition_means' "
        "AND column_name = 'ci_low'"
    ).fetchone()[0]
    ci = (
        "ci_low, ci_high, n_docs"
        if has_ci
        else "mean_value - 1.96 * coalesce(sd_value, 0) / sqrt(greatest(n_queries, 1)) AS ci_low, "
        "mean_value + 1.96 * coalesce(sd_value, 0) / sqrt(greatest(n_queries, 1)) AS ci_high, NULL AS n_docs"
    )
    return fetch_rows(
        con,
        f"""
        SELECT corpus, embedder, reranker, condition, metric, mean_value AS mean, n_queries AS n, {ci}
        FROM condition_means ORDER BY corpus, embedder, reranker, condition, metric""",
    )


def primary_embedder_name(con: duckdb.DuckDBPyConnection, config: ExperimentConfig) -> str:
    """The stored name of the config's primary embedder: the model at the precision the config asks for,
    resolved on this machine (ingest.retrieval.precision); when the marts hold no such name but exactly
    one precision of the model (a report written on another machine), that one."""
    from ingest.retrieval.embedders import resolve_embedder
    from ingest.retrieval.precision import split_name

    model = config.primary.embedder
    name = resolve_embedder(model, config.precision_of(model)).name
    if not relation_exists(con, "condition_means"):
        return name
    stored = {r[0] for r in con.execute("SELECT DISTINCT embedder FROM condition_means").fetchall()}
    variants = sorted(e for e in stored if split_name(e)[0] == split_name(name)[0])
    return name if name in stored or len(variants) != 1 else variants[0]


@dataclass(frozen=True)
class Cell:
    corpus: str
    embedder: str
    reranker: str


def primary_cells(config: ExperimentConfig, embedder_name: str) -> list[Cell]:
    """The primary cell per corpus (the config's embedder x reranker; all corpora unless it names one)."""
    corpora = [config.primary.corpus] if config.primary.corpus else [c.name for c in config.corpora]
    return [Cell(c, embedder_name, config.primary.reranker) for c in corpora]
