"""Every LLM call goes through the ``llm_calls`` table.

Key: ``cache_key = sha256_hex(canonical JSON of {model, messages, sampling (temperature, top_p,
max_tokens, seed), prompt "<name>.v<N>"})`` (keys sorted, UTF-8, no whitespace). A request whose key is
stored is answered from the table (zero calls); misses go to the backend in batches of
``commit_every`` and each batch is committed in its own transaction (a batch is stored whole or not at
all), so an interrupted stage resumes where it stopped. In replay-only mode a miss is an error naming
the item. The API key is never part of a request, so it is never stored.

Each row also keeps the answer's ``finish_reason`` (``stop`` | ``length``; NULL when the backend does
not say) and its ``prompt_tokens`` / ``completion_tokens`` (NULL when not reported), so a cached answer
that was cut at ``max_tokens`` is still known to be cut. ``cut`` and ``empty`` count the answers (cached
or new) that were cut or empty; the stages count them in their funnels and handle them.
"""
from __future__ import annotations

import datetime as dt
import hashlib
import json
import logging
from typing import Sequence

import duckdb
import pyarrow as pa
from rich.progress import Progress

from ingest.llm.backend import Completion, LLMBackend, LLMError, LLMRequest
from ingest.llm.config import ENV
from warehouse.db import transaction

log = logging.getLogger(__name__)


class LLMCacheMiss(LLMError):
    """Replay-only mode met a request that was never answered."""


def cache_key(model: str, request: LLMRequest) -> str:
    """sha256 hex of the request's canonical JSON under ``model``."""
    return hashlib.sha256(request.canonical_json(model).encode("utf-8")).hexdigest()


class LLMCache:
    """A backend front: answers from ``llm_calls`` first, calls ``backend`` only for misses.

    ``model`` defaults to ``backend.model``; in replay-only mode no backend is needed but the model
    must be named (it is part of every key). ``seed`` is the sampling seed stages put in their
    requests (the configured ``llm.seed``). ``calls`` and ``hits`` count requests answered by the
    backend and by the table since construction; ``cut`` and ``empty`` the answers among them cut at
    ``max_tokens`` or empty after trimming. In replay-only mode a backend may still be given: it is
    never asked to generate, only to fit prompts to its context (:meth:`fits`) as when they were made.
    """

    def __init__(self, con: duckdb.DuckDBPyConnection, backend: LLMBackend | None, *, model: str | None = None,
                 replay_only: bool = False, commit_every: int = 64, seed: int = 20260710, progress: bool = True):
        if backend is None and not replay_only:
            raise ValueError("LLMCache needs a backend unless replay_only is set")
        self.model = model or (backend.model if backend is not None else "")
        if not self.model:
            raise ValueError(f"no LLM model named: set {ENV['model']} (it is part of every cache key)")
        if backend is not None and backend.model != self.model:
            raise ValueError(f"backend model {backend.model!r} differs from cache model {self.model!r}")
        self.con = con
        self.backend = backend
        self.replay_only = replay_only
        self.commit_every = commit_every
        self.seed = seed
        self.progress = progress
        self.calls = 0
        self.hits = 0
        self.cut = 0
        self.empty = 0

    @property
    def backend_name(self) -> str:
        return self.backend.name if self.backend is not None and not self.replay_only else "replay"

    def fits(self, messages: Sequence[dict], max_tokens: int) -> bool:
        """Whether ``messages`` plus ``max_tokens`` completion tokens fit the model's context window
        (always True when the backend does not know its window)."""
        window = self.backend.context_window() if self.backend is not None else None
        return window is None or self.backend.prompt_tokens(messages) + max_tokens <= window

    def generate(self, requests: Sequence[LLMRequest], label: str = "LLM calls") -> list[str]:
        """The answer text of each request, in order (see :meth:`complete`)."""
        return [c.text for c in self.complete(requests, label)]

    def complete(self, requests: Sequence[LLMRequest], label: str = "LLM calls") -> list[Completion]:
        """One completion per request, in order; identical requests are answered once."""
        keys = [cache_key(self.model, r) for r in requests]
        stored = self._lookup(sorted(set(keys)))
        first_of: dict[str, LLMRequest] = {}
        for k, r in zip(keys, requests):
            if k not in stored and k not in first_of:
                first_of[k] = r
        self.hits += sum(k in stored for k in keys)
        if first_of and self.replay_only:
            missing = list(first_of.values())
            names = ", ".join(f"{r.item_id} ({r.prompt})" for r in missing[:5])
            raise LLMCacheMiss(
                f"replay-only: {len(missing)} request(s) not in llm_calls, first: {names} "
                f"(unset {ENV['replay_only']} / drop --replay-only to generate them, with model {self.model!r})")
        pending = list(first_of.items())
        if pending:
            with Progress(disable=not self.progress) as bar:
                task = bar.add_task(f"{label} ({self.backend_name}, {len(pending)} to generate)", total=len(pending))
                for start in range(0, len(pending), self.commit_every):
                    batch = pending[start:start + self.commit_every]
                    answers = self.backend.generate([r for _, r in batch])
                    if len(answers) != len(batch) or not all(isinstance(a, Completion) for a in answers):
                        raise LLMError(f"backend {self.backend_name} returned {len(answers)} answers for "
                                       f"{len(batch)} requests (one Completion per request expected)")
                    self._store(batch, answers)
                    stored.update({k: a for (k, _), a in zip(batch, answers)})
                    self.calls += len(batch)
                    bar.advance(task, len(batch))
        out = [stored[k] for k in keys]
        cut = [r for r, c in zip(requests, out) if c.cut]
        empty = [r for r, c in zip(requests, out) if not c.text.strip()]
        self.cut += len(cut)
        self.empty += len(empty)
        for what, which in (("cut at max_tokens", cut), ("empty", empty)):
            if which:
                log.warning("%s: %d of %d answers %s (first: %s, %s)", label, len(which), len(out), what,
                            which[0].item_id, which[0].prompt)
        return out

    def _lookup(self, keys: list[str]) -> dict[str, Completion]:
        if not keys:
            return {}
        self.con.register("_llm_keys", pa.table({"cache_key": keys}))
        try:
            rows = self.con.execute(
                "SELECT cache_key, response_text, finish_reason, prompt_tokens, completion_tokens FROM llm_calls "
                "JOIN _llm_keys USING (cache_key) QUALIFY row_number() OVER (PARTITION BY cache_key ORDER BY created_at) = 1"
            ).fetchall()
        finally:
            self.con.unregister("_llm_keys")
        return {k: Completion(*v) for k, *v in rows}

    def _store(self, batch: list[tuple[str, LLMRequest]], answers: list[Completion]) -> None:
        now = dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)
        table = pa.table({
            "cache_key": [k for k, _ in batch],
            "model": [self.model] * len(batch),
            "prompt_name": [r.prompt_name for _, r in batch],
            "prompt_version": [r.prompt_version for _, r in batch],
            "item_id": [r.item_id for _, r in batch],
            "request_json": [json.dumps(r.payload(self.model), sort_keys=True, ensure_ascii=False) for _, r in batch],
            "response_text": [a.text for a in answers],
            "backend": [self.backend_name] * len(batch),
            "created_at": pa.array([now] * len(batch), pa.timestamp("us")),
            "prompt_tokens": pa.array([a.prompt_tokens for a in answers], pa.int32()),
            "completion_tokens": pa.array([a.completion_tokens for a in answers], pa.int32()),
            "finish_reason": pa.array([a.finish_reason for a in answers], pa.string()),
        })
        with transaction(self.con):
            self.con.register("_llm_rows", table)
            try:
                cols = ", ".join(table.column_names)
                self.con.execute(f"INSERT INTO llm_calls ({cols}) SELECT {cols} FROM _llm_rows")
            finally:
                self.con.unregister("_llm_rows")
