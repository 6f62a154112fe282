"""Benchmark: the whole build of the query-rewriting marts at the paper's scale.

    taskset -c 0,1 .venv/bin/python benchmarks/bench_rewriting.py [--workdir /tmp/bench_rewriting] [--boot 2000]

1. Loads a synthetic warehouse (benchmarks/synthetic_rewriting.py): 3 datasets of 5,000 / 2,002 / 470
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
import resource
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from synthetic_rewriting import Scale, load_synthetic

from warehouse.db import connect
from warehouse.paths import PROJECT_ROOT

THREADS = {v: "2" for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS")}


def _dbt(args: list[str], warehouse: Path, target: Path) -> float:
    env = {**os.environ, **THREADS, "RAGWH_WAREHOUSE": str(warehouse)}
    t = time.perf_counter()
    subprocess.run([str(Path(sys.executable).parent / "dbt"), *args, "--quiet", "--target-path", str(target),
                    "--project-dir", str(PROJECT_ROOT), "--profiles-dir", str(PROJECT_ROOT)],
                   env=env, check=True, cwd=PROJECT_ROOT)
    return time.perf_counter() - t


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
    _dbt(["parse"], wh, target)  # parsing the project is not the build

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = _dbt(["build", "--select", "+tag:rewriting", "--indirect-selection", "cautious",
                 "--vars", json.dumps({"rewriting_bootstrap_b": args.boot})], wh, target)
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (usage.ru_utime + usage.ru_stime) - (before.ru_utime + before.ru_stime)
    timings = json.loads((target / "run_results.json").read_text())["results"]
    slow = sorted(((r["execution_time"], r["unique_id"].split(".")[-1]) for r in timings), reverse=True)[:8]
    affinity = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(f"rewriting build (dbt build --select +tag:rewriting, B={args.boot}, {len(timings)} nodes): {wall:.1f} s, "
          f"CPU {cpu:.1f} s, peak RSS {usage.ru_maxrss / 2**20:.2f} GiB (load average {os.getloadavg()[0]:.1f}; "
          f"{affinity} cores allowed)")
    print("slowest nodes: " + ", ".join(f"{n} {s:.1f}s" for s, n in slow)
          + f"; all nodes {sum(r['execution_time'] for r in timings):.1f} s")
    con = connect(wh, read_only=True)
    for name in ("rewrite_query_metrics", "rewrite_ensemble_scores", "rewrite_ensembles", "rewrite_oracle",
                 "rewrite_router_sweep", "rewrite_budget_baselines", "rewrite_answer_quality"):
        print(f"  {name}: {con.execute(f'select count(*) from {name}').fetchone()[0]:,} rows")
    con.close()


if __name__ == "__main__":
    main()
