"""The one interface every text generator implements, the request it consumes and the completion it returns.

A backend turns a batch of chat requests into one :class:`Completion` each, in order. Backends never
cache: :class:`ingest.llm.cache.LLMCache` sits in front of every backend, so a stage talks to the cache.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Iterator, Mapping, Sequence


@dataclass(frozen=True)
class Sampling:
    """Sampling parameters sent with every request (identical meaning in vLLM and OpenAI APIs).

    ``max_tokens`` bounds the completion length in model tokens; ``seed`` makes sampling reproducible
    where the server honours it (vLLM does per request).
    """

    temperature: float = 0.0
    top_p: float = 1.0
    max_tokens: int = 1024
    seed: int = 0

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class LLMRequest:
    """One chat completion to make.

    ``item_id`` names what the call is for (a doc_id, a chunk_id, a candidate query id) and appears
    in every error and cache miss message; ``prompt`` is the versioned prompt name
    (``<name>.v<N>``); ``messages`` are OpenAI-style ``{"role", "content"}`` dicts. ``schema`` is the
    JSON schema the answer must satisfy (structured output, enforced by the backend; see
    :mod:`ingest.llm.structured`), None for a free-text answer.
    """

    item_id: str
    prompt: str
    messages: tuple[dict, ...]
    sampling: Sampling = field(default_factory=Sampling)
    schema: Mapping[str, Any] | None = None

    @property
    def prompt_name(self) -> str:
        return self.prompt.rsplit(".v", 1)[0]

    @property
    def prompt_version(self) -> str:
        return self.prompt.rsplit(".v", 1)[1]

    def payload(self, model: str) -> dict:
        """Everything that determines the answer: the cache key is the sha256 of its canonical JSON.
        A structured request adds its ``schema``; a free-text request's payload (and key) has no such
        entry, so keys made before structured output existed stay valid."""
        payload = {
            "model": model,
            "messages": [dict(m) for m in self.messages],
            "sampling": self.sampling.as_dict(),
            "prompt": self.prompt,
        }
        if self.schema is not None:
            payload["schema"] = self.schema
        return payload

    def without_schema(self) -> "LLMRequest":
        """The same request as free text (what is sent where structured output is off or refused)."""
        return replace(self, schema=None)

    def canonical_json(self, model: str) -> str:
        return json.dumps(self.payload(model), sort_keys=True, ensure_ascii=False, separators=(",", ":"))


FINISH_REASONS = ("stop", "length")


@dataclass(frozen=True)
class Completion:
    """One answer.

    ``finish_reason``: ``stop`` (the model ended its answer) or ``length`` (cut at ``max_tokens``:
    the text is a prefix of what the model would have written); None when the backend does not say.
    ``prompt_tokens`` / ``completion_tokens``: tokens the model read (chat template included) and
    wrote (the end-of-answer token included), None when the backend does not report them.
    """

    text: str
    finish_reason: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None

    def __post_init__(self) -> None:
        if self.finish_reason is not None and self.finish_reason not in FINISH_REASONS:
            raise ValueError(f"finish_reason {self.finish_reason!r} is not one of {', '.join(FINISH_REASONS)} or None")

    @property
    def cut(self) -> bool:
        """True when the answer was cut at ``max_tokens``."""
        return self.finish_reason == "length"


class LLMError(RuntimeError):
    """A generation failed for good (after retries); the message names the item and what to do."""


class SchemaRefused(LLMError):
    """The server refused a request's JSON schema (structured output); the same request as free text may
    still be answered (:func:`ingest.llm.structured.complete` falls back)."""


class LLMBackend(ABC):
    """A text generator: ``generate(requests)`` returns one :class:`Completion` per request, in order."""

    #: short backend name recorded in ``llm_calls.backend`` ('openai', 'vllm', 'transformers', 'scripted')
    name: str
    #: the model identifier sent to the server / loaded by the engine (part of the cache key)
    model: str

    @abstractmethod
    def generate(self, requests: Sequence[LLMRequest]) -> list[Completion]:
        """Return the completion of each request, in the order given."""

    def generate_blocks(self, blocks: Sequence[Sequence[LLMRequest]]) -> Iterator[list[Completion]]:
        """The completions of each block of requests, one list per block, in order, each yielded as soon as it is
        ready (the cache commits a block before the next is generated). Default: one :meth:`generate` call per
        block; an engine that spreads the blocks over workers (:mod:`ingest.llm.ray_generate`) overrides it."""
        for block in blocks:
            yield self.generate(block)

    def schema_unsupported(self) -> str | None:
        """Why the backend cannot enforce a request's ``schema`` while generating (structured output), or
        None when it can. Stages send schemas only to a backend that can (:mod:`ingest.llm.structured`)."""
        return f"backend {self.name} has no structured output"

    def context_window(self) -> int | None:
        """Tokens (prompt + completion) the model holds, or None when unknown (prompts are then never fitted)."""
        return None

    def prompt_tokens(self, messages: Sequence[dict]) -> int:
        """Tokens of ``messages`` as the model reads them (chat template applied); only backends with a
        known :meth:`context_window` implement it."""
        raise NotImplementedError(f"backend {self.name} does not count prompt tokens")

    def close(self) -> None:
        """Release connections or engines (no-op by default)."""
