"""Timing a dbt build of the project in a child process, for the benchmarks.

:func:`dbt` runs ``dbt ARGS`` against a warehouse file with its own target folder (not the checkout's
``target/``, which other dbt runs may share) and returns the wall seconds; :func:`timed_build` also
reads the child's CPU time (user + system, all threads) and peak RSS from ``getrusage(RUSAGE_CHILDREN)``
and the per-node times from ``run_results.json``.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from warehouse.paths import PROJECT_ROOT

#: thread pools limited to 2 (OpenMP, OpenBLAS, MKL, numba): the 2-core targets
TWO_THREADS = {v: "2" for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS")}


def dbt(args: list[str], warehouse: Path, target: Path, env: dict[str, str] | None = None) -> float:
    """Wall seconds of ``dbt ARGS --quiet`` on ``warehouse`` (extra environment ``env``)."""
    full_env = {**os.environ, **(env or {}), "RAGWH_WAREHOUSE": str(warehouse)}
    t = time.perf_counter()
    subprocess.run(
        [
            str(Path(sys.executable).parent / "dbt"),
            *args,
            "--quiet",
            "--target-path",
            str(target),
            "--project-dir",
            str(PROJECT_ROOT),
            "--profiles-dir",
            str(PROJECT_ROOT),
        ],
        env=full_env,
        check=True,
        cwd=PROJECT_ROOT,
    )
    return time.perf_counter() - t


@dataclass
class Build:
    wall_s: float
    cpu_s: float  # the child's user + system seconds
    peak_kib: int  # the largest child's peak RSS so far (ru_maxrss of RUSAGE_CHILDREN)
    earlier_peak_kib: int  # the same before this build
    timings: list[dict]  # run_results.json's results

    def slowest(self, n: int = 8) -> str:
        slow = sorted(((r["execution_time"], r["unique_id"].split(".")[-1]) for r in self.timings), reverse=True)[:n]
        return (
            ", ".join(f"{name} {s:.1f}s" for s, name in slow)
            + f"; all nodes {sum(r['execution_time'] for r in self.timings):.1f} s"
        )


def timed_build(args: list[str], warehouse: Path, target: Path, env: dict[str, str] | None = None) -> Build:
    """:func:`dbt` with the child's CPU time, peak RSS and node timings."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = dbt(args, warehouse, target, env)
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (usage.ru_utime + usage.ru_stime) - (before.ru_utime + before.ru_stime)
    timings = json.loads((target / "run_results.json").read_text())["results"]
    return Build(wall, cpu, usage.ru_maxrss, before.ru_maxrss, timings)
