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

from ingest.llm.yamlfile import load_yaml

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
    "retry_failed": "RAGWH_LLM_RETRY_FAILED",
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
    - ``max_failed_share``: the largest share of a stage's answers (per strategy and seed in the
      rewriting stage) that may be failed calls -- empty, or unusable for the prompt -- before the stage
      stops with an error (default 0.5). Failed answers are never cached: a rerun asks for them again.
    - ``max_attempts``: runs that ask a failed request (default 2); one that failed in that many runs is kept as
      a final failure with its reason (``llm_failures``) and not asked again, so a rerun with nothing changed
      makes no call. A seeded local model gives the same answer every time, so 1 is enough there.
    - ``retry_failed``: ask the final failures again (``ragwh run --retry-failed``, ``RAGWH_LLM_RETRY_FAILED``).
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
    max_failed_share: float = 0.5
    max_attempts: int = 2
    retry_failed: bool = False

    def __post_init__(self) -> None:
        if self.backend not in BACKENDS:
            raise ValueError(
                f"LLM backend {self.backend!r} unknown: set {ENV['backend']} to one of {', '.join(BACKENDS)}"
            )
        if self.concurrency < 1 or self.max_retries < 0 or self.timeout_s <= 0 or self.commit_every < 1:
            raise ValueError(
                "LLM config: concurrency >= 1, max_retries >= 0, timeout_s > 0 and commit_every >= 1 are required"
            )
        unknown = sorted(set(self.max_tokens) - set(STAGE_MAX_TOKENS))
        if unknown or not all(
            isinstance(v, int) and not isinstance(v, bool) and v >= 1 for v in self.max_tokens.values()
        ):
            raise ValueError(
                f"llm.max_tokens: keys among {', '.join(STAGE_MAX_TOKENS)} with integer values >= 1, "
                f"got {dict(self.max_tokens)}"
            )
        if self.structured not in (True, False, None):
            raise ValueError(f"llm.structured: true, false or null (auto), got {self.structured!r}")

    def stage_max_tokens(self, stage: str) -> int:
        """The answer-length cap of ``stage`` (``induce`` | ``contexts`` | ``queries``)."""
        return int(self.max_tokens.get(stage, STAGE_MAX_TOKENS[stage]))


class LLMConfigError(ValueError):
    """A bad ``llm:`` value (``key``) or ``RAGWH_LLM_*`` environment variable (``variable``): the message
    names the place (``llm.<key>`` or the variable) and the problem; a config reader adds its file."""

    def __init__(self, key: str, problem: str, variable: str | None = None):
        self.key, self.problem, self.variable = key, problem, variable
        super().__init__(f"{f'environment variable {variable}' if variable else f'llm.{key}'}: {problem}")


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _integer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


#: key -> (test, what it must be): every field of :class:`LLMConfig` but ``backend``, ``api_key``, ``max_tokens``
_RULES: dict[str, tuple[Any, str]] = {
    "model": (lambda v: isinstance(v, str), "a string"),
    "base_url": (lambda v: isinstance(v, str) and v.strip() != "", "a non-empty string"),
    "timeout_s": (lambda v: _number(v) and v > 0, "a number > 0"),
    "max_retries": (lambda v: _integer(v) and v >= 0, "an integer >= 0"),
    "backoff_s": (lambda v: _number(v) and v >= 0, "a number >= 0"),
    "backoff_max_s": (lambda v: _number(v) and v >= 0, "a number >= 0"),
    "concurrency": (lambda v: _integer(v) and v >= 1, "an integer >= 1"),
    "seed": (lambda v: _integer(v) and v >= 0, "an integer >= 0"),
    "commit_every": (lambda v: _integer(v) and v >= 1, "an integer >= 1"),
    "replay_only": (lambda v: isinstance(v, bool), "true or false"),
    "vllm": (lambda v: isinstance(v, Mapping), "a mapping"),
    "transformers": (lambda v: isinstance(v, Mapping), "a mapping"),
    "structured": (lambda v: v in (True, False, None, "auto"), "true, false, auto or null"),
    "max_failed_share": (lambda v: _number(v) and 0 <= v <= 1, "a number in [0, 1]"),
    "max_attempts": (lambda v: _integer(v) and v >= 1, "an integer >= 1"),
    "retry_failed": (lambda v: isinstance(v, bool), "true or false"),
}
_FLAGS = {"1": True, "true": True, "yes": True, "on": True, "0": False, "false": False, "no": False, "off": False}


def check_llm_value(key: str, value: Any, variable: str | None = None) -> None:
    """Raise :class:`LLMConfigError` unless ``value`` is valid for the ``llm:`` key ``key``."""
    if key == "backend":
        if value not in BACKENDS:
            raise LLMConfigError(key, f"{value!r} is not one of {', '.join(BACKENDS)}", variable)
        return
    if key == "max_tokens":
        if not isinstance(value, Mapping):
            raise LLMConfigError(key, f"expected a mapping of {', '.join(STAGE_MAX_TOKENS)}, got {value!r}", variable)
        for stage, cap in value.items():
            if stage not in STAGE_MAX_TOKENS:
                raise LLMConfigError(f"max_tokens.{stage}", f"unknown stage (known: {', '.join(STAGE_MAX_TOKENS)})")
            if not (_integer(cap) and cap >= 1):
                raise LLMConfigError(f"max_tokens.{stage}", f"expected an integer >= 1, got {cap!r}")
        return
    test, what = _RULES[key]
    if not test(value):
        raise LLMConfigError(key, f"expected {what}, got {value!r}", variable)


def _from_env(key: str, variable: str, text: str) -> Any:
    """The value of ``key`` the environment variable gives (flags: 1/0, true/false, yes/no, on/off)."""
    if key in ("replay_only", "structured", "retry_failed"):
        flag = text.strip().lower()
        if key == "structured" and flag == "auto":
            return None
        if flag not in _FLAGS:
            raise LLMConfigError(
                key,
                f"{text!r} is not one of {', '.join(_FLAGS)}" + (" or auto" if key == "structured" else ""),
                variable,
            )
        return _FLAGS[flag]
    return text


def check_llm_settings(
    values: Mapping[str, Any], env: Mapping[str, str] | None = None, allow_none: bool = False
) -> dict[str, Any]:
    """Check the ``llm:`` mapping ``values`` and the ``RAGWH_LLM_*`` variables of ``env`` key by key
    (unknown keys, types, ranges; an API key in the mapping); return the merged values (environment
    over mapping). ``allow_none``: ``backend: none`` (no LLM stage) is accepted. Raises
    :class:`LLMConfigError` naming the key or the variable."""
    env = os.environ if env is None else env
    if "api_key" in values:
        raise LLMConfigError("api_key", f"never put an API key in a config: set {ENV['api_key']} in the environment")
    known = {f.name for f in dataclasses.fields(LLMConfig)} - {"api_key"}
    unknown = sorted(set(values) - known)
    if unknown:
        raise LLMConfigError(str(unknown[0]), f"unknown key (known: {', '.join(sorted(known))})")
    merged = dict(values)
    for key, value in values.items():
        if not (key == "backend" and allow_none and value == "none"):
            check_llm_value(key, value)
    for key, variable in ENV.items():
        if env.get(variable):
            merged[key] = _from_env(key, variable, env[variable])
            if key != "api_key" and not (key == "backend" and allow_none and merged[key] == "none"):
                check_llm_value(key, merged[key], variable)
    if merged.get("structured") == "auto":
        merged["structured"] = None
    return merged


def load_llm_config(
    config: Mapping[str, Any] | str | os.PathLike | None = None, env: Mapping[str, str] | None = None
) -> LLMConfig:
    """Build the config from an experiment config (a mapping, or a YAML file with an ``llm:`` key)
    and the environment (``os.environ`` unless ``env`` is given); every value is checked
    (:func:`check_llm_settings`)."""
    env = os.environ if env is None else env
    if isinstance(config, (str, os.PathLike)):
        path = Path(config)
        loaded = load_yaml(path.read_text(encoding="utf-8")) or {}
        if not isinstance(loaded, Mapping):
            raise ValueError(f"{path}: the experiment config must be a YAML mapping")
        config = loaded.get("llm", {}) or {}
    values = dict(config or {})
    if values.get("backend") == "none" and not env.get(ENV["backend"]):
        raise ValueError(
            f"the experiment config has llm.backend: none; set it (or {ENV['backend']}) to one of "
            f"{', '.join(BACKENDS)} to run an LLM stage"
        )
    return LLMConfig(**check_llm_settings(values, env))
