"""Reading an experiment YAML for either study: the one error type (:class:`ConfigError`: the file, the dotted
key, the problem, on one line), typed access to the parsed mapping (:class:`_Reader`), YAML errors on one line
and the check that a model name can be loaded."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml


class ConfigError(ValueError):
    """An experiment config that cannot be used; the message names the file and the key."""


def _model_name(r: "_Reader", key: str, model: str, kind: str) -> None:
    """Raise :class:`ConfigError` at ``key`` unless ``model`` resolves to an embedder (``kind``
    'embedder') or a cross-encoder ('reranker') that can be loaded: a registered name, an existing
    local directory or a hub id (checked without loading anything)."""
    from ingest.retrieval.embedders import EmbedderError, resolve_embedder
    from ingest.retrieval.rerank import RerankError, resolve_reranker

    try:
        (resolve_embedder if kind == "embedder" else resolve_reranker)(model)
    except (EmbedderError, RerankError) as exc:
        raise r.fail(key, str(exc)) from None


class _Reader:
    """Typed access to a mapping that reports errors as ``<file>: <dotted.key>: <problem>``."""

    def __init__(self, file: Path) -> None:
        self.file = file

    def corpora(self, value: Any, build: Callable[[str, dict], Any]) -> list:
        """The ``corpora:`` list: each entry a mapping of name, loader, sources (required) and options,
        turned into a spec by ``build(dotted_key, entry)``; the names must be unique."""
        if not isinstance(value, list) or not value:
            raise self.fail("corpora", "expected a non-empty list of corpora")
        corpora = []
        for i, c in enumerate(value):
            key = f"corpora[{i}]"
            c = self.mapping(c, key, {"name", "loader", "sources", "options"})
            for req in ("name", "loader", "sources"):
                if req not in c:
                    raise self.fail(f"{key}.{req}", "required key missing")
            corpora.append(build(key, c))
        names = [c.name for c in corpora]
        if len(set(names)) != len(names):
            raise self.fail("corpora", f"corpus names must be unique, got {names}")
        return corpora

    def fail(self, key: str, problem: str) -> ConfigError:
        return ConfigError(f"{self.file}: {key}: {problem}")

    def mapping(self, value: Any, key: str, allowed: set[str]) -> dict:
        if not isinstance(value, dict):
            raise self.fail(key, f"expected a mapping, got {type(value).__name__}")
        unknown = sorted(set(value) - allowed)
        if unknown:
            raise self.fail(
                f"{key}.{unknown[0]}" if key else unknown[0], f"unknown key (allowed: {', '.join(sorted(allowed))})"
            )
        return value

    def string(self, value: Any, key: str) -> str:
        if not isinstance(value, str) or not value.strip():
            raise self.fail(key, f"expected a non-empty string, got {value!r}")
        return value

    def integer(self, value: Any, key: str, minimum: int) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise self.fail(key, f"expected an integer >= {minimum}, got {value!r}")
        return value

    def strings(self, value: Any, key: str) -> list[str]:
        if not isinstance(value, list):
            raise self.fail(key, f"expected a list, got {type(value).__name__}")
        return [self.string(v, f"{key}[{i}]") for i, v in enumerate(value)]

    def unique(self, values: list | tuple, key: str) -> None:
        """Raise at ``key[i]`` for the first entry that repeats an earlier one (a list is never deduplicated
        silently: the second copy would be dropped, or run twice)."""
        for i, v in enumerate(values):
            if v in values[:i]:
                raise self.fail(f"{key}[{i}]", f"{v!r} is listed twice (first at {key}[{list(values).index(v)}])")

    def number(self, value: Any, key: str) -> float:
        """A YAML number (int or float); true/false are not numbers."""
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.fail(key, f"expected a number, got {value!r}")
        return float(value)

    def choice(self, value: Any, key: str, choices: tuple[str, ...] | list[str]) -> str:
        if value not in choices:
            raise self.fail(key, f"{value!r} is not one of {', '.join(choices)}")
        return value


def yaml_where(exc: yaml.YAMLError) -> str:
    """' at line L, column C: problem (context started at ...)' of a YAML error, on one line (every
    reader of an experiment YAML reports ``f"{file}: not valid YAML{yaml_where(exc)}"``)."""
    mark, problem = getattr(exc, "problem_mark", None), getattr(exc, "problem", None)
    if mark is None or problem is None:
        return ": " + " ".join(str(exc).split())
    where = f" at line {mark.line + 1}, column {mark.column + 1}: {problem}"
    context, start = getattr(exc, "context", None), getattr(exc, "context_mark", None)
    if context and start is not None:
        where += f" ({context} started at line {start.line + 1}, column {start.column + 1})"
    return where
