"""Command-line overrides of an experiment config (``ragwh run --limit N --precision P``).

They are applied to the YAML mapping before it is validated, so an overridden config is validated
like any other, its resolved form (and hash) says what ran, and ``ragwh report`` re-applies the
overrides a run recorded before comparing a config with the warehouse's experiment.
"""

from __future__ import annotations

import copy
from typing import Any

#: the overrides ``ragwh run`` accepts (config key -> what it replaces)
OVERRIDES = ("limit", "precision")


def apply_overrides(raw: Any, overrides: dict[str, Any] | None) -> Any:
    """``raw`` (a parsed experiment YAML) with ``overrides`` applied: ``limit`` replaces the top-level
    ``limit``; ``precision`` the top-level ``precision`` and every per-model ``precision`` (the CLI
    flag forces one precision for every model)."""
    if not overrides or not isinstance(raw, dict):
        return raw
    unknown = sorted(set(overrides) - set(OVERRIDES))
    if unknown:
        raise ValueError(f"unknown override(s) {unknown} (known: {', '.join(OVERRIDES)})")
    out = copy.deepcopy(raw)
    if overrides.get("limit") is not None:
        out["limit"] = overrides["limit"]
    if overrides.get("precision") is not None:
        out["precision"] = overrides["precision"]
        for key in ("embedders", "rerankers"):
            for entry in out.get(key) or []:
                if isinstance(entry, dict):
                    entry.pop("precision", None)
    return out
