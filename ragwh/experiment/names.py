"""Names as users type them: a bare model name matches its stored precision variants, and an unknown
corpus, condition or system is a one-line error listing what the warehouse holds.

Stored embedder / reranker names carry the precision they computed in (``all-MiniLM-L6-v2@bf16``;
fp32 is the bare name: :func:`ingest.retrieval.precision.stored_name`). :func:`resolve_model` maps
what a user passes to the one stored name it means, as dbt's macro ``names_model`` does in SQL.
"""

from __future__ import annotations

from collections.abc import Iterable

import duckdb

from ingest.retrieval.precision import split_name


class UnknownName(ValueError):
    """A name that matches nothing stored, or several things; the message lists what exists."""


def _listed(values: Iterable[str]) -> str:
    values = sorted(values)
    return ", ".join(values) if values else "none"


def resolve_model(wanted: str, stored: Iterable[str], what: str = "embedder") -> str:
    """The stored name ``wanted`` means: itself when stored; else, for a name without a precision
    suffix, its one stored precision variant. Raises :class:`UnknownName` when none or several match."""
    stored = sorted(set(stored))
    if wanted in stored:
        return wanted
    base, suffix = split_name(wanted)
    matches = [s for s in stored if suffix is None and split_name(s)[0] == base]
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise UnknownName(f"{what} {wanted!r} matches several stored precisions ({_listed(matches)}): name one of them")
    raise UnknownName(f"no {what} {wanted!r} in the warehouse (stored: {_listed(stored)})")


def stored(con: duckdb.DuckDBPyConnection, table: str, column: str) -> list[str]:
    return [r[0] for r in con.execute(f"SELECT DISTINCT {column} FROM {table} WHERE {column} IS NOT NULL").fetchall()]


def check_corpus(con: duckdb.DuckDBPyConnection, corpus: str | None) -> None:
    """Raise :class:`UnknownName` unless ``corpus`` (None: all) has documents in the warehouse."""
    if corpus is None:
        return
    corpora = stored(con, "documents", "corpus")
    if corpus not in corpora:
        raise UnknownName(
            f"no corpus {corpus!r} in the warehouse (loaded: {_listed(corpora)}; load one with "
            "`ragwh ingest ...` or `ragwh run`)"
        )


def check_conditions(conditions: Iterable[str] | None) -> None:
    """Raise :class:`UnknownName` for a condition that seeds/conditions.csv does not define."""
    from ragwh.experiment.config.chunking import known_conditions

    known = known_conditions()
    unknown = [c for c in conditions or () if c not in known]
    if unknown:
        raise UnknownName(
            f"unknown condition(s) {', '.join(unknown)} (seeds/conditions.csv defines: {', '.join(known)})"
        )
