"""LLM configuration: the experiment config's ``llm:`` mapping, overridden by environment variables.

Precedence (highest first): environment (``RAGWH_LLM_BACKEND`` = ``openai`` | ``vllm`` | ``transformers``,
``RAGWH_LLM_BASE_URL``, ``RAGWH_LLM_MODEL``, ``RAGWH_LLM_API_KEY``, ``RAGWH_LLM_REPLAY_ONLY``,
``RAGWH_LLM_STRUCTURED`` = ``1`` | ``0`` | ``auto``), then the
experiment config (a YAML file whose ``llm:`` mapping holds any field of :class:`LLMConfig` except
``api_key``), then the defaults below. The API key is read from the environment only, is sent as a
bearer token and is never written anywhere (not in ``llm_calls``, not in logs).
"""
from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import yaml

BACKENDS = ("openai", "vllm", "transformers")
#: default answer-length caps (model tokens) of the LLM stages
STAGE_MAX_TOKENS = {"induce": 4096, "contexts": 150, "queries": 96}
ENV = {
    "backend": "RAGWH_LLM_BACKEND",
    "base_url": "RAGWH_LLM_BASE_URL",
    "model": "RAGWH_LLM_MODEL",
    "api_key": "RAGWH_LLM_API_KEY",
    "replay_only": "RAGWH_LLM_REPLAY_ONLY",
    "structured": "RAGWH_LLM_STRUCTURED",
}


@dataclass(frozen=True)
class LLMConfig:
    """Where and how to generate.

    - ``base_url``: an OpenAI-style base URL that already ends in the API version
      (``http://127.0.0.1:8000/v1``); requests go to ``<base_url>/chat/completions``.
    - ``timeout_s``: per-request timeout (seconds) for connect, read and write.
    - ``max_retries``: retries after the first attempt on HTTP 5xx/429, timeouts and connection
      errors; the wait before retry ``r`` (0-based) is ``backoff_s * 2**r`` seconds, capped at ``backoff_max_s``.
    - ``concurrency``: requests in flight at once (HTTP backend).
    - ``seed``: the sampling seed of every stage (part of every cache key).
    - ``commit_every``: completions written to ``llm_calls`` per transaction, so an interrupted stage
      loses at most one batch.
    - ``vllm``: extra keyword arguments for ``vllm.LLM(...)`` (e.g. ``tensor_parallel_size``,
      ``max_model_len``, ``gpu_memory_utilization``).
    - ``transformers``: options of the in-process transformers backend (``device``, ``dtype``,
      ``batch_size``, ``max_batch_tokens``, ``threads``; see :mod:`ingest.llm.transformers_local`).
      With that backend ``model`` defaults to the packaged tiny model ``smollm2-135m-instruct``.
    - ``max_tokens``: per-stage caps on an answer's length in model tokens, keys ``induce`` (4096),
      ``contexts`` (150), ``queries`` (96); what ``ragwh run`` passes to the stages.
    - ``structured``: structured output for prompts that have an answer schema (structure induction):
      ``True`` the backend must enforce the schema, ``False`` free text as before, ``None`` (auto, the
      default) enforced where the backend can (:mod:`ingest.llm.structured`).
    """

    backend: str = "openai"
    model: str = ""
    base_url: str = "http://127.0.0.1:8000/v1"
    api_key: str | None = field(default=None, repr=False)
    timeout_s: float = 300.0
    max_retries: int = 4
    backoff_s: float = 1.0
    backoff_max_s: float = 60.0
    concurrency: int = 8
    seed: int = 20260710
    commit_every: int = 64
    replay_only: bool = False
    vllm: Mapping[str, Any] = field(default_factory=dict)
    transformers: Mapping[str, Any] = field(default_factory=dict)
    max_tokens: Mapping[str, int] = field(default_factory=dict)
    structured: bool | None = None

    def __post_init__(self) -> None:
        if self.backend not in BACKENDS:
            raise ValueError(f"LLM backend {self.backend!r} unknown: set {ENV['backend']} to one of {', '.join(BACKENDS)}")
        if self.concurrency < 1 or self.max_retries < 0 or self.timeout_s <= 0 or self.commit_every < 1:
            raise ValueError("LLM config: concurrency >= 1, max_retries >= 0, timeout_s > 0 and commit_every >= 1 are required")
        unknown = sorted(set(self.max_tokens) - set(STAGE_MAX_TOKENS))
        if unknown or not all(isinstance(v, int) and not isinstance(v, bool) and v >= 1 for v in self.max_tokens.values()):
            raise ValueError(f"llm.max_tokens: keys among {', '.join(STAGE_MAX_TOKENS)} with integer values >= 1, "
                             f"got {dict(self.max_tokens)}")
        if self.structured not in (True, False, None):
            raise ValueError(f"llm.structured: true, false or null (auto), got {self.structured!r}")

    def stage_max_tokens(self, stage: str) -> int:
        """The answer-length cap of ``stage`` (``induce`` | ``contexts`` | ``queries``)."""
        return int(self.max_tokens.get(stage, STAGE_MAX_TOKENS[stage]))


def _truthy(value: str) -> bool:
    return value.strip().lower() in {"1", "true", "yes", "on"}


def _tristate(value: str) -> bool | None:
    """``RAGWH_LLM_STRUCTURED``: ``auto`` is None (the backend decides), else true or false."""
    return None if value.strip().lower() == "auto" else _truthy(value)


def load_llm_config(config: Mapping[str, Any] | str | os.PathLike | None = None,
                    env: Mapping[str, str] | None = None) -> LLMConfig:
    """Build the config from an experiment config (a mapping, or a YAML file with an ``llm:`` key)
    and the environment (``os.environ`` unless ``env`` is given)."""
    env = os.environ if env is None else env
    if isinstance(config, (str, os.PathLike)):
        path = Path(config)
        loaded = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        if not isinstance(loaded, Mapping):
            raise ValueError(f"{path}: the experiment config must be a YAML mapping")
        config = loaded.get("llm", {}) or {}
    values = dict(config or {})
    if "api_key" in values:
        raise ValueError(f"do not put the API key in the experiment config: set {ENV['api_key']} in the environment")
    known = {f.name for f in dataclasses.fields(LLMConfig)}
    unknown = sorted(set(values) - known)
    if unknown:
        raise ValueError(f"unknown llm config keys {unknown}; known: {sorted(known - {'api_key'})}")
    for key, var in ENV.items():
        if env.get(var):
            values[key] = {"replay_only": _truthy, "structured": _tristate}.get(key, str)(env[var])
    if values.get("structured") == "auto":
        values["structured"] = None
    if values.get("backend") == "none":
        raise ValueError(f"the experiment config has llm.backend: none; set it (or {ENV['backend']}) to one of "
                         f"{', '.join(BACKENDS)} to run an LLM stage")
    return LLMConfig(**values)
