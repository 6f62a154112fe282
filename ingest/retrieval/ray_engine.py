"""The Ray engine: the embedding model (and the cross-encoder) run as Ray Data jobs, the driver keeps the warehouse.

``engine: ray`` in an experiment config (or ``embed_texts(..., engine=RaySettings(...))``) sends the texts
the local engine would encode, in the same order (longest first, then key), through
``ray.data.from_arrow(...).map_batches(EmbedActor, ...)``: each actor loads the model once and encodes
``batch_size`` texts at a time; the dataset keeps its order, one block per ``write_batch`` texts
(default :data:`ingest.retrieval.embed.COMMIT_TEXTS`, the local engine's largest model call), so the model sees
the same batches and the driver writes exactly the rows the local
engine writes (same keys, same stored embedder name; vectors equal to the last bits, within 1e-6). Only the
driver opens the DuckDB file: it commits each block as it arrives through the local engine's
:class:`ingest.retrieval.embed.Committer`, so a killed driver leaves every committed block and a rerun embeds
only what is missing. A worker that dies mid-job is restarted and its block retried
(``max_restarts`` / ``max_task_retries``), so the job finishes with the rows of an uninterrupted run.

Cross-encoder scoring (:func:`score_pairs`, from :func:`ingest.retrieval.rerank.rerank_stage`) sends the
pairs not yet scored the same way, in the local stage's blocks of 1,024 pairs and model batches, and returns
the scores in order; the driver ranks and writes the runs as the local stage does.

Ray is an optional extra (``pip install 'ragwarehouse[ray]'``, or ``-e '.[ray]'`` in a checkout); without it
``engine: ray`` fails with one line saying so.
The workers import this project: on a cluster, install it (and the models) on every node.
"""

from __future__ import annotations

import dataclasses
import os

import duckdb
import numpy as np
import pyarrow as pa

from ingest.retrieval.embedders import EmbedderSpec
from ingest.retrieval.progress import progress_bar
from warehouse.db import bulk_appends
from warehouse.paths import install_hint

#: Test hook: a path; the first actor call that finds no file there creates it and kills its worker process
#: (read by the driver when a job starts and passed to the actors), so a test can kill a worker mid-job.
FAULT_ENV = "RAGWH_RAY_KILL_ONCE"
INSTALL_HINT = install_hint("ray")


class RayEngineError(RuntimeError):
    """The Ray engine cannot run as asked (one line: why, and what to do next)."""


@dataclasses.dataclass(frozen=True)
class RaySettings:
    """The ``ray:`` block of a config. ``address``: None starts a local instance, ``auto`` joins the cluster
    ``ray start --head`` started, ``ray://host:10001`` a remote one; ``num_cpus``: CPUs of a local instance
    (None: all); ``num_gpus_per_worker`` / ``num_cpus_per_worker``: what each model actor reserves;
    ``batch_size``: texts per model call; ``concurrency``: model actors; ``max_restarts`` /
    ``max_task_retries``: how often a dead actor is restarted and its block retried (-1: without limit)."""

    address: str | None = None
    num_cpus: int | None = None
    num_gpus_per_worker: float = 0.0
    num_cpus_per_worker: float = 1.0
    batch_size: int = 64
    concurrency: int = 1
    max_restarts: int = -1
    max_task_retries: int = -1

    @property
    def worker_device(self) -> str:
        """Where the workers compute: ``cuda`` when each reserves a GPU, else ``cpu``. The precision is the one
        the driver resolved (the stored name says it); ``precision: auto`` on a CPU driver is fp32 or bf16, so
        name it for GPU workers (``bf16``)."""
        return "cuda" if self.num_gpus_per_worker > 0 else "cpu"

    def params(self) -> dict:
        return dataclasses.asdict(self)


def require_ray():
    """Import ray (and ray.data) or raise :class:`RayEngineError` naming the extra to install."""
    try:
        import ray
        import ray.data  # noqa: F401
    except ImportError as exc:
        raise RayEngineError(
            f"engine 'ray' needs Ray Data, which is not installed ({exc}): {INSTALL_HINT}, or set engine: local"
        ) from None
    return ray


def connect(settings: RaySettings):
    """Join (or start) the Ray instance ``settings.address`` names, unless this process already joined one."""
    ray = require_ray()
    if not ray.is_initialized():
        kwargs = {"include_dashboard": False, "log_to_driver": False}
        if settings.address is None:
            kwargs["num_cpus"] = settings.num_cpus
        try:
            ray.init(address=settings.address, **kwargs)
        except (ConnectionError, RuntimeError, ValueError) as exc:
            raise RayEngineError(
                f"cannot join the Ray cluster at {settings.address!r}: {type(exc).__name__}: {exc} "
                "(start one with `ray start --head`, or leave ray.address unset for a local "
                "instance)"
            ) from None
    return ray


class EmbedActor:
    """One model per actor: loaded in ``__init__``, ``__call__`` encodes a batch (``pos``, ``text``) into raw
    (not yet normalized) float32 vectors, as the local engine's ``model.encode`` does."""

    def __init__(self, spec: EmbedderSpec, device: str, batch_size: int, kill_marker: str | None = None) -> None:
        self.model = spec.load(device)
        self.batch_size = batch_size
        self.kill_marker = kill_marker

    def __call__(self, batch: dict) -> dict:
        if self.kill_marker is not None and not os.path.exists(self.kill_marker):
            with open(self.kill_marker, "w", encoding="utf-8") as handle:
                handle.write(f"killed worker {os.getpid()}\n")
            os._exit(1)  # the fault a test injects: the worker process dies mid-job
        texts = [str(t) for t in batch["text"]]
        # one model call per ``batch_size`` texts, as the local engine makes them (same batches, same padding)
        vectors = [
            self.model.encode(
                texts[lo : lo + self.batch_size],
                batch_size=self.batch_size,
                convert_to_numpy=True,
                normalize_embeddings=False,
                show_progress_bar=False,
            )
            for lo in range(0, len(texts), self.batch_size)
        ]
        return {
            "pos": np.asarray(batch["pos"], dtype=np.int64),
            "vector": np.concatenate(vectors).astype(np.float32, copy=False),
        }


class ScoreActor:
    """One cross-encoder per actor: ``__call__`` scores a batch of (``query``, ``passage``) pairs, ``batch_size``
    pairs per model call, as the local reranking stage's ``model.predict`` does."""

    def __init__(self, spec, device: str, batch_size: int) -> None:
        self.model = spec.load(device)
        self.batch_size = batch_size

    def __call__(self, batch: dict) -> dict:
        pairs = [(str(q), str(p)) for q, p in zip(batch["query"], batch["passage"])]
        scores = self.model.predict(pairs, batch_size=self.batch_size, show_progress_bar=False)
        return {
            "pos": np.asarray(batch["pos"], dtype=np.int64),
            "score": np.asarray(scores, dtype=np.float64).reshape(-1),
        }


def _map_kwargs(ray, settings: RaySettings, constructor: dict, block: int) -> dict:
    """``map_batches`` arguments: one call per input block, ``concurrency`` actors with their resources and
    restart policy."""
    kwargs = {
        "fn_constructor_kwargs": constructor,
        "batch_size": block,
        "batch_format": "numpy",
        "num_cpus": settings.num_cpus_per_worker,
    }
    # -1 / -1 (restart without limit) is Ray Data's own default for actor pools: passed only when changed
    for key in ("max_restarts", "max_task_retries"):
        if getattr(settings, key) != -1:
            kwargs[key] = getattr(settings, key)
    if settings.num_gpus_per_worker:
        kwargs["num_gpus"] = settings.num_gpus_per_worker
    strategy = getattr(ray.data, "ActorPoolStrategy", None)
    if strategy is not None:
        kwargs["compute"] = strategy(size=settings.concurrency)
    else:  # pragma: no cover - releases without ActorPoolStrategy take the pool size as ``concurrency``
        kwargs["concurrency"] = settings.concurrency
    return kwargs


def _ordered_blocks(ray, columns: dict[str, list], block: int):
    """An ordered dataset of ``columns`` (plus ``pos``), one block per ``block`` rows."""
    ctx = ray.data.DataContext.get_current()
    ctx.execution_options.preserve_order = True
    ctx.enable_progress_bars = False  # the stage draws its own bar, fed as blocks arrive
    n = len(next(iter(columns.values())))
    return ray.data.from_arrow(
        [
            pa.table(
                {
                    "pos": pa.array(np.arange(lo, min(lo + block, n), dtype=np.int64)),
                    **{name: pa.array(values[lo : lo + block], pa.string()) for name, values in columns.items()},
                }
            )
            for lo in range(0, n, block)
        ]
    )


def _in_order(batches, expected_start: int = 0):
    """Yield the batches of an ordered job, checking that their positions follow on."""
    start = expected_start
    for batch in batches:
        pos = np.asarray(batch["pos"])
        if not np.array_equal(pos, np.arange(start, start + len(pos))):
            raise RayEngineError(
                f"the Ray job returned rows {pos[:1].tolist()}... out of order (expected {start}): "
                "rerun; the committed rows are kept"
            )
        start += len(pos)
        yield batch


def score_pairs(
    spec,
    pairs: list[tuple[str, str]],
    settings: RaySettings,
    batch_size: int,
    block: int = 1024,
    advance=lambda n: None,
) -> np.ndarray:
    """Cross-encoder scores of ``pairs`` (float64, in order) computed by a Ray Data job: blocks of ``block`` pairs,
    ``batch_size`` pairs per model call (the local stage's batches)."""
    ray = connect(settings)
    ds = _ordered_blocks(ray, {"query": [q for q, _ in pairs], "passage": [p for _, p in pairs]}, block)
    ds = ds.map_batches(
        ScoreActor,
        **_map_kwargs(ray, settings, {"spec": spec, "device": settings.worker_device, "batch_size": batch_size}, block),
    )
    out = np.empty(len(pairs), dtype=np.float64)
    done = 0
    for batch in _in_order(ds.iter_batches(batch_size=None, batch_format="numpy")):
        out[done : done + len(batch["pos"])] = batch["score"]
        done += len(batch["pos"])
        advance(len(batch["pos"]))
    return out


def embed_dataset(ray, inputs: list[str], settings: RaySettings, spec: EmbedderSpec, block: int):
    """The ordered dataset of ``{pos, vector}``: one input block per ``block`` texts, mapped by the actors."""
    constructor = {
        "spec": spec,
        "device": settings.worker_device,
        "batch_size": settings.batch_size,
        "kill_marker": os.environ.get(FAULT_ENV) or None,
    }
    return _ordered_blocks(ray, {"text": inputs}, block).map_batches(
        EmbedActor, **_map_kwargs(ray, settings, constructor, block)
    )


def embed_with_ray(
    con: duckdb.DuckDBPyConnection,
    spec: EmbedderSpec,
    todo,
    settings: RaySettings,
    report: dict,
    *,
    write_batch: int,
    commit_seconds: float,
    show_progress: bool = True,
) -> dict:
    """Embed ``todo`` (:class:`ingest.retrieval.embed.TextsToEmbed`, missing keys sorted) as one Ray Data job and
    commit the vectors as blocks arrive; refuses before the first write when the model's dimension differs from
    the stored vectors'. Returns ``report`` with ``embedded`` and ``dim`` set."""
    from ingest.retrieval.embed import Committer, EmbedError

    ray = connect(settings)
    inputs = spec.format_inputs(todo.texts, todo.is_query)
    ds = embed_dataset(ray, inputs, settings, spec, max(1, write_batch))
    with (
        progress_bar(f"embedding with {spec.name} on Ray", total=len(inputs), enabled=show_progress) as advance,
        bulk_appends(con),
    ):
        committer = Committer(con, spec.name, todo.hashes, write_batch, commit_seconds, advance)
        for batch in _in_order(ds.iter_batches(batch_size=None, batch_format="numpy")):
            vectors = np.asarray(batch["vector"], dtype=np.float32)
            if committer.received == 0:
                dim = int(vectors.shape[1])
                if report["dim"] is not None and report["dim"] != dim:
                    raise EmbedError(
                        f"the warehouse holds {report['dim']}-dimensional vectors for embedder {spec.name!r} but "
                        f"the model {spec.load_path!r} produces {dim}-dimensional ones on the Ray workers: delete "
                        "them (DELETE FROM embeddings WHERE embedder = ...) or use another --embedder"
                    )
                report["dim"] = dim
            committer.add(vectors)
    report["embedded"] = committer.committed
    return report
