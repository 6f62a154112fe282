"""Induced section structure: TextTiling over paragraph embeddings, or an LLM (see :mod:`.stage`)."""
from __future__ import annotations

from ingest.structure.stage import INDUCERS, induce, induction_report

__all__ = ["INDUCERS", "induce", "induction_report"]
