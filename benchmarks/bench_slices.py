"""Benchmark: what the slice marts add to the evaluation build of a finished experiment.

    .venv/bin/python benchmarks/bench_slices.py WAREHOUSE [--workdir /tmp/bench_slices] [--repeat 2]
    .venv/bin/python benchmarks/bench_slices.py --synthetic [--workdir /tmp/bench_slices] [--repeat 2]

WAREHOUSE is a warehouse a chunking ``ragwh run`` built (the CPU experiment on the 255 shared QASPER papers:
``ragwh run --config experiments/cpu.yml --data ../shared/data``); it is copied, never written. On the copy:

1. ``dbt build --select int_query_labels contrast_slices`` (the two models the slices add to ``tag:evaluation``,
   with their data tests), with no ``--vars``: the settings the run stored (B = 10,000, its seed), timed in a
   child process (wall, CPU user + system, peak RSS, per-node times), ``--repeat`` times (analyst labels go
   through the same models: their cost is the built-in ones' per slice);
2. the whole evaluation build back to back without and with them (``dbt build --select tag:evaluation
   --exclude int_query_labels contrast_slices``, then ``--select tag:evaluation``), ``--repeat`` times
   alternating: the difference is what the slices add to the build, other nodes running beside them included.
``--synthetic`` builds a stand-in of the CPU experiment's shape instead (tests/fixtures/synthetic_evaluation.py:
255 documents, 831 queries, the 12 conditions, one system, no reranker, B = 10,000; labels query_type,
topic_bucket, doc_length; no gold tree, so no gold_depth). Prints the slice counts (contrasts x cells x labels x values, Holm families, heterogeneity tests). The target
is the figure ``benchmarks/README.md`` records: <= 15 s added to the evaluation build on 2 cores.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parent.parent)]
import duckdb  # noqa: E402
from dbt_timing import TWO_THREADS, timed_build  # noqa: E402

SLICE_NODES = "int_query_labels contrast_slices"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("warehouse", type=Path, nargs="?")
    ap.add_argument("--synthetic", action="store_true", help="a synthetic warehouse of the CPU experiment's shape")
    ap.add_argument("--workdir", default="/tmp/bench_slices")
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args()
    work = Path(args.workdir)
    work.mkdir(parents=True, exist_ok=True)
    wh = work / "bench.duckdb"
    target = work / "target"
    if args.synthetic:
        _synthetic(wh, target)
    else:
        shutil.copyfile(args.warehouse, wh)
    for i in range(args.repeat):
        build = timed_build(["build", "--select", SLICE_NODES], wh, target, env=TWO_THREADS)
        print(
            f"run {i + 1}: slice nodes (models + tests) {build.wall_s:.1f} s wall, CPU {build.cpu_s:.1f} s, peak RSS "
            f"{build.peak_kib / 2**20:.2f} GiB, load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
        )
        print("  nodes: " + build.slowest(12))
    for i in range(args.repeat):
        without = timed_build(
            ["build", "--select", "tag:evaluation", "--exclude", SLICE_NODES], wh, target, env=TWO_THREADS
        )
        with_ = timed_build(["build", "--select", "tag:evaluation"], wh, target, env=TWO_THREADS)
        print(
            f"evaluation build {i + 1}: without the slices {without.wall_s:.1f} s wall (CPU {without.cpu_s:.1f} s), "
            f"with them {with_.wall_s:.1f} s (CPU {with_.cpu_s:.1f} s): +{with_.wall_s - without.wall_s:.1f} s wall, "
            f"+{with_.cpu_s - without.cpu_s:.1f} CPU-s; load average {os.getloadavg()[0]:.1f}"
        )
    con = duckdb.connect(str(wh), read_only=True)
    (n_rows, n_labels, n_cells, n_families, n_tests, n_boot) = con.execute("""
        SELECT count(*), count(DISTINCT label), count(DISTINCT (contrast, corpus, embedder, control_embedder, reranker, metric)),
               count(DISTINCT (contrast, corpus, embedder, control_embedder, reranker, metric, label)),
               count(DISTINCT (contrast, corpus, embedder, control_embedder, reranker, metric, label))
                   FILTER (WHERE heterogeneity_p IS NOT NULL), max(n_boot)
        FROM contrast_slices""").fetchone()
    labels = con.execute("SELECT label, count(DISTINCT value) FROM contrast_slices GROUP BY 1 ORDER BY 1").fetchall()
    con.close()
    print(
        f"contrast_slices: {n_rows:,} slices (B = {n_boot:,}) over {n_cells} contrast x cells, {n_labels} labels "
        f"({', '.join(f'{l}: {n} values' for l, n in labels)}); {n_families} Holm families, {n_tests} heterogeneity tests"
    )


def _synthetic(wh: Path, target: Path) -> None:
    import json

    from dbt_timing import dbt

    from tests.fixtures.synthetic_evaluation import Scale, load_synthetic
    from warehouse.db import connect

    wh.unlink(missing_ok=True)
    con = connect(wh)
    load_synthetic(con, Scale(n_docs=255, n_queries=831, embedders=("all-MiniLM-L6-v2",), rerankers=("none",)))
    con.close()
    variables = json.dumps({"bootstrap_b": 10_000, "primary_embedder": "all-MiniLM-L6-v2"})
    dbt(["seed"], wh, target)
    dbt(["build", "--select", "+tag:evaluation", "--vars", variables], wh, target, env=TWO_THREADS)
    con = connect(wh)  # the settings a run stores, so the timed builds below read them as after `ragwh run`
    con.execute(
        "INSERT INTO experiment_settings VALUES ('bootstrap_b', '10000', 'chunking', 1), "
        "('primary_embedder', '\"all-MiniLM-L6-v2\"', 'chunking', 1)"
    )
    con.close()


if __name__ == "__main__":
    main()
