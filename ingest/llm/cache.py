"""Every LLM call goes through the ``llm_calls`` table.

Key: ``cache_key = sha256_hex(canonical JSON of {model, messages, sampling (temperature, top_p,
max_tokens, seed), prompt "<name>.v<N>"})`` (keys sorted, UTF-8, no whitespace). A request whose key is
stored is answered from the table (zero calls); misses go to the backend in batches of
``commit_every`` and each batch is committed in its own transaction (a batch is stored whole or not at
all), so an interrupted stage resumes where it stopped. The batches go to the backend's ``generate_blocks``
(one ``generate`` call each, or spread over Ray actors: :mod:`ingest.llm.ray_generate`), and each is
committed as it comes back. In replay-only mode a miss is an error naming
the item, except a request whose key is recorded in ``llm_failures`` (and not in ``llm_calls``): it failed
when the run was made, and replaying it gives its recorded failed answer (the latest), which the stage
falls back from as the live run did, counted as failed; nothing is stored. The API key is never part of
a request, so it is never stored.

Each row also keeps the answer's ``finish_reason`` (``stop`` | ``length``; NULL when the backend does
not say) and its ``prompt_tokens`` / ``completion_tokens`` (NULL when not reported), so a cached answer
that was cut at ``max_tokens`` is still known to be cut. ``cut`` counts the answers (cached or new)
that were cut; the stages count them in their funnels and handle them.

Failed calls are never cached: an answer that is empty after trimming, or that the calling stage cannot
use (its ``usable`` test, e.g. a rewrite answer with no question in it), is returned to the stage (which
falls back as it would) but goes to ``llm_failures`` with its reason, not to ``llm_calls``; a stored
answer that fails the test (written before this rule) is a miss too. So the next run asks for exactly
those requests again, once each (no retry loop within a run), a bounded number of times: a request asked
in ``max_attempts`` runs (``llm.max_attempts``, default 2; each attempt is one ``llm_failures`` row) that
failed every time is a *final failure*: later runs answer it with its latest recorded failed answer
without asking (the stage falls back as before; ``final_failed`` counts them, the log names the reason),
so a rerun with nothing changed makes no call. ``retry_failed`` (``ragwh run --retry-failed``,
``RAGWH_LLM_RETRY_FAILED``) asks the final failures again (one more attempt each). When more than
``max_failed_share`` of one :meth:`LLMCache.complete` call's answers failed, it raises
:class:`LLMFailedShare` (one line) after storing the good answers.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import logging
from typing import Callable, Sequence

import duckdb
import pyarrow as pa
from rich.progress import Progress

from ingest.llm.backend import Completion, LLMBackend, LLMError, LLMRequest
from ingest.llm.config import ENV
from warehouse.db import transaction

log = logging.getLogger(__name__)


class LLMCacheMiss(LLMError):
    """Replay-only mode met a request that was never answered."""


class LLMFailedShare(LLMError):
    """More than ``max_failed_share`` of one call's answers were empty or unusable."""


def _non_empty(text: str) -> bool:
    return bool(text.strip())


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

    def __init__(
        self,
        con: duckdb.DuckDBPyConnection,
        backend: LLMBackend | None,
        *,
        model: str | None = None,
        replay_only: bool = False,
        commit_every: int = 64,
        seed: int = 20260710,
        progress: bool = True,
        max_failed_share: float = 1.0,
        max_attempts: int = 2,
        retry_failed: bool = False,
    ):
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
        self.failed = 0  # failed answers a later run asks again
        self.final_failed = 0  # failed answers kept as final (asked in max_attempts runs), not asked again
        self.max_failed_share = max_failed_share
        self.max_attempts = max_attempts
        self.retry_failed = retry_failed

    @property
    def backend_name(self) -> str:
        return self.backend.name if self.backend is not None and not self.replay_only else "replay"

    def fits(self, messages: Sequence[dict], max_tokens: int) -> bool:
        """Whether ``messages`` plus ``max_tokens`` completion tokens fit the model's context window
        (always True when the backend does not know its window)."""
        window = self.backend.context_window() if self.backend is not None else None
        return window is None or self.backend.prompt_tokens(messages) + max_tokens <= window

    def generate(
        self, requests: Sequence[LLMRequest], label: str = "LLM calls", usable: Callable[[str], bool] | None = None
    ) -> list[str]:
        """The answer text of each request, in order (see :meth:`complete`)."""
        return [c.text for c in self.complete(requests, label, usable)]

    def complete(
        self, requests: Sequence[LLMRequest], label: str = "LLM calls", usable: Callable[[str], bool] | None = None
    ) -> list[Completion]:
        """One completion per request, in order; identical requests are answered once. ``usable(text)``:
        whether the stage can use an answer (default: not empty after trimming); one that is not is a
        failed call (module doc)."""
        usable = usable or _non_empty
        keys = [cache_key(self.model, r) for r in requests]
        stored = {k: c for k, c in self._lookup(sorted(set(keys))).items() if usable(c.text)}
        first_of: dict[str, LLMRequest] = {}
        for k, r in zip(keys, requests):
            if k not in stored and k not in first_of:
                first_of[k] = r
        self.hits += sum(k in stored for k in keys)
        failed_now: dict[str, Completion] = {}
        if first_of and self.replay_only:
            failed_now = self._recorded_failures(sorted(first_of))
            missing = [r for k, r in first_of.items() if k not in failed_now]
        if first_of and self.replay_only and missing:
            names = ", ".join(f"{r.item_id} ({r.prompt})" for r in missing[:5])
            raise LLMCacheMiss(
                f"replay-only: {len(missing)} request(s) not in llm_calls, first: {names} "
                f"(unset {ENV['replay_only']} / drop --replay-only to generate them, with model {self.model!r})"
            )
        attempts = {} if self.replay_only else self._attempts(sorted(first_of))
        final: set[str] = set()
        if not self.retry_failed:  # asked in max_attempts runs already: kept as a final failure, not asked
            final = {k for k, n in attempts.items() if n >= self.max_attempts}
            failed_now.update({k: c for k, c in self._recorded_failures(sorted(final)).items()})
        pending = [] if self.replay_only else [(k, r) for k, r in first_of.items() if k not in final]
        if pending:
            with Progress(disable=not self.progress) as bar:
                task = bar.add_task(f"{label} ({self.backend_name}, {len(pending)} to generate)", total=len(pending))
                blocks = [
                    pending[start : start + self.commit_every] for start in range(0, len(pending), self.commit_every)
                ]
                done = 0
                for batch, answers in zip(blocks, self.backend.generate_blocks([[r for _, r in b] for b in blocks])):
                    done += 1
                    if len(answers) != len(batch) or not all(isinstance(a, Completion) for a in answers):
                        raise LLMError(
                            f"backend {self.backend_name} returned {len(answers)} answers for "
                            f"{len(batch)} requests (one Completion per request expected)"
                        )
                    good = [i for i, a in enumerate(answers) if usable(a.text)]
                    self._store(
                        [batch[i] for i in good],
                        [answers[i] for i in good],
                        [(batch[i], answers[i]) for i in range(len(batch)) if i not in set(good)],
                    )
                    stored.update({k: a for (k, _), a in zip(batch, answers) if usable(a.text)})
                    failed_now.update({k: a for (k, _), a in zip(batch, answers) if not usable(a.text)})
                    self.calls += len(batch)
                    bar.advance(task, len(batch))
                if done != len(blocks):
                    raise LLMError(
                        f"backend {self.backend_name} answered {done} of {len(blocks)} blocks of requests "
                        "(one list of completions per block expected); the answered blocks are stored"
                    )
        out = [stored[k] if k in stored else failed_now[k] for k in keys]
        failed = [r for r, k in zip(requests, keys) if k not in stored]
        # final: asked in max_attempts runs (this one included); the rest are asked again next run
        is_final = (
            set()
            if self.replay_only
            else {k for k in failed_now if k in final or attempts.get(k, 0) + 1 >= self.max_attempts}
        )
        final_failed = [r for r, k in zip(requests, keys) if k not in stored and k in is_final]
        again = [r for r, k in zip(requests, keys) if k not in stored and k not in is_final]
        self.failed += len(again)
        self.final_failed += len(final_failed)
        if failed and len(failed) > self.max_failed_share * len(requests):
            raise LLMFailedShare(
                f"{label}: {len(failed)} of {len(requests)} answers failed (empty or unusable; first: "
                f"{failed[0].item_id}), more than llm.max_failed_share = {self.max_failed_share:g}; they are not "
                + (
                    "cached, so the next run asks for them again"
                    if not final_failed
                    else f"cached; {len(final_failed)} failed in llm.max_attempts = {self.max_attempts} runs and are kept as final "
                    "failures (ragwh run --retry-failed asks them again)"
                )
                + f": check the server ({self.backend_name}) and the model {self.model!r}"
            )
        cut = [r for r, c in zip(requests, out) if c.cut]
        empty = [r for r, c in zip(requests, out) if not c.text.strip()]
        self.cut += len(cut)
        self.empty += len(empty)
        for what, which in (
            ("cut at max_tokens", cut),
            ("empty", empty),
            ("failed (empty or unusable; not cached, asked again next run)", again),
            (
                f"failed in {self.max_attempts} run(s) (empty or unusable): kept as final failures, not "
                "asked again (ragwh run --retry-failed asks them)",
                final_failed,
            ),
        ):
            if which:
                log.warning(
                    "%s: %d of %d answers %s (first: %s, %s)",
                    label,
                    len(which),
                    len(out),
                    what,
                    which[0].item_id,
                    which[0].prompt,
                )
        return out

    def _by_key(self, sql: str, keys: list[str]) -> list[tuple]:
        """Rows of ``sql`` joined with the registered key list ``_llm_keys`` (one column ``cache_key``)."""
        if not keys:
            return []
        self.con.register("_llm_keys", pa.table({"cache_key": keys}))
        try:
            return self.con.execute(sql).fetchall()
        finally:
            self.con.unregister("_llm_keys")

    def _lookup(self, keys: list[str]) -> dict[str, Completion]:
        rows = self._by_key(
            "SELECT cache_key, response_text, finish_reason, prompt_tokens, completion_tokens FROM llm_calls "
            "JOIN _llm_keys USING (cache_key) QUALIFY row_number() OVER (PARTITION BY cache_key ORDER BY created_at) = 1",
            keys,
        )
        return {k: Completion(*v) for k, *v in rows}

    def _attempts(self, keys: list[str]) -> dict[str, int]:
        """Per key of ``keys`` with recorded failures, how many runs asked it and got a failed answer."""
        rows = self._by_key(
            "SELECT cache_key, count(*) FROM llm_failures JOIN _llm_keys USING (cache_key) GROUP BY 1", keys
        )
        return dict(rows)

    def _recorded_failures(self, keys: list[str]) -> dict[str, Completion]:
        """The latest recorded failed answer of each of ``keys`` found in ``llm_failures`` (replay-only mode, final
        failures)."""
        rows = self._by_key(
            "SELECT cache_key, response_text FROM llm_failures JOIN _llm_keys USING (cache_key) "
            "QUALIFY row_number() OVER (PARTITION BY cache_key ORDER BY created_at DESC, response_text) = 1",
            keys,
        )
        return {k: Completion(text) for k, text in rows}

    def _store(
        self,
        batch: list[tuple[str, LLMRequest]],
        answers: list[Completion],
        failures: list[tuple[tuple[str, LLMRequest], Completion]] = (),
    ) -> None:
        """Cache ``answers`` (replacing any stored row of their keys: an unusable answer stored before) and
        record ``failures`` in ``llm_failures``, in one transaction."""
        now = dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)
        table = pa.table(
            {
                "cache_key": [k for k, _ in batch],
                "model": [self.model] * len(batch),
                "prompt_name": [r.prompt_name for _, r in batch],
                "prompt_version": [r.prompt_version for _, r in batch],
                "item_id": [r.item_id for _, r in batch],
                "request_json": [
                    json.dumps(r.payload(self.model), sort_keys=True, ensure_ascii=False) for _, r in batch
                ],
                "response_text": [a.text for a in answers],
                "backend": [self.backend_name] * len(batch),
                "created_at": pa.array([now] * len(batch), pa.timestamp("us")),
                "prompt_tokens": pa.array([a.prompt_tokens for a in answers], pa.int32()),
                "completion_tokens": pa.array([a.completion_tokens for a in answers], pa.int32()),
                "finish_reason": pa.array([a.finish_reason for a in answers], pa.string()),
            }
        )
        failed = pa.table(
            {
                "cache_key": [k for (k, _), _ in failures],
                "model": [self.model] * len(failures),
                "prompt_name": [r.prompt_name for (_, r), _ in failures],
                "prompt_version": [r.prompt_version for (_, r), _ in failures],
                "item_id": [r.item_id for (_, r), _ in failures],
                "backend": [self.backend_name] * len(failures),
                "created_at": pa.array([now] * len(failures), pa.timestamp("us")),
                "reason": ["empty" if not a.text.strip() else "unusable" for _, a in failures],
                "response_text": [a.text for _, a in failures],
            }
        )
        with transaction(self.con):
            for name, rows, replace in (("llm_calls", table, True), ("llm_failures", failed, False)):
                if not rows.num_rows:
                    continue
                self.con.register("_llm_rows", rows)
                try:
                    if replace:
                        self.con.execute("DELETE FROM llm_calls WHERE cache_key IN (SELECT cache_key FROM _llm_rows)")
                    cols = ", ".join(rows.column_names)
                    self.con.execute(f"INSERT INTO {name} ({cols}) SELECT {cols} FROM _llm_rows")
                finally:
                    self.con.unregister("_llm_rows")
