"""The one interface every text generator implements, and the request it consumes.

A backend turns a batch of chat requests into one completion string each, in order. Backends never
cache: :class:`ingest.llm.cache.LLMCache` sits in front of every backend, so a stage talks to the cache.
"""
from __future__ import annotations

import json
from abc import ABC, abstractmethod
from dataclasses import asdict, dataclass, field
from typing import Sequence


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
    (``<name>.v<N>``); ``messages`` are OpenAI-style ``{"role", "content"}`` dicts.
    """

    item_id: str
    prompt: str
    messages: tuple[dict, ...]
    sampling: Sampling = field(default_factory=Sampling)

    @property
    def prompt_name(self) -> str:
        return self.prompt.rsplit(".v", 1)[0]

    @property
    def prompt_version(self) -> str:
        return self.prompt.rsplit(".v", 1)[1]

    def payload(self, model: str) -> dict:
        """Everything that determines the answer: the cache key is the sha256 of its canonical JSON."""
        return {
            "model": model,
            "messages": [dict(m) for m in self.messages],
            "sampling": self.sampling.as_dict(),
            "prompt": self.prompt,
        }

    def canonical_json(self, model: str) -> str:
        return json.dumps(self.payload(model), sort_keys=True, ensure_ascii=False, separators=(",", ":"))


class LLMError(RuntimeError):
    """A generation failed for good (after retries); the message names the item and what to do."""


class LLMBackend(ABC):
    """A text generator: ``generate(requests)`` returns one completion per request, in order."""

    #: short backend name recorded in ``llm_calls.backend`` ('openai', 'vllm', 'scripted')
    name: str
    #: the model identifier sent to the server / loaded by the engine (part of the cache key)
    model: str

    @abstractmethod
    def generate(self, requests: Sequence[LLMRequest]) -> list[str]:
        """Return the completion text for each request, in the order given."""

    def close(self) -> None:
        """Release connections or engines (no-op by default)."""
