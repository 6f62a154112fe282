"""The cores this process may use: what a kernel or a stage that splits its work over threads sizes itself by
(the ensemble kernel's dbt model, the rewriting stage's HNSW graph builds)."""

from __future__ import annotations

import os


def usable_cores() -> int:
    """The cores this process may run on (all of them where the platform cannot say)."""
    affinity = getattr(os, "sched_getaffinity", None)  # Linux only
    return len(affinity(0)) if affinity else (os.cpu_count() or 1)
