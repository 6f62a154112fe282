"""Where an experiment's model-bound stages run, and how much memory its jobs may take (both studies).

``engine: local`` (default) runs the models in the ``ragwh run`` process; ``engine: ray`` runs the embedding
jobs and the cross-encoder scoring as Ray Data jobs (:mod:`ingest.retrieval.ray_engine`) and the generation of an
in-process LLM backend, vLLM or transformers, on long-lived Ray actors (:mod:`ingest.llm.ray_generate`), configured
by the ``ray:`` mapping::

    engine: ray
    ray: {address: auto, num_gpus_per_worker: 1, batch_size: 128, concurrency: 4}

``ray`` keys: ``address`` (absent: a local instance; ``auto``: the cluster ``ray start --head`` started;
``ray://host:10001``), ``num_cpus`` (CPUs of a local instance), ``num_gpus_per_worker``,
``num_cpus_per_worker``, ``batch_size``, ``concurrency`` (model actors), ``max_restarts`` and
``max_task_retries`` (-1: without limit). A ``ray:`` mapping with ``engine: local`` is refused (it would be
ignored). ``max_memory_fraction`` (default 0.8, :mod:`ingest.retrieval.memory`): the share of the available
memory a job's estimate may take before it is refused.
"""

from __future__ import annotations

from typing import Any

from ingest.retrieval.memory import DEFAULT_FRACTION
from ingest.retrieval.ray_engine import RaySettings
from ragwh.experiment.config.reader import _Reader

ENGINES = ("local", "ray")
ENGINE_KEYS = ("engine", "ray", "max_memory_fraction")
_RAY_INTS = {"num_cpus": 1, "batch_size": 1, "concurrency": 1, "max_restarts": -1, "max_task_retries": -1}
_RAY_NUMBERS = ("num_gpus_per_worker", "num_cpus_per_worker")


def parse_engine(r: _Reader, raw: dict) -> tuple[str, RaySettings | None, float]:
    """``(engine, ray settings or None, max_memory_fraction)`` of a config's top-level mapping ``raw``."""
    engine = r.choice(raw.get("engine", "local"), "engine", ENGINES)
    value = raw.get("ray")
    if engine == "local" and value is not None:
        raise r.fail("ray", "settings for the Ray engine, but engine is local: set engine: ray or remove ray:")
    settings = None
    if engine == "ray":
        block = r.mapping(value or {}, "ray", {"address", *_RAY_INTS, *_RAY_NUMBERS})
        kwargs: dict[str, Any] = {}
        if block.get("address") is not None:
            kwargs["address"] = r.string(block["address"], "ray.address")
        for key, minimum in _RAY_INTS.items():
            if block.get(key) is not None:
                kwargs[key] = r.integer(block[key], f"ray.{key}", minimum)
        for key in _RAY_NUMBERS:
            if block.get(key) is not None:
                kwargs[key] = r.number(block[key], f"ray.{key}")
                if kwargs[key] < 0:
                    raise r.fail(f"ray.{key}", f"expected a number >= 0, got {block[key]!r}")
        if kwargs.get("num_cpus") is not None and kwargs.get("address") is not None:
            raise r.fail("ray.num_cpus", "sizes a local instance; a cluster (ray.address) has its own CPUs")
        settings = RaySettings(**kwargs)
    fraction = r.number(raw.get("max_memory_fraction", DEFAULT_FRACTION), "max_memory_fraction")
    if not fraction > 0:
        raise r.fail(
            "max_memory_fraction", f"expected a number > 0 (a share of the available memory), got {fraction!r}"
        )
    return engine, settings, fraction
