"""Benchmark: the whole build of the query-rewriting marts at the paper's scale.

    taskset -c 0,1 .venv/bin/python benchmarks/bench_rewriting.py [--workdir /tmp/bench_rewriting] [--boot 2000]

1. Loads a synthetic warehouse (tests/fixtures/synthetic_rewriting.py): 3 datasets of 5,000 / 2,002 / 470
   queries, 6 solo strategies + 2 budget controls x 3 seeds, top-20 lists (3.6M run rows), the
   strategies' texts and LLM calls with token counts, gold and reader answers.
2. Times ``dbt build --select +tag:rewriting --indirect-selection cautious`` in a child process:
   seeds, staging views, every rewriting model (per-query metrics, solo table, failure modes, Jaccard,
   oracle union over 63 subsets, all 63 ensembles x 4 fusion rules, budget baselines, the router's tau
   sweep / tau choice / Pareto front, answer quality, reader inputs) with every bootstrap at B
   replicates, and every data and unit test. Reports wall time, CPU time (user + system, all
   threads), the child's peak RSS and the load average (the machine may be shared: wall time is
   inflated by other jobs, CPU time is not). Targets: <= 60 s, <= 4 GB, on 2 cores.
   Thread pools are limited to 2 (OMP/OpenBLAS/MKL); pin the process to 2 cores with taskset.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path[:0] = [
    str(Path(__file__).resolve().parent),
    str(Path(__file__).resolve().parent.parent),
]  # dbt_timing; tests.fixtures
from dbt_timing import TWO_THREADS, dbt, timed_build

from tests.fixtures.synthetic_rewriting import Scale, load_synthetic
from warehouse.db import connect


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workdir", default="/tmp/bench_rewriting")
    ap.add_argument("--boot", type=int, default=2000)
    args = ap.parse_args()
    work = Path(args.workdir)
    work.mkdir(parents=True, exist_ok=True)
    wh = work / "bench.duckdb"
    wh.unlink(missing_ok=True)
    t = time.perf_counter()
    con = connect(wh)
    counts = load_synthetic(con, Scale())
    con.close()
    print(f"synthetic load: {time.perf_counter() - t:.1f} s  {counts}")
    target = work / "target"  # not the checkout's target/: other dbt runs may share it
    dbt(["parse"], wh, target, TWO_THREADS)  # parsing the project is not the build
    build = timed_build(
        [
            "build",
            "--select",
            "+tag:rewriting",
            "--indirect-selection",
            "cautious",
            "--vars",
            json.dumps({"rewriting_bootstrap_b": args.boot}),
        ],
        wh,
        target,
        TWO_THREADS,
    )
    affinity = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(
        f"rewriting build (dbt build --select +tag:rewriting, B={args.boot}, {len(build.timings)} nodes): "
        f"{build.wall_s:.1f} s, CPU {build.cpu_s:.1f} s, peak RSS {build.peak_kib / 2**20:.2f} GiB (load average "
        f"{os.getloadavg()[0]:.1f}; {affinity} cores allowed)"
    )
    print("slowest nodes: " + build.slowest())
    con = connect(wh, read_only=True)
    for name in (
        "rewrite_query_metrics",
        "int_rewrite_ensemble_scores",
        "rewrite_ensembles",
        "rewrite_oracle",
        "rewrite_router_sweep",
        "rewrite_budget_baselines",
        "rewrite_answer_quality",
    ):
        print(f"  {name}: {con.execute(f'select count(*) from {name}').fetchone()[0]:,} rows")
    con.close()


if __name__ == "__main__":
    main()
