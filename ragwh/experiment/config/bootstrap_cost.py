"""What a bootstrap of B replicates costs, and the ceilings over which a config is refused before any work.

Both studies bootstrap their statistics in the evaluation build (``udfs/stats/bootstrap.py``): the chunking study
every condition mean and contrast (``bootstrap.B``, documents resampled), the rewriting study every delta
(``analysis.bootstrap_b``, queries resampled). A lower bound of the cost, from how that code works:

- memory: a statistic's B replicate means are held at once (8 bytes each) and ``np.percentile`` sorts a
  copy: at least :data:`BYTES_PER_REPLICATE` x B bytes for each statistic; the rewriting study's paired
  bootstrap also keeps its B x n resampling counts (``udfs/stats/bootstrap.py``, ``_unit_counts``: 2 bytes a count
  below 65,536 units, else 8), shared by its statistics;
- time: drawing one unit (a document or a query) into one replicate takes at least :data:`NS_PER_DRAW`
  (measured 10-80 ns on one core), so P statistics over n units take at least B x P x n x 10 ns.

A config whose estimate exceeds :data:`MAX_BYTES` (2 GiB for one statistic: B up to ~134 million) or
:data:`MAX_SECONDS` (12 hours) is refused in one line with the estimate. When a config is read the units
are not known yet (1 is assumed: the estimate is a floor); ``ragwh run`` checks again with the corpora's
loaded documents or queries before the stages that use B. B = 10000 (the chunking study's default) resolves
a p-value to 1e-4; 2000 (the rewriting study's) to 5e-4.
"""

from __future__ import annotations

BYTES_PER_REPLICATE = 16
NS_PER_DRAW = 10
MAX_BYTES = 2 * 1024**3
MAX_SECONDS = 12 * 3600


def estimate(b: int, statistics: int, units: int, paired: bool = False) -> tuple[float, int]:
    """(seconds, bytes), lower bounds, of bootstrapping ``statistics`` statistics over ``units`` resampled units
    with ``b`` replicates (module docstring); ``paired``: the rewriting study's bootstrap, which keeps its counts."""
    counts = b * max(units, 1) * (2 if units < 2**16 else 8) if paired else 0
    return b * max(statistics, 1) * max(units, 1) * NS_PER_DRAW * 1e-9, b * BYTES_PER_REPLICATE + counts


def too_costly(b: int, statistics: int, units: int, unit_name: str, key: str) -> str | None:
    """None when a bootstrap of ``b`` replicates stays under both ceilings; else what the one-line refusal
    says after the file and key: the estimate, the ceilings and what to do. Queries as the units: the rewriting
    study's paired bootstrap (:func:`estimate`)."""
    seconds, memory = estimate(b, statistics, units, paired=unit_name == "queries")
    if seconds <= MAX_SECONDS and memory <= MAX_BYTES:
        return None
    return (
        f"{b} replicates would take at least {_duration(seconds)} ({statistics} bootstrapped statistics x "
        f"{units} {unit_name} x {NS_PER_DRAW} ns a draw) and {_size(memory)} of memory; the ceilings "
        f"are {_duration(MAX_SECONDS)} and {_size(MAX_BYTES)}: lower {key} (10000 resolves a p-value to 1e-4)"
    )


def _duration(seconds: float) -> str:
    if seconds >= 3600:
        return f"{seconds / 3600:,.1f} h"
    return f"{seconds / 60:,.1f} min" if seconds >= 60 else f"{seconds:.1f} s"


def _size(n: int) -> str:
    return f"{n / 1024**3:,.1f} GiB" if n >= 1024**3 else f"{n / 1024**2:,.0f} MiB"


def bootstrap_plan(config) -> tuple[int, str, int, str, str]:
    """(B, its config key, statistics per corpus, unit name, SQL counting the units of the config's corpora
    (parameter: their names)) of either study's config."""
    if hasattr(config, "bootstrap_b"):  # chunking: each condition mean and contrast, per system
        systems = len(config.embedders) * (1 + len(config.rerankers)) + (config.bm25 is not None)
        statistics = (len(config.conditions) + len(config.contrasts) + len(config.declared)) * systems
        return (
            config.bootstrap_b,
            "bootstrap.B",
            statistics,
            "documents",
            "SELECT count(DISTINCT coalesce(doc_id, query_id)) FROM queries WHERE list_contains(?, corpus)",
        )
    from warehouse.dbt import setting_defaults

    b = dict(config.analysis).get("bootstrap_b") or int(setting_defaults()["rewriting_bootstrap_b"])
    return (
        b,
        "analysis.bootstrap_b",
        len(config.settings.strategies),
        "queries",
        "SELECT count(*) FROM queries WHERE list_contains(?, corpus)",
    )


def refuse_costly(r, config) -> None:
    """When a config is read: its reader's one-line error (file and key) if B over one unit already exceeds a ceiling."""
    b, key, statistics, unit, _ = bootstrap_plan(config)
    problem = too_costly(b, statistics, 1, unit, key)
    if problem:
        raise r.fail(key, problem)
