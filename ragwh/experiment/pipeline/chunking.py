"""The experiment as one resumable pipeline (what ``ragwh run`` executes).

Stages, in order, each over the config's corpora / embedders / rerankers::

    ingest -> [queries] -> induce -> chunk -> [contexts] -> dbt build +tag:conditions -> embed
           -> retrieve -> rerank -> [bm25] -> dbt build +tag:evaluation -> report

``bm25`` (``retrievers: [dense, bm25]``) ranks every flat condition's texts with BM25
(:mod:`ingest.retrieval.bm25`), a system beside the dense embedders.

``queries`` (LLM-generated, leakage-filtered queries) runs for Wikipedia corpora whose config
option ``generate_queries`` is true (the default) when an LLM backend is configured (option
``final_per_type``: the per-type cap on the finals, 250); ``contexts``
(A1's LLM-written chunk contexts) runs when A1 is among the runnable conditions. ``induce`` runs on
structured corpora (QASPER, Wikipedia) only; BEIR and HotpotQA documents get their one ``doc`` chunk.

(each dbt build also selects every staging view, so their data tests always run on complete inputs;
tests are selected cautiously: only those whose every parent is built in the same invocation)

Every stage is the same importable function its own CLI command calls (``ingest.corpora.qasper.load.load_qasper``,
``ingest.retrieval.embed.embed_stage``, ``ingest.retrieval.retrieve.retrieve_stage``, ...). Before running, a stage's
input fingerprint (:mod:`warehouse.manifest`) is compared with the one stored in ``stage_manifest``,
and the digest of the stage's output rows (:mod:`ragwh.experiment.pipeline.outputs`) with the one stored
when it finished; when both are equal the stage is skipped and says so, so a second run with
nothing changed does no ingest, no LLM call, no embedding, no retrieval and no dbt build, while a
stage whose output was replaced or wiped by hand since runs again. The stage functions are themselves
incremental (embeddings keyed by text hash, runs by fingerprint, LLM calls cached), so a changed
input recomputes only what it touches.

Conditions that cannot run are never dropped silently: A1 without an LLM backend, configured
conditions that got no chunks, and contrasts whose arms are missing are listed with their reason.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ragwh.experiment.config.chunking import LLM_CONDITIONS, known_conditions, known_contrasts
from ragwh.experiment.pipeline import outputs as stage_outputs
from ragwh.experiment.pipeline.stages import REPORT_CODE, PipelineError, RunOutcome, StagePipeline
from warehouse import manifest
from warehouse.dbt import run_dbt
from warehouse.paths import CODE_ROOT

#: Loaded tables whose content the condition models (and everything after them) depend on.
CONDITION_INPUTS = (
    "documents",
    "paragraphs",
    "sections",
    "queries",
    "evidence",
    "qrels",
    "chunks",
    "chunkset_docs",
    "chunk_prefixes",
    "placebo_paths",
)
#: Additional loaded tables the evaluation models read.
EVALUATION_INPUTS = ("runs", "routing", "funnel", "quarantine", "corpus_meta", "induction_log", "text_tokens", "labels")
#: Loaders whose documents have gold heading trees (the ones structure induction runs on).
STRUCTURED_LOADERS = ("qasper", "wikipedia")
DEMO_BANNER = (
    "DEMO NUMBERS, NOT RESULTS: this is the bundled demo corpus (5 short papers written for this "
    "project) run through the CPU experiment. Point --config/--data at real data for results."
)

__all__ = ["DEMO_BANNER", "Pipeline", "PipelineError", "RunOutcome"]


class Pipeline(StagePipeline):
    """Runs one chunking experiment against one warehouse file (see module docstring)."""

    def primary_model(self) -> str:
        """The model whose stored name says which precision the run computes in."""
        return self.config.strong_embedder.model

    # --- the stages ------------------------------------------------------------------------------
    def ingest(self) -> None:
        for corpus in self.config.corpora:
            files = self.config.resolve_sources(corpus, self.data)
            parts = [corpus.loader, repr(sorted(corpus.options.items())), f"limit={self.config.limit}"]
            parts += [f"{f.name}={manifest.file_digest(f)}" for f in files]
            self.stage(
                "ingest",
                corpus.name,
                parts,
                lambda c=corpus, f=files: self._ingest_one(c, f),
                outputs=stage_outputs.ingest(corpus.name, corpus.loader),
            )

    def _ingest_one(self, corpus, files: list[Path]) -> str:
        if corpus.loader == "qasper":
            from ingest.corpora.qasper.load import load_qasper as load

            summary = load(self.con, files, corpus=corpus.name, limit=self.config.limit)
        elif corpus.loader == "wikipedia":
            from ingest.corpora.wikipedia.load import load_wikipedia as load

            options = {k: v for k, v in corpus.options.items() if k not in ("generate_queries", "final_per_type")}
            summary = load(self.con, files[0], corpus=corpus.name, **options)
        elif corpus.loader == "beir":
            from ingest.corpora.beir import load_beir as load

            summary = load(self.con, files[0].parent, corpus=corpus.name, **corpus.options)
        elif corpus.loader == "hotpotqa":
            from ingest.corpora.hotpotqa import load_hotpotqa as load

            summary = load(self.con, files[0], corpus=corpus.name, limit=self.config.limit, **corpus.options)
        else:  # a loader named in LOADERS without its branch here never runs as another loader
            raise PipelineError(f"ingest [{corpus.name}]: loader {corpus.loader!r} has no ingest step in this pipeline")
        n_docs, n_queries = self.con.execute(
            "SELECT (SELECT count(*) FROM documents WHERE corpus = $c), (SELECT count(*) FROM queries WHERE corpus = $c)",
            {"c": corpus.name},
        ).fetchone()
        if n_docs == 0:
            raise PipelineError(
                f"ingest [{corpus.name}]: no documents were loaded from {', '.join(map(str, files))} "
                f"(loader summary: {summary})"
            )
        return f"{n_docs} documents, {n_queries} queries"

    def queries(self) -> None:
        """Generated queries for Wikipedia corpora (option ``generate_queries``, default true)."""
        for corpus in self.config.corpora:
            if corpus.loader != "wikipedia" or not corpus.options.get("generate_queries", True):
                continue
            if self.config.llm.backend == "none":
                self.outcome.not_run[f"queries:{corpus.name}"] = (
                    "Wikipedia queries are LLM-generated and no LLM backend is configured: the corpus has no queries"
                )
                continue
            parts = [self.fingerprints[("ingest", corpus.name)], *self._llm_parts()]
            self.stage(
                "queries",
                corpus.name,
                parts,
                lambda c=corpus.name: self._queries_one(c),
                outputs=stage_outputs.queries(corpus.name),
            )

    def _queries_one(self, corpus: str) -> str:
        from ingest.genqueries.stage import FINAL_PER_TYPE
        from ingest.genqueries.stage import generate_queries as generate

        options = next(c.options for c in self.config.corpora if c.name == corpus)
        llm = self._llm_backend()
        report = generate(
            self.con,
            corpus,
            llm,
            final_per_type=options.get("final_per_type", FINAL_PER_TYPE),
            max_tokens=self._llm_config().stage_max_tokens("queries"),
        )
        finals = ", ".join(f"{t} {n}" for t, n in report["finals"].items())
        return (
            f"{sum(report['finals'].values())} generated queries ({finals}; cap {report['final_per_type_cap']})"
            + self._tiny()
        )

    def induce(self) -> None:
        for corpus in self.config.corpora:
            if corpus.loader not in STRUCTURED_LOADERS:
                continue
            parts = [self.fingerprints[("ingest", corpus.name)], self.config.inducer, *self._llm_parts()]
            if self.config.inducer == "texttiling":  # its paragraph vectors: the default embedder's precision
                parts.append(f"precision={self.config.precision}")
            elif self.config.llm.backend != "none":  # structured output (llm.structured or RAGWH_LLM_STRUCTURED)
                parts.append(f"structured={self._llm_config().structured}")
            self.stage(
                "induce",
                corpus.name,
                parts,
                lambda c=corpus.name: self._induce_one(c),
                outputs=stage_outputs.induce(corpus.name, self.config.inducer),
            )

    def _induce_one(self, corpus: str) -> str:
        from ingest.structure.stage import induce as induce

        llm = self._llm_backend()
        max_tokens = self._llm_config().stage_max_tokens("induce") if llm is not None else 4096
        structured = self._llm_config().structured if llm is not None else None
        induce(
            self.con,
            self.config.inducer,
            corpus,
            llm,
            max_tokens=max_tokens,
            precision=self.config.precision,
            structured=structured,
        )
        rows = self.con.execute(
            "SELECT coalesce(outcome, status), count(*) FROM induction_log WHERE structure = ? AND starts_with(doc_id, ?) "
            "GROUP BY 1 ORDER BY 1",
            [f"induced:{self.config.inducer}", corpus + "/"],
        ).fetchall()
        detail = f"structure induced:{self.config.inducer}: " + (
            ", ".join(f"{n} {s}" for s, n in rows) or "no documents"
        )
        if self.config.inducer == "llm":
            n, structured = self.con.execute(
                "SELECT count(*), count(*) FILTER (WHERE structured) FROM induction_log WHERE structure = 'induced:llm' "
                "AND starts_with(doc_id, ?)",
                [corpus + "/"],
            ).fetchone()
            detail += f"; structured output for {structured} of {n}" + self._tiny()
        return detail

    def chunk(self) -> None:
        for corpus in self.config.corpora:
            parts = [self.fingerprints[("ingest", corpus.name)], self.fingerprints.get(("induce", corpus.name), "-")]
            self.stage(
                "chunk",
                corpus.name,
                parts,
                lambda c=corpus.name: self._chunk_one(c),
                outputs=stage_outputs.chunk(corpus.name),
            )

    def contexts(self, runnable: list[str]) -> None:
        """A1's LLM contexts for the fixed chunks (only when A1 is runnable)."""
        if "A1" not in runnable:
            return
        for corpus in self.config.corpora:
            parts = [self.fingerprints[("chunk", corpus.name)], *self._llm_parts()]
            self.stage(
                "contexts",
                corpus.name,
                parts,
                lambda c=corpus.name: self._contexts_one(c),
                outputs=stage_outputs.contexts(corpus.name),
            )

    def _contexts_one(self, corpus: str) -> str:
        from ingest.chunking.contexts import generate_contexts as generate

        report = generate(
            self.con,
            corpus,
            self._llm_backend(),
            tokenizer=self.config.strong_embedder.model,
            max_tokens=self._llm_config().stage_max_tokens("contexts"),
        )["corpora"][corpus]
        n = self.con.execute(
            "SELECT count(*) FROM chunk_prefixes WHERE prefix_kind = 'llm_context' AND contains(chunk_id, ?)",
            [f"|{corpus}/"],
        ).fetchone()[0]
        return (
            f"{n} llm_context prefixes ({report['empty_answers']} empty answers, {report['cut_at_max_tokens']} cut at "
            f"max_tokens, {report['documents_truncated']} documents shortened to the context window)" + self._tiny()
        )

    def _chunk_one(self, corpus: str) -> str:
        from ingest.chunking.stage import chunk_corpus as chunk

        chunk(self.con, corpus, self.config.inducer, tokenizer=self.config.strong_embedder.model)
        rows = self.con.execute(
            "SELECT chunkset, count(*) FROM chunks WHERE starts_with(doc_id, ?) GROUP BY 1 ORDER BY 1", [corpus + "/"]
        ).fetchall()
        return "chunks: " + ", ".join(f"{cs} {n}" for cs, n in rows)

    def dbt_build(self, tag: str, inputs: tuple[str, ...], upstream: list[str]) -> str:
        parts = [*upstream, manifest.project_digest(), repr(sorted(self.dbt_vars().items()))]
        parts += [f"{t}={manifest.table_digest(self.con, t)}" for t in inputs]

        def work() -> str:
            self.close()
            try:
                # no --vars: the models read the settings this run stored (a bare `dbt build` does the same)
                result = run_dbt(
                    "build",
                    self.warehouse,
                    select=f"path:models/staging +tag:{tag}",
                    extra=["--indirect-selection", "cautious"],
                    repair=self.repair_command(),
                )
            finally:
                _ = self.con  # reopen
            return f"{result.n_nodes} nodes ok" + (
                f", warnings: {', '.join(result.warnings)}" if result.warnings else ""
            )

        return self.stage(
            f"dbt:{tag}",
            "",
            parts,
            work,
            outputs=stage_outputs.conditions() if tag == "conditions" else stage_outputs.evaluation(),
        )

    def dbt_vars(self) -> dict[str, Any]:
        reranker = self.config.primary.reranker
        return {
            **self.config.dbt_vars(),
            "primary_embedder": self.embedder_name(self.config.primary.embedder),
            "primary_reranker": reranker if reranker == "none" else self.reranker_name(reranker),
        }

    def embed(self, runnable: list[str]) -> None:
        """Embed each corpus's texts: its inputs are its own condition texts and queries, so another
        corpus in the warehouse (loaded by hand, or another experiment's) never makes it rerun."""
        for corpus in self.config.corpora:
            texts = [
                manifest.table_digest(
                    self.con, "int_condition_texts", "corpus = ?", [corpus.name], ("condition", "chunk_id", "text_hash")
                ),  # what retrieval reads too
                manifest.table_digest(self.con, "queries", "corpus = ?", [corpus.name], ("query_id", "text")),
            ]
            for emb in self.config.embedders:
                scope = f"{corpus.name}|{self.embedder_name(emb.model)}"
                self.stage(
                    "embed",
                    scope,
                    [*texts, emb.model, ",".join(runnable)],
                    lambda c=corpus.name, m=emb.model: self._embed_one(c, m, runnable),
                    outputs=stage_outputs.embed(corpus.name, self.embedder_name(emb.model)),
                )

    def _embed_one(self, corpus: str, model: str, runnable: list[str]) -> str:
        from ingest.retrieval.embed import embed_stage as embed
        from ingest.retrieval.truncation import describe, truncation_summary

        report = embed(
            self.con,
            model,
            corpus=corpus,
            conditions=runnable,
            precision=self.config.precision_of(model),
            engine=self.ray,
        )
        keys = ("requested", "unique", "already_stored", "embedded")
        detail = ", ".join(f"{k} {report[k]}" for k in keys if k in report) or str(report)
        return f"{detail}; truncated {describe(truncation_summary(self.con, report['embedder'], corpus, runnable))}"

    def retrieve(self, runnable: list[str]) -> None:
        for corpus in self.config.corpora:
            for emb in self.config.embedders:
                name = self.embedder_name(emb.model)
                embed_fp = self.fingerprints[("embed", f"{corpus.name}|{name}")]
                scope = f"{corpus.name}|{name}"
                self.stage(
                    "retrieve",
                    scope,
                    [embed_fp, f"k={self.config.k}", ",".join(runnable)],
                    lambda c=corpus.name, m=emb.model: self._retrieve_one(c, m, runnable),
                    outputs=stage_outputs.retrieve(corpus.name, name),
                )
                for rr in self.config.rerankers:
                    parts = [self.fingerprints[("retrieve", scope)], rr.model]
                    self.stage(
                        "rerank",
                        f"{scope}|{self.reranker_name(rr.model)}",
                        parts,
                        lambda c=corpus.name, m=emb.model, r=rr.model: self._rerank_one(c, m, r, runnable),
                        outputs=stage_outputs.rerank(corpus.name, name, self.reranker_name(rr.model)),
                    )

    def bm25(self, runnable: list[str]) -> None:
        """BM25 runs of every flat runnable condition (``retrievers: [dense, bm25]``); two-stage conditions
        are listed as not run for BM25."""
        settings = self.config.bm25
        if settings is None:
            return
        import json

        from ingest.retrieval.retrieve import retrieval_modes

        modes = retrieval_modes()
        for condition in runnable:
            if modes.get(condition) == "two_stage":
                self.outcome.not_run[f"{condition}@{settings.name}"] = (
                    "two-stage routing ranks sections by the mean of their chunks' embedding vectors; BM25 has none"
                )
        for corpus in self.config.corpora:
            parts = [
                manifest.table_digest(
                    self.con, "int_condition_texts", "corpus = ?", [corpus.name], ("condition", "chunk_id", "text_hash")
                ),
                manifest.table_digest(self.con, "queries", "corpus = ?", [corpus.name], ("query_id", "text")),
                json.dumps(settings.params(), sort_keys=True),
                f"k={self.config.k}",
                ",".join(runnable),
            ]
            self.stage(
                "bm25",
                f"{corpus.name}|{settings.name}",
                parts,
                lambda c=corpus.name: self._bm25_one(c, runnable),
                outputs=stage_outputs.retrieve(corpus.name, settings.name),
            )

    def _bm25_one(self, corpus: str, runnable: list[str]) -> str:
        from ingest.retrieval.bm25 import bm25_stage

        report = bm25_stage(self.con, self.config.bm25, k=self.config.k, conditions=runnable, corpus=corpus)
        unmatched = sum(r.get("n_unmatched", 0) for r in report["conditions"])
        return self._runs_detail(report) + (f"; {unmatched} query rankings empty (no shared term)" if unmatched else "")

    def _retrieve_one(self, corpus: str, model: str, runnable: list[str]) -> str:
        from ingest.retrieval.retrieve import retrieve_stage as retrieve

        report = retrieve(
            self.con,
            model,
            k=self.config.k,
            conditions=runnable,
            corpus=corpus,
            precision=self.config.precision_of(model),
        )
        return self._runs_detail(report)

    def _rerank_one(self, corpus: str, model: str, reranker: str, runnable: list[str]) -> str:
        from ingest.retrieval.rerank import rerank_stage as rerank

        report = rerank(
            self.con,
            reranker,
            model,
            corpus=corpus,
            conditions=runnable,
            precision=self.config.precision_of(reranker),
            embedder_precision=self.config.precision_of(model),
            engine=self.ray,
        )
        return self._runs_detail(report)

    def _runs_detail(self, report: dict) -> str:
        statuses: dict[str, int] = {}
        for r in report.get("conditions", []):
            statuses[r.get("status", "?")] = statuses.get(r.get("status", "?"), 0) + 1
        return ", ".join(f"{n} runs {s}" for s, n in sorted(statuses.items())) or "no runs"

    def report(self, evaluation_fp: str) -> None:
        def work() -> str:
            from ragwh.experiment.report import write_report

            write_report(self.con, self.config, self.report_path, not_run=self.outcome.not_run)
            return f"wrote {self.report_path}"

        from ragwh.experiment.identity import config_hash

        parts = [
            evaluation_fp,
            str(self.report_path),
            repr(sorted(self.outcome.not_run.items())),
            manifest.project_digest(CODE_ROOT, REPORT_CODE),
            config_hash(self.config),
        ]
        self.stage("report", "", parts, work, force=not self.report_path.is_file())
        self.outcome.report = self.report_path

    # --- the whole run ---------------------------------------------------------------------------------
    def not_run_reasons(self, runnable: list[str], skipped: dict[str, str]) -> None:
        """Conditions and contrasts that this experiment will not produce, with reasons."""
        for condition in known_conditions():
            if condition in skipped:
                self.outcome.not_run[condition] = skipped[condition]
            elif condition in LLM_CONDITIONS and self.config.llm.backend == "none":
                self.outcome.not_run[condition] = LLM_CONDITIONS[condition]
            elif condition not in self.config.conditions:
                self.outcome.not_run[condition] = f"not among the conditions of experiment {self.config.name!r}"
        for contrast, arms in known_contrasts().items():
            missing = [a for a in arms if a not in runnable]
            if contrast not in self.config.contrasts:
                reason = f"not among the contrasts of experiment {self.config.name!r}"
                if missing:
                    reason += f" ({' and '.join(missing)} not run)"
                self.outcome.not_run[contrast] = reason
            elif missing:
                self.outcome.not_run[contrast] = f"{' and '.join(missing)} not run"

    def no_chunk_conditions(self, runnable: list[str]) -> list[str]:
        """Runnable conditions with chunks; the others, and (condition, corpus) pairs without chunks, are
        listed as not run (read from int_condition_texts on every run, so a rerun lists the same)."""
        pairs = set(self.con.execute("SELECT DISTINCT condition, corpus FROM int_condition_texts").fetchall())
        present = {c for c, _ in pairs}
        for c in runnable:
            if c not in present:
                self.outcome.not_run[c] = (
                    "no chunks in int_condition_texts (its chunkset or prefixes were not produced)"
                )
                continue
            for corpus in self.config.corpora:
                if (c, corpus.name) not in pairs:
                    self.outcome.not_run[f"{c} ({corpus.name})"] = (
                        f"no chunks of corpus {corpus.name} in int_condition_texts (its {corpus.loader} documents have "
                        "no such chunkset)"
                    )
        return [c for c in runnable if c in present]

    def run(self) -> RunOutcome:
        self.prepare_engine()
        runnable, skipped = self.config.runnable_conditions()
        self.not_run_reasons(runnable, skipped)
        try:
            systems = [self.embedder_name(e.model) for e in self.config.embedders]
            self.refuse_imported(
                systems + ([self.config.bm25.name] if self.config.bm25 else []), [c.name for c in self.config.corpora]
            )
            self.check_bootstrap()
            with self.experiment():
                self._run_stages(runnable, skipped)
        finally:
            self.close_llm()
            self.close()
        return self.outcome

    def _run_stages(self, runnable: list[str], skipped: dict[str, str]) -> None:
        self.ingest()
        self.queries()
        self.check_bootstrap()  # with the documents and queries loaded now, before any model or LLM stage
        self.induce()
        self.chunk()
        self.contexts(runnable)
        chunk_fps = [
            fp
            for (s, _), fp in sorted(self.fingerprints.items())
            if s in ("ingest", "queries", "induce", "chunk", "contexts")
        ]
        conditions_fp = self.dbt_build("conditions", CONDITION_INPUTS, chunk_fps)
        runnable = self.no_chunk_conditions(runnable)
        self.not_run_reasons(runnable, skipped)  # contrasts whose arm got no chunks
        self.embed(runnable)
        self.retrieve(runnable)
        self.bm25(runnable)
        run_fps = [
            fp for (s, _), fp in sorted(self.fingerprints.items()) if s in ("embed", "retrieve", "rerank", "bm25")
        ]
        evaluation_fp = self.dbt_build("evaluation", CONDITION_INPUTS + EVALUATION_INPUTS, [conditions_fp, *run_fps])
        self.report(evaluation_fp)
