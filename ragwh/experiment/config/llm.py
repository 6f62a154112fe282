"""The ``llm:`` block of an experiment config (both studies): :class:`LLMSpec` and :func:`parse_llm`, which checks
every key when the config is read, not when an LLM stage starts."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from ragwh.experiment.config.reader import ConfigError, _Reader


@dataclass(frozen=True)
class LLMSpec:
    """``backend`` 'none' (no LLM stage runs) or one of ``ingest.llm.config.BACKENDS``; ``settings`` are
    the other keys of the config's ``llm:`` mapping, passed to ``ingest.llm.load_llm_config`` (the
    ``RAGWH_LLM_*`` environment variables override them; ``RAGWH_LLM_BACKEND`` also overrides 'none')."""

    backend: str
    settings: dict[str, Any] = field(default_factory=dict)

    @property
    def model(self) -> str | None:
        """The model the stages will use (the transformers backend defaults to the packaged tiny model)."""
        from ingest.llm.local_models import DEFAULT_LOCAL_MODEL

        named = os.environ.get("RAGWH_LLM_MODEL") or self.settings.get("model")
        return named or (DEFAULT_LOCAL_MODEL if self.backend == "transformers" else None)

    @property
    def tiny(self) -> bool:
        """Whether the LLM stages run a tiny demo model (their output is then labelled, never a result)."""
        from ingest.llm.local_models import is_tiny_model

        return self.backend != "none" and is_tiny_model(self.model)


def parse_llm(r: _Reader, value: Any) -> LLMSpec:
    """The ``llm:`` mapping (absent: backend none), every key checked now rather than when an LLM stage
    starts (:func:`ingest.llm.config.check_llm_settings`: unknown keys, types, ranges), and the
    ``RAGWH_LLM_*`` variables, which override it: an error names the file and ``llm.<key>``, or the
    variable when the environment is at fault."""
    from ingest.llm.config import LLMConfigError, check_llm_settings

    llm_raw = {"backend": "none"} if value is None else value
    if not isinstance(llm_raw, dict):
        raise r.fail("llm", f"expected a mapping, got {type(llm_raw).__name__}")
    llm_raw = {"backend": "none", **llm_raw}
    try:
        merged = check_llm_settings(llm_raw, os.environ, allow_none=True)
    except LLMConfigError as exc:
        if exc.variable is not None:
            raise ConfigError(f"{exc} (the variable overrides {r.file})") from None
        raise r.fail(f"llm.{exc.key}", exc.problem) from None
    return LLMSpec(merged["backend"], {k: v for k, v in llm_raw.items() if k != "backend"})
