"""No-op rerun of ``ragwh run`` on an already built warehouse: wall time of the whole command, and
the part of it spent verifying stage outputs (a stage is skipped only while its output
rows digest to what it left).

    python benchmarks/bench_noop_rerun.py --warehouse FILE [--config CFG] [--data DIR] [--report HTML] [--repeat 3]

Prints the median and all wall times (seconds) of ``--repeat`` subprocess reruns, then the time of
one pass over every stage's output digest (ragwh.experiment.pipeline.outputs) on the same warehouse.
The warehouse must hold a finished run of the same config (and the same --report path): every
stage should print "unchanged, skipped".
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def rerun_seconds(args: argparse.Namespace) -> list[float]:
    cmd = [sys.executable, "-m", "ragwh.cli", "run", "--warehouse", str(args.warehouse)]
    for flag, value in (("--config", args.config), ("--data", args.data), ("--report", args.report)):
        if value:
            cmd += [flag, str(value)]
    times = []
    for _ in range(args.repeat):
        started = time.perf_counter()
        done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
        times.append(time.perf_counter() - started)
        if done.returncode != 0 or "nothing changed since the last run" not in done.stdout:
            raise SystemExit(f"not a no-op rerun (rc {done.returncode}):\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return times


def digest_seconds(args: argparse.Namespace) -> float:
    from ragwh.experiment.config.chunking import load_config
    from ragwh.experiment.pipeline import outputs
    from ragwh.experiment.pipeline.chunking import Pipeline
    from warehouse import manifest
    from warehouse.db import connect

    cfg = load_config(args.config)
    pipeline = Pipeline(cfg, data=args.data, warehouse=args.warehouse)  # for the stored embedder / reranker names
    con = connect(args.warehouse, read_only=True)
    try:
        sets = [outputs.conditions(), outputs.evaluation()]
        for c in cfg.corpora:
            sets += [
                outputs.ingest(c.name, c.loader),
                outputs.queries(c.name),
                outputs.induce(c.name, cfg.inducer),
                outputs.chunk(c.name),
                outputs.contexts(c.name),
            ]
            for e in cfg.embedders:
                name = pipeline.embedder_name(e.model)
                sets += [outputs.embed(c.name, name), outputs.retrieve(c.name, name)]
                sets += [outputs.rerank(c.name, name, pipeline.reranker_name(r.model)) for r in cfg.rerankers]
        started = time.perf_counter()
        for s in sets:
            manifest.output_digest(con, s)
        return time.perf_counter() - started
    finally:
        con.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--warehouse", type=Path, required=True)
    parser.add_argument("--config", type=Path)
    parser.add_argument("--data", type=Path)
    parser.add_argument("--report", type=Path)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    times = rerun_seconds(args)
    print(f"no-op rerun: median {statistics.median(times):.2f} s (runs: {', '.join(f'{t:.2f}' for t in times)})")
    print(f"output digests of every stage: {digest_seconds(args):.3f} s")


if __name__ == "__main__":
    main()
