"""LLM access for the generation stages: one interface, three real backends, one cache.

``make_backend(config)`` builds the configured backend (``openai`` HTTP, ``vllm`` offline on a GPU, or
``transformers`` in-process on CPU / CUDA / MPS); ``open_llm(con, backend, config)`` puts the
``llm_calls`` cache in front of it (or of nothing, in replay-only mode). Stages receive the
:class:`~ingest.llm.cache.LLMCache`.
"""

from __future__ import annotations

import duckdb

from ingest.llm.backend import Completion, LLMBackend, LLMError, LLMRequest, Sampling
from ingest.llm.cache import LLMCache, LLMCacheMiss, LLMFailedShare, cache_key
from ingest.llm.config import LLMConfig, load_llm_config
from ingest.llm.prompts import Prompt, load_prompt

__all__ = [
    "Completion",
    "LLMBackend",
    "LLMCache",
    "LLMCacheMiss",
    "LLMFailedShare",
    "LLMConfig",
    "LLMError",
    "LLMRequest",
    "Prompt",
    "Sampling",
    "as_llm",
    "cache_key",
    "load_llm_config",
    "load_prompt",
    "make_backend",
    "open_llm",
]


def make_backend(config: LLMConfig) -> LLMBackend:
    """The backend ``config.backend`` names (``vllm`` and ``transformers`` are imported only when chosen)."""
    if config.backend == "vllm":
        from ingest.llm.vllm_offline import VLLMBackend

        return VLLMBackend(config)
    if config.backend == "transformers":
        from ingest.llm.transformers_local import TransformersBackend

        return TransformersBackend(config)
    from ingest.llm.openai_http import OpenAIHTTPBackend

    return OpenAIHTTPBackend(config)


def open_llm(
    con: duckdb.DuckDBPyConnection,
    backend: LLMBackend | None = None,
    config: LLMConfig | None = None,
    *,
    progress: bool = True,
) -> LLMCache:
    """The cache every stage talks to: ``backend`` if given, else the configured one; in replay-only
    mode only cached answers are available, and no backend is built except a ``transformers`` one
    (it loads only its tokenizer, to fit prompts to the model's context exactly as when they were
    generated; it is never asked to generate)."""
    config = config or load_llm_config()
    if backend is None and (not config.replay_only or config.backend == "transformers"):
        backend = make_backend(config)
    model = backend.model if backend is not None else config.model
    return LLMCache(
        con,
        backend,
        model=model,
        replay_only=config.replay_only,
        commit_every=config.commit_every,
        seed=config.seed,
        progress=progress,
        max_failed_share=config.max_failed_share,
        max_attempts=config.max_attempts,
        retry_failed=config.retry_failed,
    )


def as_llm(
    con: duckdb.DuckDBPyConnection, llm: LLMCache | LLMBackend | None, config: LLMConfig | None = None
) -> LLMCache:
    """What a stage was given, as a cache: an :class:`LLMCache` as is, a bare backend behind the
    cache, or (None) the configured backend behind the cache."""
    if isinstance(llm, LLMCache):
        return llm
    return open_llm(con, llm, config)
