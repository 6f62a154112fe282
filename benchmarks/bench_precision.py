"""fp32 vs bf16 embedding throughput on the same passages, in one process.

Passages: the first ``--n`` abstracts of ``../shared/data/beir_scifact/corpus.jsonl``, encoded by the
embedder loaded twice through :meth:`ingest.retrieval.embedders.EmbedderSpec.load`: once fp32, once
bf16 (``torch.autocast('cpu', dtype=torch.bfloat16)`` around the forward pass). The passages are cut
into ``--rounds`` slices; each slice is encoded by both models back to back, alternating which goes
first, so load from other jobs on the machine falls on both sides alike. Both sides use the embed
job's batch size and sort the slice longest first as the job does.

Reported: seconds and passages/s per side, the speed ratio bf16/fp32 (the target is >= 1.8 where
the CPU has AMX / AVX512-BF16), and the cosine between each passage's bf16 and fp32 vectors (min,
mean): the two are different vectors of the same embedding, hence different warehouse rows.

    .venv/bin/python benchmarks/bench_precision.py --n 512
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from ingest.retrieval.embed import l2_normalize
from ingest.retrieval.embedders import resolve_embedder
from ingest.retrieval.precision import cpu_bf16_feature
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
    parser.add_argument("--n", type=int, default=512)
    parser.add_argument("--embedder", default=None)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=4)
    args = parser.parse_args()
    import torch

    texts = sorted(passages(args.n), key=len, reverse=True)
    models = {p: resolve_embedder(args.embedder, p, "cpu").load("cpu") for p in ("fp32", "bf16")}
    print(
        f"{len(texts)} scifact passages, embedder {resolve_embedder(args.embedder).name}, batch {args.batch_size}, "
        f"{torch.get_num_threads()} torch threads, CPU bf16 feature: {cpu_bf16_feature()}"
    )
    for model in models.values():  # warm-up (first-call allocations, oneDNN kernel selection)
        model.encode(texts[: args.batch_size], batch_size=args.batch_size, show_progress_bar=False)
    seconds = {p: 0.0 for p in models}
    vectors = {p: [] for p in models}
    slices = [texts[i :: args.rounds] for i in range(args.rounds)]  # each slice spans all lengths
    for r, part in enumerate(slices):
        order = ("fp32", "bf16") if r % 2 == 0 else ("bf16", "fp32")
        for p in order:
            started = time.perf_counter()
            out = models[p].encode(
                part,
                batch_size=args.batch_size,
                convert_to_numpy=True,
                normalize_embeddings=False,
                show_progress_bar=False,
            )
            seconds[p] += time.perf_counter() - started
            vectors[p].append(l2_normalize(out))
    v32, v16 = np.concatenate(vectors["fp32"]), np.concatenate(vectors["bf16"])
    cosine = np.einsum("ij,ij->i", v32.astype(np.float64), v16.astype(np.float64))
    print("| precision | seconds | passages/s |")
    print("|---|---:|---:|")
    for p in ("fp32", "bf16"):
        print(f"| {p} | {seconds[p]:.1f} | {len(texts) / seconds[p]:.1f} |")
    print(
        f"speed ratio bf16/fp32 = {seconds['fp32'] / seconds['bf16']:.2f}; cosine(bf16, fp32): "
        f"min {cosine.min():.6f}, mean {cosine.mean():.6f}; bit-identical vectors: "
        f"{int((v32 == v16).all(axis=1).sum())} of {len(texts)}"
    )


if __name__ == "__main__":
    main()
