"""Generation as a Ray Data job: the in-process backends (vLLM's offline engine, transformers) on Ray workers.

With ``engine: ray`` an experiment's LLM stages keep talking to :class:`ingest.llm.cache.LLMCache`; only the
backend behind it changes. :class:`RayLLMBackend` sends every request the cache is missing through one
``ray.data.from_arrow(...).map_batches(GenerateActor, ...)`` job, one block per cache batch (``llm.commit_every``
requests, in the cache's order), and yields each block's completions as it comes back, so the driver commits
each block in its own transaction exactly as the local engine does. Each actor builds the configured backend
once (:func:`ingest.llm.make_backend`: on a GPU worker ``vllm.LLM``, loaded on its first block) and answers a
block with that backend's ``generate``, the call the local engine makes for the same block. The rows are the
local engine's: the same cache keys, the backend's own name in ``llm_calls.backend`` (``vllm``,
``transformers``), the same texts where the backend is deterministic for a given block (greedy decoding, or
vLLM's per-request seeds).

Resumable: a killed driver leaves every committed block, and the next run asks only for the missing requests.
A worker that dies mid-job is restarted and its block retried (``ray.max_restarts`` / ``max_task_retries``), so
the job ends with the rows of an uninterrupted run (the fault hook of :mod:`ingest.retrieval.ray_engine`,
``RAGWH_RAY_KILL_ONCE``, applies here too).

Only backends that run a model in-process go to Ray (:data:`RAY_BACKENDS`); the OpenAI-compatible HTTP backend
already calls a server, so it stays on the driver. On the driver the configured backend is built too, but
never asked to generate: it names the model and answers :meth:`context_window` / :meth:`prompt_tokens` (the
transformers backend loads only its tokenizer for that) and whether schemas can be enforced. A driver without
vLLM installed (a CPU head node) uses the configured model name and leaves schema checks to the workers.
"""
from __future__ import annotations

import dataclasses
import json
import os
from typing import Iterator, Sequence

import numpy as np

from ingest.llm.backend import Completion, LLMBackend, LLMError, LLMRequest, Sampling
from ingest.llm.config import LLMConfig
from ingest.retrieval.ray_engine import FAULT_ENV, RaySettings, _in_order, _map_kwargs, _ordered_blocks, connect

#: backends that run a model in the process that calls them (the ones Ray can spread over workers)
RAY_BACKENDS = ("vllm", "transformers")


def encode_request(request: LLMRequest) -> str:
    """A request as one JSON string (what travels to the workers)."""
    return json.dumps({"item_id": request.item_id, "prompt": request.prompt, "messages": list(request.messages),
                       "sampling": request.sampling.as_dict(), "schema": request.schema}, ensure_ascii=False)


def decode_request(text: str) -> LLMRequest:
    raw = json.loads(text)
    return LLMRequest(raw["item_id"], raw["prompt"], tuple(raw["messages"]), Sampling(**raw["sampling"]),
                      raw["schema"])


class GenerateActor:
    """One backend per actor, built in ``__init__`` (a vLLM engine loads on the first block): ``__call__`` answers
    one block of encoded requests with the backend's ``generate``."""

    def __init__(self, config: LLMConfig, kill_marker: str | None = None) -> None:
        from ingest.llm import make_backend

        self.backend = make_backend(config)
        self.kill_marker = kill_marker

    def __call__(self, batch: dict) -> dict:
        if self.kill_marker is not None and not os.path.exists(self.kill_marker):
            with open(self.kill_marker, "w", encoding="utf-8") as handle:
                handle.write(f"killed worker {os.getpid()}\n")
            os._exit(1)  # the fault a test injects: the worker process dies mid-job
        answers = self.backend.generate([decode_request(str(t)) for t in batch["request"]])
        if len(answers) != len(batch["request"]):
            raise LLMError(f"backend {self.backend.name} returned {len(answers)} answers for "
                           f"{len(batch['request'])} requests on a Ray worker")
        return {"pos": np.asarray(batch["pos"], dtype=np.int64),
                "answer": np.array([json.dumps(dataclasses.asdict(a)) for a in answers], dtype=object)}


class RayLLMBackend(LLMBackend):
    """The configured backend, run by Ray workers (module doc). ``local``: the driver-side backend (built from
    ``config`` when not given; see the module doc for a driver without vLLM)."""

    def __init__(self, config: LLMConfig, settings: RaySettings, local: LLMBackend | None = None) -> None:
        if config.backend not in RAY_BACKENDS:
            raise LLMError(f"LLM backend {config.backend!r} calls a server: it runs on the driver, not on Ray "
                           f"(engine ray runs {', '.join(RAY_BACKENDS)} on the workers)")
        if local is None:
            local = _driver_backend(config)
        self.config, self.settings, self.local = config, settings, local
        self.name = local.name if local is not None else config.backend
        self.model = local.model if local is not None else config.model
        if not self.model:
            raise LLMError("no LLM model configured: set llm.model (a Hugging Face id or a path the workers can read)")

    def generate(self, requests: Sequence[LLMRequest]) -> list[Completion]:
        return next(iter(self.generate_blocks([requests]))) if requests else []

    def generate_blocks(self, blocks: Sequence[Sequence[LLMRequest]]) -> Iterator[list[Completion]]:
        sizes = [len(b) for b in blocks]
        if not sum(sizes):
            yield from ([] for _ in blocks)
            return
        block = max(sizes)
        if any(n != block for n in sizes[:-1]):
            raise ValueError(f"blocks of {sizes}: every block but the last must be full (the job's block size)")
        ray = connect(self.settings)
        config = dataclasses.replace(self.config, model=self.model)
        kwargs = _map_kwargs(ray, self.settings, {"config": config, "kill_marker": os.environ.get(FAULT_ENV) or None},
                             block)
        ds = _ordered_blocks(ray, {"request": [encode_request(r) for b in blocks for r in b]}, block)
        ds = ds.map_batches(GenerateActor, **kwargs)
        pending: list[Completion] = []
        which = 0
        for batch in _in_order(ds.iter_batches(batch_size=None, batch_format="numpy")):
            pending.extend(Completion(**json.loads(str(a))) for a in batch["answer"])
            while which < len(sizes) and len(pending) >= sizes[which]:
                out, pending = pending[:sizes[which]], pending[sizes[which]:]
                which += 1
                yield out

    def schema_unsupported(self) -> str | None:
        return self.local.schema_unsupported() if self.local is not None else None

    def context_window(self) -> int | None:
        return self.local.context_window() if self.local is not None else None

    def prompt_tokens(self, messages: Sequence[dict]) -> int:
        if self.local is None:
            raise NotImplementedError("the Ray engine's driver has no tokenizer of this model")
        return self.local.prompt_tokens(messages)


def _driver_backend(config: LLMConfig) -> LLMBackend | None:
    """The configured backend on the driver, or None for vLLM where the driver does not have it installed."""
    from ingest.llm import make_backend

    try:
        return make_backend(config)
    except (LLMError, ValueError):  # the extra is missing, or no model is named (said by the caller)
        if config.backend == "vllm":
            return None
        raise
