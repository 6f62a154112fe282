"""Induced section structure: TextTiling over paragraph embeddings, or an LLM (see :mod:`.stage`).

The stage's names are imported on first use (PEP 562): ``ingest.structure.segments`` is imported by
the corpus readers that the stage itself imports, so an eager import here would be circular."""

from __future__ import annotations

__all__ = ["INDUCERS", "induce", "induction_report"]


def __getattr__(name: str):
    if name in __all__:
        from ingest.structure import stage

        return getattr(stage, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
