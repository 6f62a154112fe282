"""LLM-written, leakage-filtered queries over gold spans (the Wikipedia benchmark; see :mod:`.stage`)."""

from __future__ import annotations

from ingest.genqueries.stage import QUERY_TYPES, generate_queries

__all__ = ["QUERY_TYPES", "generate_queries"]
