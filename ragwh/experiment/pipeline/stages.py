"""The machinery both studies' pipelines share: one resumable, fingerprinted stage at a time.

:class:`StagePipeline` holds the warehouse connection (closed around every dbt call, which opens the
file itself), records the run in ``experiments`` (:meth:`StagePipeline.experiment`), and runs each
stage through :meth:`StagePipeline.stage`: a stage whose input fingerprint (:mod:`warehouse.manifest`)
and output digest (:mod:`ragwh.experiment.pipeline.outputs`) equal what ``stage_manifest`` holds is
skipped and says so. It also builds the run's one LLM backend and the stored model names. The studies'
stages live in :mod:`ragwh.experiment.pipeline.chunking` and :mod:`ragwh.experiment.pipeline.rewriting`.
"""

from __future__ import annotations

import contextlib
import resource
import shlex
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

import duckdb
from rich.console import Console
from rich.markup import escape

from ragwh.experiment.pipeline import outputs as stage_outputs
from warehouse import manifest
from warehouse.db import WarehouseError, checkpoint, connect, write_failure
from warehouse.paths import reports_dir, warehouse_path

#: the code a report is rendered by (its sections and the paper tables): part of the report stage's inputs
REPORT_CODE = ("ragwh/experiment/report/*.py", "ragwh/experiment/tables/*.py")


class PipelineError(RuntimeError):
    """A stage that cannot run; the message names the stage and what to do next."""


@dataclass
class StageResult:
    """One stage execution: ``status`` is 'ran' or 'skipped' (unchanged inputs)."""

    stage: str
    scope: str
    status: str
    seconds: float
    peak_rss_mb: float  # process peak resident set size so far (ru_maxrss), MiB
    detail: str


@dataclass
class RunOutcome:
    config: Any  # the study's config (ExperimentConfig or RewritingConfig)
    warehouse: Path
    report: Path | None
    stages: list[StageResult] = field(default_factory=list)
    not_run: dict[str, str] = field(default_factory=dict)  # condition or contrast -> reason

    @property
    def did_work(self) -> bool:
        return any(s.status == "ran" for s in self.stages)


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


class StagePipeline:
    """Runs one experiment against one warehouse file, stage by stage (see module docstring); a
    study's pipeline adds its stages, :meth:`primary_model` and :meth:`dbt_vars`."""

    def __init__(
        self,
        config: Any,
        *,
        data: Path | None,
        warehouse: str | Path | None = None,
        report_path: Path | None = None,
        console: Console | None = None,
    ) -> None:
        self.config = config
        self.data = data
        self.warehouse = warehouse_path(warehouse)
        self.console = console or Console()
        self.report_path = report_path or reports_dir() / f"{config.name}.html"
        self.outcome = RunOutcome(config, self.warehouse, None)
        self._con: duckdb.DuckDBPyConnection | None = None
        self._backend: Any = None  # the LLM backend, built once per run (a local model loads once)
        self._caches: list[Any] = []  # every LLM cache a stage opened: their failed calls (not cached)
        self.fingerprints: dict[tuple[str, str], str] = {}
        self.overrides: dict[str, Any] = {}  # the command line's (``ragwh run --limit/--precision``), recorded
        self.experiment_id: int | None = None

    # --- connection handling: dbt opens the file itself, so ours is closed around dbt calls ----------
    @property
    def con(self) -> duckdb.DuckDBPyConnection:
        if self._con is None:
            self._con = connect(self.warehouse)
        return self._con

    def close(self) -> None:
        if self._con is not None:
            con, self._con = self._con, None
            try:
                con.close()
            except duckdb.Error:
                pass  # a database a failed write invalidated: the error that did it is the one reported

    @property
    def ray(self) -> Any:
        """The config's :class:`ingest.retrieval.ray_engine.RaySettings` under ``engine: ray``, else None (the models
        run in this process): what the model-bound stages take as their ``engine``."""
        return self.config.ray if self.config.engine == "ray" else None

    def prepare_engine(self) -> None:
        """Before anything runs: the config's memory share for the jobs' checks, and, with ``engine: ray``, Ray
        importable (a missing extra is said now, in one line)."""
        from ingest.retrieval.memory import set_max_memory_fraction
        from ingest.retrieval.ray_engine import RayEngineError, require_ray

        set_max_memory_fraction(self.config.max_memory_fraction)
        if self.ray is not None:
            try:
                require_ray()
            except RayEngineError as exc:
                raise PipelineError(str(exc)) from None

    def refuse_imported(self, systems: list[str], corpora: list[str]) -> None:
        """Before anything runs: :class:`PipelineError` when a system this run stores runs under (``systems``, in
        ``corpora``) holds a run brought in by ``ragwh import run`` (``run_manifest.system_kind`` 'imported'),
        which the run would replace."""
        from ingest.retrieval.imported import imported_systems

        clashes = imported_systems(self.con, systems, corpora)
        if clashes:
            name, corpus, file = clashes[0]
            raise PipelineError(
                f"{self.config.source_file}: system {name!r} of corpus {corpus} holds an imported run (from {file}) "
                f"that this run would replace: re-import it under another name (`ragwh import run {file} --name "
                f"{name}-imported ...`), or name this config's system otherwise (bm25.name, embedders)"
            )

    def check_bootstrap(self) -> None:
        """Before the stages that bootstrap (and at the start, with what is loaded): :class:`PipelineError` when B
        over the corpora's loaded documents or queries exceeds a ceiling of :mod:`ragwh.experiment.config.bootstrap_cost`
        (the config's own check assumed one unit)."""
        from ragwh.experiment.config.bootstrap_cost import bootstrap_plan, too_costly

        b, key, statistics, unit, count = bootstrap_plan(self.config)
        corpora = [c.name for c in self.config.corpora]
        units = self.con.execute(count, [corpora]).fetchone()[0]
        problem = too_costly(b, statistics, units, unit, key) if units else None  # units summed over the corpora
        if problem:
            raise PipelineError(f"{self.config.source_file}: {key}: {problem}")

    def close_llm(self) -> None:
        """Release the run's LLM backend when the run ends (an engine's connections, or its Ray actors and their
        GPUs); :meth:`close` only closes the warehouse connection, around every dbt call."""
        if self._backend is not None:
            backend, self._backend = self._backend, None
            backend.close()

    # --- the experiments row (ragwh/experiment/identity.py) -------------------------------------------
    @contextlib.contextmanager
    def experiment(self) -> Iterator[None]:
        """Record the run in ``experiments`` and store its settings before anything runs; mark it
        finished or failed (with the reason) when it ends."""
        from ingest.retrieval.precision import split_name
        from ragwh.experiment.identity import record_start, study_settings
        from warehouse.identity import finish_experiment

        computed = split_name(self.embedder_name(self.primary_model()))[1] or "fp32"
        self.experiment_id = record_start(
            self.con, self.config, self.overrides, study_settings(self.config, self.dbt_vars()), computed
        )
        try:
            yield
            finish_experiment(self.con, self.experiment_id, "finished")
            self.checkpoint("the end of the run")
        except BaseException as exc:
            self._record_failure(f"{type(exc).__name__}: {exc}"[:2000])
            raise

    def _record_failure(self, detail: str) -> None:
        """Mark the run failed; when the connection cannot write any more (a failed write invalidates DuckDB's
        database), on a fresh one. If that fails too, the row stays 'running' and the next run marks it
        interrupted (its process is gone by then)."""
        from warehouse.identity import finish_experiment

        for _ in range(2):
            try:
                finish_experiment(self.con, self.experiment_id, "failed", detail)
                return
            except (duckdb.Error, WarehouseError):
                self.close()

    def checkpoint(self, where: str) -> None:
        """Write what the stage committed into the warehouse file now and verify it (:func:`warehouse.db.checkpoint`):
        a file size limit or a full disk is a :class:`PipelineError` naming the file and cause, never a run that
        says finished while its data is only in the ``.wal``."""
        try:
            checkpoint(self.con)
        except WarehouseError as exc:
            raise PipelineError(f"{where}: {exc}") from None

    def primary_model(self) -> str:
        """The model whose stored name says which precision the run computes in."""
        raise NotImplementedError

    def dbt_vars(self) -> dict[str, Any]:
        """The settings this study's dbt models read (stored with the experiment)."""
        raise NotImplementedError

    # --- one stage -------------------------------------------------------------------------------
    def stage(
        self,
        stage: str,
        scope: str,
        parts: list[str],
        work: Callable[[], str],
        *,
        force: bool = False,
        outputs: list[stage_outputs.Output] = (),
    ) -> str:
        """Run ``work`` unless ``parts`` fingerprint to what ``stage_manifest`` holds for (stage, scope)
        and the ``outputs`` rows digest to what they did when the stage last finished (``force``: run
        regardless, e.g. when the stage's output file is missing).

        ``work`` returns a one-line detail. Returns the fingerprint."""
        fp = manifest.sha256_parts([stage, scope, *parts])
        self.fingerprints[(stage, scope)] = fp
        label = escape(f"{stage} [{scope}]" if scope else stage)
        stored = None if force else manifest.stored_stage(self.con, stage, scope)
        # 'final:<fp>': finished with LLM answers kept as final failures; --retry-failed runs it again
        if stored is not None and (stored[0] == fp or (stored[0] == f"final:{fp}" and not self._retry_failed())):
            if stored[1] == manifest.output_digest(self.con, outputs):
                self.outcome.stages.append(StageResult(stage, scope, "skipped", 0.0, _peak_rss_mb(), "unchanged"))
                self.console.print(f"[dim]= {label}: unchanged, skipped[/]")
                return fp
            self.console.print(
                f"[yellow]! {label}: inputs unchanged but its output in the warehouse changed since it "
                "ran: running it again[/]",
                soft_wrap=True,
            )
        self.console.print(f"[bold]> {label}[/]")
        started = time.perf_counter()
        failed_before, final_before = self._llm_failed(), self._llm_final()
        try:
            detail = work()
        except (PipelineError, KeyboardInterrupt):
            raise
        except Exception as exc:  # every stage error becomes one message naming the stage
            full = write_failure(self.warehouse, exc)  # a write for want of space: its cause, not DuckDB's chain
            if full is not None:
                raise PipelineError(f"stage {stage} [{scope}] failed: {full}") from None
            raise PipelineError(f"stage {stage} [{scope}] failed: {type(exc).__name__}: {exc}") from exc
        seconds = time.perf_counter() - started
        failed = self._llm_failed() - failed_before
        if failed:  # recorded as not finished: the next run runs the stage again and asks for these again
            detail += f"; {failed} LLM answers failed (empty or unusable, not cached): the next run asks again"
        final = self._llm_final() - final_before
        if final:
            detail += (
                f"; {final} LLM answers kept as final failures (failed in llm.max_attempts runs; "
                "ragwh run --retry-failed asks them again)"
            )
        recorded = f"incomplete:{fp}" if failed else f"final:{fp}" if final else fp
        try:
            manifest.record(
                self.con, stage, scope, recorded, detail, seconds, manifest.output_digest(self.con, outputs)
            )
        except duckdb.Error as exc:
            cause = write_failure(self.warehouse, exc) or " ".join(str(exc).split("\n")[0].split())
            raise PipelineError(f"stage {stage} [{scope}] failed: {cause}") from None
        self.checkpoint(f"stage {stage} [{scope}]" if scope else f"stage {stage}")
        self.outcome.stages.append(StageResult(stage, scope, "ran", seconds, _peak_rss_mb(), detail))
        self.console.print(f"  {label}: {escape(detail)} ({seconds:.1f} s)", soft_wrap=True)  # one line: grep-able logs
        return fp

    def _llm_parts(self) -> list[str]:
        return [self.config.llm.backend, repr(sorted(self.config.llm.settings.items()))]

    def _llm_config(self) -> Any:
        from ingest.llm import load_llm_config

        return load_llm_config({"backend": self.config.llm.backend, **self.config.llm.settings})

    def _tiny(self) -> str:
        """The label every stage detail made by a tiny model carries."""
        return " [tiny-model output, not results]" if self.config.llm.tiny else ""

    def _llm_backend(self) -> Any:
        """The cached LLM for a stage (None without a backend); the backend itself is built once per run."""
        if self.config.llm.backend == "none":
            return None
        from ingest.llm import make_backend, open_llm

        config = self._llm_config()
        if self._backend is None and not config.replay_only:
            self._backend = self._ray_backend(config) or make_backend(config)
        cache = open_llm(self.con, self._backend, config)
        self._caches.append(cache)
        return cache

    def _ray_backend(self, config: Any) -> Any:
        """The LLM on Ray workers when the experiment runs ``engine: ray`` and its backend runs a model in-process
        (vLLM, transformers; :mod:`ingest.llm.ray_generate`), else None (the backend runs here)."""
        from ingest.llm.ray_generate import RAY_BACKENDS, RayLLMBackend

        if self.ray is None or config.backend not in RAY_BACKENDS:
            return None
        return RayLLMBackend(config, self.ray)

    def repair_command(self) -> str:
        """What a failed dbt relationships test tells the user to run: this experiment again, which
        reloads what changed outside ``ragwh run`` and reruns every stage downstream of it."""
        return (
            f"`ragwh run --config {shlex.quote(str(self.config.source_file))} --warehouse "
            f"{shlex.quote(str(self.warehouse))}` reloads what the config names and reruns every stage that "
            "depends on a changed table"
        )

    def _llm_failed(self) -> int:
        """LLM calls of this run that failed (empty or unusable answers: never cached) and are asked again."""
        return sum(c.failed for c in self._caches)

    def _llm_final(self) -> int:
        """LLM answers of this run kept as final failures (failed in llm.max_attempts runs)."""
        return sum(c.final_failed for c in self._caches)

    def _retry_failed(self) -> bool:
        """Whether this run asks the final failures again (``ragwh run --retry-failed``)."""
        if self.config.llm.backend == "none":
            return False
        try:
            return bool(self._llm_config().retry_failed)
        except Exception:  # a bad LLM setting: the stage that opens the LLM reports it
            return False

    def embedder_name(self, model: str) -> str:
        """The stored name of a configured embedder: the model with its resolved precision suffix."""
        from ingest.retrieval.embedders import resolve_embedder

        return resolve_embedder(model, self.config.precision_of(model)).name

    def reranker_name(self, model: str) -> str:
        from ingest.retrieval.rerank import resolve_reranker

        return resolve_reranker(model, self.config.precision_of(model)).name
