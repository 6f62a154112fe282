"""The embedding job vs bare ``SentenceTransformer.encode`` on the same passages, same process.

Passages: the first ``--n`` abstracts of ``../shared/data/beir_scifact/corpus.jsonl`` (read in
place). The job runs on a fresh temporary warehouse whose ``int_condition_texts`` holds those passages
(one condition), with the model already loaded, so both sides time encoding plus their own
overhead: bare = ``model.encode(texts, batch_size)`` + L2 normalization; job =
:func:`ingest.retrieval.embed.embed_texts` (read + dedupe + length sort + encode + committed writes).

Reported: seconds and passages/s for both, throughput ratio = job / bare (target >= 1.0), whether
the stored vectors equal the bare ones (max abs difference), and a second job run that must embed 0.
``--precision`` (fp32 default, as the recorded figures; bf16 / auto) is the model's on both sides
(fp32 vs bf16 on the same texts: ``benchmarks/bench_precision.py``).

    .venv/bin/python benchmarks/bench_embed.py --n 2000
"""

from __future__ import annotations

import argparse
import hashlib
import json
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa

from ingest.retrieval.embed import embed_texts, l2_normalize
from ingest.retrieval.embedders import resolve_embedder
from warehouse.db import connect
from warehouse.paths import PROJECT_ROOT

SCIFACT = PROJECT_ROOT.parent / "shared" / "data" / "beir_scifact" / "corpus.jsonl"


def passages(n: int) -> list[str]:
    out = []
    with open(SCIFACT, encoding="utf-8") as fh:
        for line in fh:
            text = json.loads(line)["text"].strip()
            if text:
                out.append(text)
            if len(out) == n:
                break
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--embedder", default=None)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--device", default=None)
    parser.add_argument("--precision", default="fp32", choices=("auto", "fp32", "bf16"))
    args = parser.parse_args()
    texts = passages(args.n)
    spec = resolve_embedder(args.embedder, args.precision, args.device)
    started = time.perf_counter()
    model = spec.load(args.device)
    load_s = time.perf_counter() - started
    print(
        f"{len(texts)} scifact passages, embedder {spec.name} on {model.device}, batch {args.batch_size}, "
        f"model load {load_s:.1f} s"
    )

    started = time.perf_counter()
    bare = l2_normalize(model.encode(texts, batch_size=args.batch_size, convert_to_numpy=True))
    bare_s = time.perf_counter() - started

    with tempfile.TemporaryDirectory() as tmp:
        con = connect(Path(tmp) / "bench.duckdb")
        rows = pa.table(
            {
                "condition": ["DOC"] * len(texts),
                "corpus": ["bench"] * len(texts),
                "chunk_id": [f"doc|bench/{i}|0" for i in range(len(texts))],
                "doc_id": [f"bench/{i}" for i in range(len(texts))],
                "chunkset": ["doc"] * len(texts),
                "char_start": [0] * len(texts),
                "char_end": [len(t) for t in texts],
                "text": texts,
                "text_hash": [hashlib.sha256(t.encode()).hexdigest() for t in texts],
                "content_tokens": [0] * len(texts),
                "prefix_tokens": [0] * len(texts),
                "is_fallback": [False] * len(texts),
            }
        )
        con.register("_rows", rows)
        con.execute("CREATE TABLE int_condition_texts AS SELECT * FROM _rows")
        con.unregister("_rows")
        started = time.perf_counter()
        report = embed_texts(con, spec, model=model, batch_size=args.batch_size, precision=None, show_progress=False)
        job_s = time.perf_counter() - started
        started = time.perf_counter()
        again = embed_texts(con, spec, precision=None, show_progress=False)
        again_s = time.perf_counter() - started
        stored = dict(con.execute("SELECT text_hash, vector FROM embeddings").fetchall())
        con.close()
    diff = max(
        float(np.abs(np.asarray(stored[h], dtype=np.float32) - v).max())
        for h, v in zip(rows.column("text_hash").to_pylist(), bare)
    )
    print("| side | seconds | passages/s |")
    print("|---|---|---|")
    print(f"| bare encode | {bare_s:.1f} | {len(texts) / bare_s:.1f} |")
    print(f"| ragwh embed job | {job_s:.1f} | {report['embedded'] / job_s:.1f} |")
    print(
        f"throughput ratio job/bare = {bare_s / job_s:.2f}; embedded {report['embedded']} of {report['unique']} "
        f"unique; max |job - bare| = {diff:.2e}"
    )
    print(f"second run: embedded {again['embedded']}, already stored {again['already_stored']}, {again_s:.2f} s")


if __name__ == "__main__":
    main()
