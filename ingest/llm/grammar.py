"""Structured output for the in-process transformers backend: a JSON schema enforced token by token.

The grammar library is **llguidance** (the ``local-llm`` extra): its Rust core compiles a JSON schema
to a grammar in milliseconds and a next-token mask, applied to the logits, costs about a millisecond on a
CPU (SmolLM2-135M itself takes ~100 ms per token there), it is one dependency-free wheel, and it states the bounds the stages put in their schemas (integer
``minimum`` / ``maximum``, string ``minLength`` / ``maxLength``, ``minItems`` / ``maxItems``). The
comparison with xgrammar, outlines and lm-format-enforcer that chose it is in ``docs/llm_stages.md``
(figures: ``benchmarks/bench_grammar_libraries.py``).

:class:`SchemaGrammar` wraps the model's tokenizer once (about a second for a 49k-token vocabulary);
:meth:`SchemaGrammar.constraint` returns a fresh :class:`Matcher` per request, which the decoding loop
(:mod:`ingest.llm.decoding`) asks for the allowed tokens before each choice and tells the token chosen.
JSON is generated compactly (no free whitespace between tokens: a small model left free to indent can
spend its whole answer on spaces), keys in the schema's ``properties`` order. The end-of-answer tokens
are allowed exactly when the JSON is complete.
"""

from __future__ import annotations

import functools
import importlib.util
import json
from typing import Any, Iterable, Mapping

import numpy as np
import torch

LIBRARY = "llguidance"
JSON_OPTIONS = {"whitespace_flexible": False}


def available() -> bool:
    """Whether the grammar library is installed (it is part of the ``local-llm`` extra)."""
    return importlib.util.find_spec(LIBRARY) is not None


class SchemaGrammar:
    """JSON-schema constraints for one tokenizer (module doc). ``vocab_size`` is the width of the
    model's logits; ``eos`` the ids that end an answer."""

    def __init__(self, tokenizer: Any, vocab_size: int, eos: Iterable[int]):
        import llguidance.hf

        self.vocab_size = vocab_size
        self._tokenizer = llguidance.hf.from_tokenizer(tokenizer, n_vocab=vocab_size, eos_token=sorted(eos))

    @functools.lru_cache(maxsize=256)
    def _grammar(self, schema_json: str) -> str:
        from llguidance import LLMatcher

        grammar = LLMatcher.grammar_from_json_schema(schema_json, defaults=JSON_OPTIONS)
        failed, messages = LLMatcher.validate_grammar_with_warnings(grammar, self._tokenizer)
        if failed:
            raise ValueError(f"the JSON schema cannot be enforced: {'; '.join(messages)[:300]}")
        return grammar

    def constraint(self, schema: Mapping[str, Any]) -> "Matcher":
        """A new matcher for one answer that must satisfy ``schema``."""
        from llguidance import LLMatcher

        # keys in the schema's own order: it is the order the answer's keys are generated in
        text = json.dumps(schema, separators=(",", ":"), ensure_ascii=False)
        return Matcher(LLMatcher(self._tokenizer, self._grammar(text), log_level=0), self.vocab_size)


class Matcher:
    """One answer's grammar state: the :class:`ingest.llm.decoding.Constraint` of a row."""

    def __init__(self, matcher: Any, vocab_size: int):
        self._matcher = matcher
        self._vocab_size = vocab_size

    def mask(self, logits: torch.Tensor) -> bool:
        if self._matcher.is_error():
            return False
        bits = np.frombuffer(self._matcher.compute_bitmask(), dtype=np.uint8)
        allowed = np.unpackbits(bits, bitorder="little")[: self._vocab_size].astype(bool)
        if not allowed.any():
            return False
        width = min(len(allowed), logits.shape[-1])
        forbidden = torch.from_numpy(~allowed[:width])
        logits[:width].masked_fill_(forbidden, float("-inf"))
        logits[width:] = float("-inf")
        return True

    def accept(self, token: int) -> None:
        self._matcher.consume_token(token)
