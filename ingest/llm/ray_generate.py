"""Generation on Ray: the in-process backends (vLLM's offline engine, transformers) on long-lived Ray actors.

With ``engine: ray`` an experiment's LLM stages keep talking to :class:`ingest.llm.cache.LLMCache`; only the
backend behind it changes. :class:`RayLLMBackend` starts ``ray.concurrency`` actors (:class:`GenerateActor`, each
reserving ``ray.num_gpus_per_worker`` GPUs and ``num_cpus_per_worker`` CPUs) the first time it is asked, and keeps
them for the whole run: each builds the configured backend once (:func:`ingest.llm.make_backend`: on a GPU worker
``vllm.LLM``, loaded on its first block), so a vLLM model loads once per run, not once per stage or strategy.
The cache's missing requests go to the actors one block per cache batch (``llm.commit_every`` requests, in the
cache's order) through Ray's ordered ``ActorPool.map``; each actor answers a block with that backend's
``generate``, the call the local engine makes for the same block, and the driver commits each block in its own
transaction as it comes back. The rows are the local engine's: the same cache keys, the backend's own name in
``llm_calls.backend`` (``vllm``, ``transformers``), the same texts wherever the backend's answer to a block does not
depend on the process (greedy decoding or vLLM's per-request seeds, the same device and dtype: a transformers
``device: auto`` becomes the workers' device, ``cuda`` with GPUs per worker, else ``cpu``; name the ``dtype`` on a
mixed cluster). ``ray.batch_size`` is the embedding job's; generation's batch is ``llm.commit_every`` (and the
backend's own batching within it).

Resumable: a killed driver leaves every committed block, and the next run asks only for the missing requests.
An actor that dies mid-block is restarted and the block retried (``ray.max_restarts`` / ``max_task_retries``,
without limit by default), so the run ends with the rows of an uninterrupted one (the fault hook of
:mod:`ingest.retrieval.ray_engine`, ``RAGWH_RAY_KILL_ONCE``, applies here too).

Only backends that run a model in-process go to Ray (:data:`RAY_BACKENDS`); the OpenAI-compatible HTTP backend
already calls a server, so it stays on the driver. vLLM needs a GPU per actor (``ray.num_gpus_per_worker`` at least
``vllm.tensor_parallel_size``). On the driver the configured backend is built too, but never asked to generate: it
names the model and answers :meth:`context_window` / :meth:`prompt_tokens` (transformers loads only its tokenizer
for that) and whether schemas can be enforced. A driver without vLLM installed (a CPU head node) uses the
configured model name and asks the first actor whether its vLLM enforces schemas.

Generation runs on Ray actors (Ray Core's ``ActorPool``), not as a Ray Data job like the embedding job: a Ray Data
job starts its actors afresh, and the cache asks once per stage and strategy, which would reload a vLLM model
each time.
"""

from __future__ import annotations

import dataclasses
import json
import os
from typing import Iterator, Sequence

from ingest.llm.backend import Completion, LLMBackend, LLMError, LLMRequest, Sampling
from ingest.llm.config import LLMConfig
from ingest.retrieval.ray_engine import FAULT_ENV, RaySettings, connect

#: backends that run a model in the process that calls them (the ones Ray can spread over workers)
RAY_BACKENDS = ("vllm", "transformers")


def encode_request(request: LLMRequest) -> str:
    """A request as one JSON string (what travels to the workers)."""
    return json.dumps(
        {
            "item_id": request.item_id,
            "prompt": request.prompt,
            "messages": list(request.messages),
            "sampling": request.sampling.as_dict(),
            "schema": request.schema,
        },
        ensure_ascii=False,
    )


def decode_request(text: str) -> LLMRequest:
    raw = json.loads(text)
    return LLMRequest(raw["item_id"], raw["prompt"], tuple(raw["messages"]), Sampling(**raw["sampling"]), raw["schema"])


class GenerateActor:
    """One backend per actor, built in ``__init__`` (a vLLM engine loads on the first block): :meth:`answer` answers
    one block of encoded requests with the backend's ``generate``."""

    def __init__(self, config: LLMConfig, kill_marker: str | None = None) -> None:
        from ingest.llm import make_backend

        self.backend = make_backend(config)
        self.kill_marker = kill_marker
        self.blocks = 0  # blocks this actor answered (a test reads it: the actors live across calls)

    def answer(self, requests: list[str]) -> list[str]:
        if self.kill_marker is not None and not os.path.exists(self.kill_marker):
            with open(self.kill_marker, "w", encoding="utf-8") as handle:
                handle.write(f"killed worker {os.getpid()}\n")
            os._exit(1)  # the fault a test injects: the worker process dies mid-block
        answers = self.backend.generate([decode_request(t) for t in requests])
        if len(answers) != len(requests):
            raise LLMError(
                f"backend {self.backend.name} returned {len(answers)} answers for {len(requests)} requests "
                "on a Ray worker"
            )
        self.blocks += 1
        return [json.dumps(dataclasses.asdict(a)) for a in answers]

    def answered(self) -> int:
        return self.blocks

    def schema_unsupported(self) -> str | None:
        return self.backend.schema_unsupported()


class RayLLMBackend(LLMBackend):
    """The configured backend, run by long-lived Ray actors (module doc). ``local``: the driver-side backend (built
    from ``config`` when not given; see the module doc for a driver without vLLM)."""

    def __init__(self, config: LLMConfig, settings: RaySettings, local: LLMBackend | None = None) -> None:
        if config.backend not in RAY_BACKENDS:
            raise LLMError(
                f"LLM backend {config.backend!r} calls a server: it runs on the driver, not on Ray "
                f"(engine ray runs {', '.join(RAY_BACKENDS)} on the workers)"
            )
        if config.backend == "vllm":
            gpus = int(dict(config.vllm).get("tensor_parallel_size", 1))
            if settings.num_gpus_per_worker < gpus:
                raise LLMError(
                    f"vLLM on Ray needs {gpus} GPU(s) per actor (vllm.tensor_parallel_size {gpus}) but "
                    f"ray.num_gpus_per_worker is {settings.num_gpus_per_worker:g}: set it to {gpus}"
                )
        if local is None:
            local = _driver_backend(config)
        self.settings, self.local = settings, local
        self.name = local.name if local is not None else config.backend
        self.model = local.model if local is not None else config.model
        if not self.model:
            raise LLMError("no LLM model configured: set llm.model (a Hugging Face id or a path the workers can read)")
        self.config = _worker_config(config, self.model, settings)
        self._actors: list | None = None

    def actors(self) -> list:
        """The actors, started on first use and kept until :meth:`close`."""
        if self._actors is None:
            ray = connect(self.settings)
            options = {
                "num_cpus": self.settings.num_cpus_per_worker,
                "max_restarts": self.settings.max_restarts,
                "max_task_retries": self.settings.max_task_retries,
            }
            if self.settings.num_gpus_per_worker:
                options["num_gpus"] = self.settings.num_gpus_per_worker
            cls = ray.remote(GenerateActor).options(**options)
            marker = os.environ.get(FAULT_ENV) or None
            self._actors = [cls.remote(self.config, marker) for _ in range(self.settings.concurrency)]
        return self._actors

    def generate(self, requests: Sequence[LLMRequest]) -> list[Completion]:
        return next(iter(self.generate_blocks([requests]))) if requests else []

    def generate_blocks(self, blocks: Sequence[Sequence[LLMRequest]]) -> Iterator[list[Completion]]:
        from ray.util import ActorPool

        todo = [[encode_request(r) for r in b] for b in blocks]
        if not any(todo):
            yield from ([] for _ in blocks)
            return
        pool = ActorPool(self.actors())
        results = pool.map(lambda actor, b: actor.answer.remote(b), todo)
        for block in blocks:
            try:
                answers = next(results)
            except Exception as exc:  # a backend's own error (e.g. a prompt past the context) raised as itself
                cause = getattr(exc, "cause", None)
                if isinstance(cause, LLMError):
                    raise cause from None
                raise
            if len(answers) != len(block):
                raise LLMError(f"a Ray worker returned {len(answers)} answers for a block of {len(block)} requests")
            yield [Completion(**json.loads(a)) for a in answers]

    def answered_blocks(self) -> list[int]:
        """Blocks each actor answered so far (the actors are started if they were not)."""
        ray = connect(self.settings)
        return ray.get([a.answered.remote() for a in self.actors()])

    def schema_unsupported(self) -> str | None:
        if self.local is not None:
            return self.local.schema_unsupported()
        ray = connect(self.settings)
        return ray.get(self.actors()[0].schema_unsupported.remote())

    def context_window(self) -> int | None:
        return self.local.context_window() if self.local is not None else None

    def prompt_tokens(self, messages: Sequence[dict]) -> int:
        if self.local is None:
            raise NotImplementedError("the Ray engine's driver has no tokenizer of this model")
        return self.local.prompt_tokens(messages)

    def close(self) -> None:
        """Stop the actors (their GPUs are free again)."""
        if self._actors is not None:
            ray = connect(self.settings)
            for actor in self._actors:
                ray.kill(actor)
            self._actors = None
        if self.local is not None:
            self.local.close()


def _worker_config(config: LLMConfig, model: str, settings: RaySettings) -> LLMConfig:
    """What the actors build their backend from: the resolved model, no API key, and a transformers ``device: auto``
    resolved to the workers' device."""
    transformers = dict(config.transformers)
    if config.backend == "transformers" and transformers.get("device", "auto") == "auto":
        transformers["device"] = settings.worker_device
    return dataclasses.replace(config, model=model, api_key=None, transformers=transformers)


def _driver_backend(config: LLMConfig) -> LLMBackend | None:
    """The configured backend on the driver, or None for vLLM where the driver does not have it installed."""
    from ingest.llm import make_backend

    try:
        return make_backend(config)
    except (LLMError, ValueError):  # the extra is missing, or no model is named (said by the caller)
        if config.backend == "vllm":
            return None
        raise
