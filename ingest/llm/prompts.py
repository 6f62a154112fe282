"""Versioned prompt files: ``ingest/llm/prompts/<name>.v<N>.txt``, and the answer schema of a structured prompt.

A prompt's text is a :class:`string.Template` (``$placeholder``); values are substituted once and
never re-parsed, so document text containing ``$`` or braces is safe. A changed prompt gets a new
version number (a new file), and the version is part of every cache key.

A prompt whose answer is JSON has its JSON schema beside it, ``<name>.v<N>.schema.json``, versioned
with the prompt (a changed schema is a new version of both). A string value ``"$placeholder"`` in the
schema stands for a per-request bound and is replaced by the value given to :meth:`Prompt.schema`
(``"maximum": "$n_paragraphs"`` becomes ``"maximum": 12``); the backends enforce the filled schema when
structured output is on (:mod:`ingest.llm.structured`). Free-text prompts (contexts, queries,
paraphrases, rewrites, reader answers) have no schema.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from string import Template
from typing import Any

PROMPT_DIR = Path(__file__).resolve().parent / "prompts"
_FILE = re.compile(r"^(?P<name>[a-z0-9_]+)\.v(?P<version>\d+)\.txt$")
_PLACEHOLDER = re.compile(r"\$[a-z_][a-z0-9_]*")


@dataclass(frozen=True)
class Prompt:
    name: str
    version: int
    text: str
    schema_template: Any = field(default=None, repr=False, compare=False)  # parsed schema file, None: free text

    @property
    def key(self) -> str:
        """``<name>.v<N>``, the form stored in ``llm_calls`` and hashed into cache keys."""
        return f"{self.name}.v{self.version}"

    def render(self, **values: str) -> str:
        """Substitute every ``$placeholder``; a missing value raises ``KeyError`` naming it."""
        return Template(self.text).substitute(**values)

    def schema(self, **values: int) -> dict | None:
        """The answer's JSON schema with each ``"$placeholder"`` string replaced by its value (None for a
        free-text prompt); a placeholder without a value raises ``KeyError`` naming it."""
        if self.schema_template is None:
            return None

        def fill(node: Any) -> Any:
            if isinstance(node, dict):
                return {k: fill(v) for k, v in node.items()}
            if isinstance(node, list):
                return [fill(v) for v in node]
            if isinstance(node, str) and _PLACEHOLDER.fullmatch(node):
                name = node[1:]
                if name not in values:
                    raise KeyError(f"schema of prompt {self.key} needs a value for ${name}")
                return values[name]
            return node

        return fill(self.schema_template)


def load_prompt(name: str, version: int | None = None, directory: Path = PROMPT_DIR) -> Prompt:
    """The prompt ``name`` at ``version`` (default: the highest version on disk)."""
    versions = {}
    for path in directory.glob(f"{name}.v*.txt"):
        m = _FILE.match(path.name)
        if m and m["name"] == name:
            versions[int(m["version"])] = path
    if not versions:
        raise FileNotFoundError(f"no prompt file {name}.v<N>.txt in {directory}")
    chosen = max(versions) if version is None else version
    if chosen not in versions:
        raise FileNotFoundError(f"prompt {name} has versions {sorted(versions)}, not {chosen} ({directory})")
    schema_file = directory / f"{name}.v{chosen}.schema.json"
    schema = None
    if schema_file.is_file():
        try:
            schema = json.loads(schema_file.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise ValueError(f"{schema_file}: not valid JSON ({exc})") from exc
    return Prompt(name, chosen, versions[chosen].read_text(encoding="utf-8"), schema)
