"""Every LLM call goes through the ``llm_calls`` table.

Key: ``cache_key = sha256_hex(canonical JSON of {model, messages, sampling (temperature, top_p,
max_tokens, seed), prompt "<name>.v<N>"})`` (keys sorted, UTF-8, no whitespace). A request whose key is
stored is answered from the table (zero calls); misses go to the backend in batches of
``commit_every`` and each batch is committed in its own transaction, so an interrupted stage resumes
where it stopped. In replay-only mode a miss is an error naming the item. The API key is never part of
a request, so it is never stored.
"""
from __future__ import annotations

import datetime as dt
import hashlib
import json
from typing import Sequence

import duckdb
import pyarrow as pa
from rich.progress import Progress

from ingest.llm.backend import LLMBackend, LLMError, LLMRequest
from ingest.llm.config import ENV
from warehouse.db import transaction


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
    backend and by the table since construction.
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

    @property
    def backend_name(self) -> str:
        return self.backend.name if self.backend is not None else "replay"

    def generate(self, requests: Sequence[LLMRequest], label: str = "LLM calls") -> list[str]:
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
                    texts = self.backend.generate([r for _, r in batch])
                    if len(texts) != len(batch):
                        raise LLMError(f"backend {self.backend_name} returned {len(texts)} answers for {len(batch)} requests")
                    self._store(batch, texts)
                    stored.update({k: t for (k, _), t in zip(batch, texts)})
                    self.calls += len(batch)
                    bar.advance(task, len(batch))
        return [stored[k] for k in keys]

    def _lookup(self, keys: list[str]) -> dict[str, str]:
        if not keys:
            return {}
        self.con.register("_llm_keys", pa.table({"cache_key": keys}))
        try:
            rows = self.con.execute(
                "SELECT c.cache_key, arg_min(c.response_text, c.created_at) FROM llm_calls c "
                "JOIN _llm_keys k USING (cache_key) GROUP BY c.cache_key"
            ).fetchall()
        finally:
            self.con.unregister("_llm_keys")
        return dict(rows)

    def _store(self, batch: list[tuple[str, LLMRequest]], texts: list[str]) -> None:
        now = dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)
        table = pa.table({
            "cache_key": [k for k, _ in batch],
            "model": [self.model] * len(batch),
            "prompt_name": [r.prompt_name for _, r in batch],
            "prompt_version": [r.prompt_version for _, r in batch],
            "item_id": [r.item_id for _, r in batch],
            "request_json": [json.dumps(r.payload(self.model), sort_keys=True, ensure_ascii=False) for _, r in batch],
            "response_text": texts,
            "backend": [self.backend_name] * len(batch),
            "created_at": pa.array([now] * len(batch), pa.timestamp("us")),
        })
        with transaction(self.con):
            self.con.register("_llm_rows", table)
            try:
                cols = ", ".join(table.column_names)
                self.con.execute(f"INSERT INTO llm_calls ({cols}) SELECT {cols} FROM _llm_rows")
            finally:
                self.con.unregister("_llm_rows")
