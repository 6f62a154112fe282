"""Structured output: a request carries its answer's JSON schema and the backend enforces it.

A prompt with a schema file (``prompts/<name>.v<N>.schema.json``, filled per request by
:meth:`ingest.llm.prompts.Prompt.schema`) is sent structured: the request carries the filled schema,
which is part of its cache key (:meth:`ingest.llm.backend.LLMRequest.payload`; a free-text request's key
is what it always was), and the backend constrains generation to it:

- ``openai``: ``response_format: {"type": "json_schema", "json_schema": {"name": <prompt name>,
  "schema": <schema>, "strict": true}}`` (vLLM serve, llama.cpp server, Ollama, hosted APIs);
- ``vllm``: ``SamplingParams(structured_outputs=StructuredOutputsParams(json=<schema>))``
  (``guided_decoding=GuidedDecodingParams(json=...)`` on vLLM releases before that API);
- ``transformers``: a token mask per step from the llguidance grammar library (:mod:`ingest.llm.grammar`).

Whether schemas are sent (:func:`wanted`): ``llm.structured: false`` never; ``true`` always, and a
backend that cannot enforce them is an error; unset (auto, the default) where the backend can. In
replay-only mode without a backend, auto means the keys of a structured run.

Fallback (:func:`complete`): a server that refuses the schema (HTTP 400, 422 or 501 to a request that
carries ``response_format``) gets the same requests again as free text, with one warning; so does the
cache in replay-only mode when the structured answers are not stored but free-text ones are (a run
that fell back). The caller learns which happened and records it with the result. The answer is
checked as before either way: a schema states bounds (levels 1-4, paragraph numbers within the
document), not that sections tile the document.
"""

from __future__ import annotations

import logging
from typing import Sequence

from ingest.llm.backend import Completion, LLMError, LLMRequest, SchemaRefused
from ingest.llm.cache import LLMCache, LLMCacheMiss

log = logging.getLogger(__name__)


def wanted(llm: LLMCache, requested: bool | None) -> bool:
    """Whether a stage sends its prompts' schemas (module doc); ``requested`` is ``llm.structured``."""
    if requested is False:
        return False
    if llm.backend is None:  # replay-only without a backend: answer from the keys of a structured run
        return True
    problem = llm.backend.schema_unsupported()
    if problem is not None and requested:
        raise LLMError(
            f"llm.structured is true but {problem} (set llm.structured: false, or leave it unset "
            "to use structured output only where the backend has it)"
        )
    return problem is None


def complete(llm: LLMCache, requests: Sequence[LLMRequest], label: str) -> tuple[list[Completion], bool]:
    """The completions of ``requests`` and whether they were generated under their schemas (False when
    none carries one, or after a fallback to free text; module doc)."""
    if not any(r.schema is not None for r in requests):
        return llm.complete(requests, label), False
    try:
        return llm.complete(requests, label), True
    except SchemaRefused as exc:
        log.warning("%s: structured output refused, falling back to free-text answers: %s", label, exc)
        return llm.complete([r.without_schema() for r in requests], label), False
    except LLMCacheMiss as miss:
        if not llm.replay_only:
            raise
        try:
            answers = llm.complete([r.without_schema() for r in requests], label)
        except LLMCacheMiss:
            raise miss from None
        log.warning(
            "%s: replay-only: no structured answers in llm_calls, replaying the free-text answers of a run "
            "without structured output",
            label,
        )
        return answers, False
