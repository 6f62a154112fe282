"""Induced section structure: TextTiling over paragraph embeddings, or an LLM (see :mod:`.stage`).

The stage's names are loaded on first use (PEP 562), so that importing ``ingest.structure.segments``
(as ``ingest.corpora.docs`` does) does not import the stage, which itself imports ``ingest.corpora.docs``.
"""
from __future__ import annotations

__all__ = ["INDUCERS", "induce", "induction_report"]


def __getattr__(name: str):
    if name in __all__:
        from ingest.structure import stage

        return getattr(stage, name)
    raise AttributeError(f"module 'ingest.structure' has no attribute {name!r}")
