"""What the chunking stage reports: per-chunkset sizes, size matching, placebo residuals, the funnel.

``summarize`` gives, per (corpus, chunkset), documents, chunks, mean content tokens and the counts
over 350 / under 60 tokens; per corpus the size matching of the fixed windows (mean fixed vs mean
reference-structural content tokens, in embedder tokens); per (structure, corpus, depth) the
placebo pairs and how many fell back to the same document. ``funnel_rows`` counts documents that
got no fixed chunks because they have no reference structure (``funnel`` stage ``chunk_fixed``).
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pyarrow as pa

from ingest.chunking.documents import Doc

FUNNEL_STAGE = "chunk_fixed"


def summarize(docs: dict[str, Doc], chunks: dict, reference: dict[str, tuple[str, float]], placebo: pa.Table) -> dict:
    per_set: dict[tuple[str, str], list[int]] = defaultdict(list)
    docs_per_set: dict[tuple[str, str], set[str]] = defaultdict(set)
    for c in chunks["structural"] + chunks["fixed"] + chunks["doc"]:
        key = (docs[c.doc_id].corpus, c.chunkset)
        per_set[key].append(c.content_tokens)
        docs_per_set[key].add(c.doc_id)
    chunksets = [
        {
            "corpus": corpus,
            "chunkset": chunkset,
            "documents": len(docs_per_set[(corpus, chunkset)]),
            "chunks": len(tokens),
            "mean_content_tokens": float(np.mean(tokens)),
            "over_350": int(np.sum(np.asarray(tokens) > 350)),
            "under_60": int(np.sum(np.asarray(tokens) < 60)),
        }
        for (corpus, chunkset), tokens in sorted(per_set.items())
    ]
    ref_tokens: dict[str, list[int]] = defaultdict(list)
    for c in chunks["structural"]:
        if c.doc_id in reference and c.chunkset == f"structural:{reference[c.doc_id][0]}":
            ref_tokens[docs[c.doc_id].corpus].append(c.content_tokens)
    fixed_tokens: dict[str, list[int]] = defaultdict(list)
    for c in chunks["fixed"]:
        fixed_tokens[docs[c.doc_id].corpus].append(c.content_tokens)
    size_matching = []
    for corpus in sorted(fixed_tokens):
        refs = sorted({reference[d][0] for d in reference if docs[d].corpus == corpus})
        size_matching.append(
            {
                "corpus": corpus,
                "reference_structures": refs,
                "fixed_chunks": len(fixed_tokens[corpus]),
                "structural_chunks": len(ref_tokens[corpus]),
                "mean_fixed": float(np.mean(fixed_tokens[corpus])),
                "mean_structural": float(np.mean(ref_tokens[corpus])),
            }
        )
    placebo_summary = (
        placebo.group_by(["structure", "corpus", "depth"])
        .aggregate([("doc_id", "count"), ("same_document", "sum")])
        .sort_by([("structure", "ascending"), ("corpus", "ascending"), ("depth", "ascending")])
        .to_pylist()
    )
    return {
        "documents": len(docs),
        "chunksets": chunksets,
        "size_matching": size_matching,
        "placebo": [
            {
                "structure": r["structure"],
                "corpus": r["corpus"],
                "depth": r["depth"],
                "pairs": r["doc_id_count"],
                "same_document": int(r["same_document_sum"] or 0),
            }
            for r in placebo_summary
        ],
    }


def funnel_rows(docs: dict[str, Doc], reference: dict[str, tuple[str, float]]) -> pa.Table:
    rows: dict[str, list] = defaultdict(list)
    for corpus in sorted({d.corpus for d in docs.values()}):
        ids = [d for d in docs if docs[d].corpus == corpus]
        kept = sum(1 for d in ids if d in reference)
        for reason, n in (("input", len(ids)), ("no_reference_structure", len(ids) - kept), ("kept", kept)):
            rows["corpus"].append(corpus)
            rows["stage"].append(FUNNEL_STAGE)
            rows["reason"].append(reason)
            rows["n"].append(n)
    return pa.table({k: rows.get(k, []) for k in ("corpus", "stage", "reason", "n")})
