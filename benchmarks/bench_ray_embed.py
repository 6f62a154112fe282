"""The embedding job on the local engine vs the Ray engine (a local Ray instance), same passages, same model.

Passages: the first ``--n`` SciFact abstracts (as ``bench_embed.py``), in a fresh temporary warehouse each.
Local: :func:`ingest.retrieval.embed.embed_texts` with the model already loaded (torch on every core). Ray:
the same call with ``engine=RaySettings(concurrency=--actors, num_cpus_per_worker=1)`` on
``ray.init(num_cpus=--cpus)`` (started before the clock; the time includes starting the actors and loading one
model per actor, as a real job does). Reported: seconds and passages/s of each, and max |ray - local| over the
stored vectors (same keys required).

    nice -n 10 .venv/bin/python benchmarks/bench_ray_embed.py --n 2000 --cpus 2 --actors 2
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks.bench_embed import passages
from ingest.retrieval.embed import embed_texts
from ingest.retrieval.embedders import resolve_embedder
from ingest.retrieval.ray_engine import RaySettings
from tests.ingest.retrieval.fixtures import create_condition_texts
from warehouse.db import connect


def _job(texts: list[str], spec, **kwargs) -> tuple[float, dict, dict]:
    with tempfile.TemporaryDirectory() as tmp:
        con = connect(Path(tmp) / "bench.duckdb")
        create_condition_texts(
            con,
            [
                {
                    "condition": "DOC",
                    "corpus": "bench",
                    "chunk_id": f"doc|bench/{i}|0",
                    "doc_id": f"bench/{i}",
                    "chunkset": "doc",
                    "text": t,
                }
                for i, t in enumerate(texts)
            ],
        )
        started = time.perf_counter()
        report = embed_texts(con, spec, precision=None, show_progress=False, **kwargs)
        seconds = time.perf_counter() - started
        stored = {
            h: np.asarray(v, dtype=np.float32)
            for h, v in con.execute("SELECT text_hash, vector FROM embeddings").fetchall()
        }
        con.close()
    return seconds, report, stored


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--cpus", type=int, default=2)
    parser.add_argument("--actors", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=64)
    args = parser.parse_args()
    import ray

    texts = list(dict.fromkeys(passages(args.n)))
    spec = resolve_embedder(None, "fp32", "cpu")
    model = spec.load("cpu")
    local_s, local, local_rows = _job(texts, spec, model=model, device="cpu", batch_size=args.batch_size)
    ray.init(num_cpus=args.cpus, include_dashboard=False, log_to_driver=False)
    try:
        settings = RaySettings(concurrency=args.actors, batch_size=args.batch_size, num_cpus_per_worker=1)
        ray_s, remote, ray_rows = _job(texts, spec, engine=settings)
    finally:
        ray.shutdown()
    assert set(ray_rows) == set(local_rows) and local["embedded"] == remote["embedded"] == len(texts)
    diff = max(float(np.abs(ray_rows[k] - local_rows[k]).max()) for k in local_rows)
    print(f"{len(texts)} scifact passages, {spec.name}, batch {args.batch_size}")
    print("| engine | seconds | passages/s |")
    print("|---|---|---|")
    print(f"| local (model loaded, torch on all cores) | {local_s:.1f} | {len(texts) / local_s:.1f} |")
    print(
        f"| ray ({args.actors} actors x 1 CPU, ray.init(num_cpus={args.cpus}); actor start + model load included) "
        f"| {ray_s:.1f} | {len(texts) / ray_s:.1f} |"
    )
    print(f"max |ray - local| = {diff:.2e} over {len(texts)} vectors")


if __name__ == "__main__":
    main()
