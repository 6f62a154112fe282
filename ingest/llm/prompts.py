"""Versioned prompt files: ``ingest/llm/prompts/<name>.v<N>.txt``.

A prompt's text is a :class:`string.Template` (``$placeholder``); values are substituted once and
never re-parsed, so document text containing ``$`` or braces is safe. A changed prompt gets a new
version number (a new file), and the version is part of every cache key.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from string import Template

PROMPT_DIR = Path(__file__).resolve().parent / "prompts"
_FILE = re.compile(r"^(?P<name>[a-z0-9_]+)\.v(?P<version>\d+)\.txt$")


@dataclass(frozen=True)
class Prompt:
    name: str
    version: int
    text: str

    @property
    def key(self) -> str:
        """``<name>.v<N>``, the form stored in ``llm_calls`` and hashed into cache keys."""
        return f"{self.name}.v{self.version}"

    def render(self, **values: str) -> str:
        """Substitute every ``$placeholder``; a missing value raises ``KeyError`` naming it."""
        return Template(self.text).substitute(**values)


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
    return Prompt(name, chosen, versions[chosen].read_text(encoding="utf-8"))
