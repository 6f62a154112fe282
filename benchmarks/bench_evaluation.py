"""Benchmark: the whole evaluation build at paper scale, and binary nDCG@10 throughput vs ranx.

    .venv/bin/python benchmarks/bench_evaluation.py [--workdir /tmp/bench_eval] [--boot 10000]

1. Loads a synthetic warehouse (tests/fixtures/synthetic_evaluation.py): 4,303 queries over 1,585
   documents, 12 conditions, 2 embedders x 2 reranker settings, top 50, 1-6 gold spans per query.
2. Builds the upstream models (seeds, staging, int_condition_texts), untimed.
3. Times ``dbt build --select tag:evaluation`` (relevance, every metric, every contrast in every cell
   with B bootstrap replicates, MixedLM, marts, data and unit tests) in a child process; reports wall
   time, CPU time (user + system, all threads) and the child's peak RSS, plus the load average (the
   project machine is shared: wall time there is inflated by other jobs; CPU time is not).
   Targets: <= 60 s, <= 4 GB, on 2 cores.
4. Binary nDCG@10 over every ranking of the build (relevance flags from the warehouse): the kernel
   (udfs.metrics.binary.ndcg_binary) vs ranx ``evaluate(..., "ndcg@10")`` on the same rankings
   (ranx warmed up first so numba compilation is not timed); checks equality to 1e-9.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path[:0] = [
    str(Path(__file__).resolve().parent),
    str(Path(__file__).resolve().parent.parent),
]  # dbt_timing; tests.fixtures
from dbt_timing import dbt, timed_build  # noqa: E402

from tests.fixtures.synthetic_evaluation import Scale, load_synthetic  # noqa: E402
from udfs.metrics.binary import ndcg_binary  # noqa: E402
from warehouse.db import connect  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workdir", default="/tmp/bench_eval")
    ap.add_argument("--boot", type=int, default=10_000)
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
    t_up = dbt(["seed"], wh, target) + dbt(
        ["run", "--select", "+tag:evaluation", "--exclude", "tag:evaluation"], wh, target
    )
    print(f"upstream (seeds, staging, int_condition_texts): {t_up:.1f} s")

    build = timed_build(
        ["build", "--select", "tag:evaluation", "--vars", json.dumps({"bootstrap_b": args.boot})], wh, target
    )
    t_eval = build.wall_s
    print(
        f"evaluation build (dbt build --select tag:evaluation, B={args.boot}): {t_eval:.1f} s, "
        f"CPU {build.cpu_s:.1f} s, peak RSS {build.peak_kib / 2**20:.2f} GiB (largest earlier child: "
        f"{build.earlier_peak_kib / 2**20:.2f} GiB; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)"
    )
    print("slowest nodes: " + build.slowest())

    con = connect(wh, read_only=True)
    rows = con.execute("""
        select r.corpus || '|' || r.embedder || '|' || r.reranker || '|' || r.condition || '|' || r.query_id as qid,
               list(r.is_relevant order by r.rank) as rel, list(r.chunk_id order by r.rank) as chunks,
               any_value(p.n_relevant) as n_rel, any_value(p.pool_rel) as pool_rel
        from int_relevance r
        join (select condition, query_id, count(*) filter (where is_relevant) as n_relevant,
                     list(chunk_id) filter (where is_relevant) as pool_rel
              from int_relevance_pool group by all) p using (condition, query_id)
        group by 1 order by 1""").fetchall()
    con.close()
    qids = [r[0] for r in rows]
    rel = [r[1] for r in rows]
    n_rel = np.array([r[3] for r in rows])
    from ranx import Qrels, Run, evaluate

    qrels = Qrels({q: {c: 1 for c in (r[4] or [])} or {"__none__": 1} for q, r in zip(qids, rows)})
    run = Run({q: {c: float(50 - i) for i, c in enumerate(r[2])} for q, r in zip(qids, rows)})
    evaluate(Qrels({"a": {"x": 1}}), Run({"a": {"x": 1.0, "y": 0.5}}), "ndcg@10")  # numba warm-up
    t = time.perf_counter()
    ours = ndcg_binary(rel, n_rel, 10)
    t_ours = time.perf_counter() - t
    t = time.perf_counter()
    theirs = np.array(list(evaluate(qrels, run, "ndcg@10", return_mean=False)))
    t_ranx = time.perf_counter() - t
    assert np.allclose(ours, theirs, atol=1e-9), "kernel and ranx disagree"
    print(
        f"binary nDCG@10 over {len(qids):,} rankings: kernel {t_ours:.3f} s, ranx {t_ranx:.3f} s, "
        f"ratio ranx/kernel {t_ranx / t_ours:.2f} (identical to 1e-9)"
    )


if __name__ == "__main__":
    main()
