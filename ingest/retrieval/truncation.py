"""How much of each passage an embedder reads: input tokens against the model's window.

A sentence-transformers model reads at most ``max_seq_length`` tokens including its special tokens
(``[CLS]``/``[SEP]`` for BERT: 2), so its window for the text is

    max_tokens = max_seq_length - special tokens           (all-MiniLM-L6-v2: 256 - 2 = 254; bge: 510)

A passage's ``n_tokens`` counts the encoded input (passage instruction + condition text, i.e. prefix
then content) with the embedder's own tokenizer, without special tokens and without truncation.
The passage is truncated when ``n_tokens > max_tokens``, and the model never sees the last

    tokens_cut = max(0, n_tokens - max_tokens)

tokens. Truncation cuts the end, and the end is content: every cut token is a content token as
long as instruction and prefix fit in the window (prefixes are a few dozen tokens; windows >= 254).

:func:`count_missing` stores ``text_tokens(embedder, text_hash, n_tokens, max_tokens)`` for the
passages that lack a row; :func:`truncation_summary` gives the per-condition counts the embed stage
reports (the mart ``embedding_truncation`` computes the same from the same rows).
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Sequence

import duckdb
import numpy as np
import pyarrow as pa

from ingest.retrieval.embedders import EmbedderSpec
from warehouse.db import transaction

BATCH = 2048  # texts per tokenizer call


@functools.lru_cache(maxsize=8)
def _tokenizer(load_path: str):
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(load_path, use_fast=True)
    tok.model_max_length = 10**12  # we count, never truncate
    return tok


def max_seq_length(spec: EmbedderSpec, model=None) -> int:
    """Tokens the model reads including special ones: the spec's, else the loaded model's, else the
    model directory's ``sentence_bert_config.json``, else its tokenizer's ``model_max_length``."""
    if spec.max_seq_length is not None:
        return int(spec.max_seq_length)
    if model is not None and getattr(model, "max_seq_length", None):
        return int(model.max_seq_length)
    config = Path(spec.load_path) / "sentence_bert_config.json"
    if config.is_file():
        value = json.loads(config.read_text(encoding="utf-8")).get("max_seq_length")
        if value:
            return int(value)
    from transformers import AutoTokenizer

    return int(AutoTokenizer.from_pretrained(spec.load_path).model_max_length)


def count_inputs(spec: EmbedderSpec, texts: Sequence[str], model=None) -> tuple[np.ndarray, int]:
    """``(n_tokens per text, max_tokens)`` for passages ``texts`` under ``spec`` (module doc)."""
    tok = _tokenizer(spec.load_path)
    window = max_seq_length(spec, model) - tok.num_special_tokens_to_add(pair=False)
    inputs = spec.format_inputs(list(texts), [False] * len(texts))
    out = np.zeros(len(inputs), dtype=np.int64)
    for lo in range(0, len(inputs), BATCH):
        enc = tok(
            inputs[lo : lo + BATCH],
            add_special_tokens=False,
            return_attention_mask=False,
            return_token_type_ids=False,
            verbose=False,
        )
        out[lo : lo + BATCH] = [len(ids) for ids in enc["input_ids"]]
    return out, int(window)


def count_missing(
    con: duckdb.DuckDBPyConnection, spec: EmbedderSpec, hashes: Sequence[str], texts: Sequence[str], model=None
) -> int:
    """Store ``text_tokens`` rows for the passages (``hashes`` parallel to ``texts``, unique) that have
    none for ``spec.name``, in one transaction. Returns how many were counted."""
    if not hashes:
        return 0
    con.register("_tt_keys", pa.table({"text_hash": pa.array(list(hashes), pa.string())}))
    try:
        have = {
            r[0]
            for r in con.execute(
                "SELECT t.text_hash FROM text_tokens t SEMI JOIN _tt_keys k USING (text_hash) WHERE t.embedder = ?",
                [spec.name],
            ).fetchall()
        }
    finally:
        con.unregister("_tt_keys")
    todo = [(h, t) for h, t in zip(hashes, texts) if h not in have]
    if not todo:
        return 0
    counts, window = count_inputs(spec, [t for _, t in todo], model)
    rows = pa.table(
        {
            "embedder": pa.array([spec.name] * len(todo), pa.string()),
            "text_hash": pa.array([h for h, _ in todo], pa.string()),
            "n_tokens": pa.array(counts.astype(np.int32)),
            "max_tokens": pa.array(np.full(len(todo), window, dtype=np.int32)),
        }
    )
    with transaction(con):
        con.register("_tt_new", rows)
        try:
            con.execute("INSERT INTO text_tokens SELECT embedder, text_hash, n_tokens, max_tokens FROM _tt_new")
        finally:
            con.unregister("_tt_new")
    return len(todo)


def truncation_summary(
    con: duckdb.DuckDBPyConnection, embedder: str, corpus: str | None, conditions: Sequence[str] | None
) -> list[dict]:
    """Per (corpus, condition) of ``int_condition_texts`` (filtered): texts, texts over the window,
    tokens cut (module doc) and the window; ``uncounted`` texts without a ``text_tokens`` row."""
    rows = con.execute(
        """SELECT ct.corpus, ct.condition, count(*) AS texts,
                  count(*) FILTER (WHERE t.n_tokens > t.max_tokens) AS truncated,
                  coalesce(sum(greatest(t.n_tokens - t.max_tokens, 0)), 0) AS tokens_cut,
                  max(t.max_tokens) AS max_tokens, count(*) FILTER (WHERE t.text_hash IS NULL) AS uncounted
           FROM int_condition_texts ct
           LEFT JOIN text_tokens t ON t.embedder = $e AND t.text_hash = ct.text_hash
           WHERE ($corpus IS NULL OR ct.corpus = $corpus)
             AND ($all_conditions OR list_contains($conditions, ct.condition))
           GROUP BY ALL ORDER BY ALL""",
        {"e": embedder, "corpus": corpus, "all_conditions": conditions is None, "conditions": list(conditions or [])},
    ).fetchall()
    names = ("corpus", "condition", "texts", "truncated", "tokens_cut", "max_tokens", "uncounted")
    return [dict(zip(names, r)) for r in rows]


def describe(summary: list[dict]) -> str:
    """One line: ``truncated (window W): A0 3/120 (45 tokens cut), ...``."""
    if not summary:
        return "no passages"
    windows = sorted({r["max_tokens"] for r in summary if r["max_tokens"] is not None})
    several = len({r["corpus"] for r in summary}) > 1
    parts = [
        f"{r['corpus'] + '/' if several else ''}{r['condition']} {r['truncated']}/{r['texts']} ({r['tokens_cut']} cut)"
        for r in summary
    ]
    head = f"over the {'/'.join(map(str, windows)) or '?'}-token window: "
    uncounted = sum(r["uncounted"] for r in summary)
    return head + ", ".join(parts) + (f"; {uncounted} texts not counted" if uncounted else "")
