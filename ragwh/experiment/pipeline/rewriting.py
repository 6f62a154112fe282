"""``ragwh run`` for a rewriting experiment: the same resumable stage/manifest mechanism, the study's stages.

Stages, each fingerprinted in ``stage_manifest`` by :meth:`StagePipeline.stage` (an unchanged fingerprint
skips the stage, so a rerun does no ingest, LLM call, embedding or dbt build)::

    ingest [corpus] -> chunk:sentence [corpus] -> rewrite [corpus|embedder|reranker] -> dbt:rewriting
      -> read [corpus|embedder|reranker] -> dbt:answers -> report

``rewrite`` runs :func:`ingest.rewriting.stage.rewrite_stage` (every strategy x seed, all lineage tables
in one write); its fingerprint covers the chunks, the settings, the stack, the LLM (backend, settings),
the strategies seed, the prompts and the stage's code, and its output digest covers the cell's
``rewrite_runs`` rows (a run under another reranker that changes the shared texts removes them, so the
stage runs again). Each rewrite stage records in ``corpus_meta``
which LLM wrote the corpus's rewrites (``rewriting_llm``) and whether it is the tiny packaged model
(``rewriting_tiny_model``), so every later view can label tiny-model output.

``dbt:rewriting`` builds the staging views and every ``tag:rewriting`` model except the answer marts,
with the config's ``analysis:`` values as dbt vars (:meth:`RewritingConfig.dbt_vars`); ``read`` runs
the reader LLM over the view ``rewrite_reader_inputs`` (:func:`ingest.rewriting.reader.reader_stage`);
``dbt:answers`` builds ``stg_reader_answers`` and the answer marts downstream of it. Without a reader
(``reader: none`` or no LLM) the answer marts are built empty and the report says why. ``report``
writes the one HTML report (the rewriting sections, :mod:`ragwh.experiment.report.rewriting`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa

from ragwh.experiment.config.rewriting import RewritingConfig
from ragwh.experiment.pipeline import outputs as stage_outputs
from ragwh.experiment.pipeline.outputs import Output
from ragwh.experiment.pipeline.stages import REPORT_CODE, PipelineError, RunOutcome, StagePipeline
from warehouse import manifest
from warehouse.db import replace_where, transaction
from warehouse.dbt import run_dbt
from warehouse.paths import CODE_ROOT

REWRITING_INPUTS = (
    "documents",
    "queries",
    "qrels",
    "query_answers",
    "chunks",
    "chunk_prefixes",
    "rewrites",
    "rewrite_text_runs",
    "rewrite_runs",
    "funnel",
    "quarantine",
    "labels",
)
CODE_GLOBS = (
    "ingest/rewriting/*.py",
    "ingest/llm/prompts/rewrite_*.txt",
    "ingest/chunking/sentence_windows.py",
    "seeds/rewrite_strategies.csv",
)
#: the code the sentence windows come from (sentence splitting, token counting, titles, documents read)
CHUNK_CODE = tuple(
    f"ingest/chunking/{m}.py" for m in ("sentence_windows", "sentences", "chunkers", "tokens", "prefixes", "documents")
)
READER_CODE = ("ingest/rewriting/reader.py", "ingest/llm/prompts/reader_*.txt", "ingest/llm/fit.py")
#: the marts the reader's answers feed: built after the reader stage, by dbt:answers
ANSWER_MARTS = "stg_reader_answers+"


class RewritingPipeline(StagePipeline):
    """Runs one rewriting experiment against one warehouse file (see module docstring)."""

    def __init__(self, config: RewritingConfig, **kwargs: Any) -> None:
        super().__init__(config, **kwargs)
        self.reports: dict[str, dict] = {}

    def _reranker_label(self) -> str:
        return self.reranker_name(self.config.reranker) if self.config.reranker else "none"

    def corpus_limit(self, corpus) -> int | None:
        """Questions kept of a hotpotqa corpus: the run's limit, else the corpus's ``limit`` option."""
        return self.config.limit if self.config.limit is not None else corpus.options.get("limit")

    def _ingest_one(self, corpus, files: list[Path]) -> str:
        extra = self.config.option_path(corpus, self.data)
        if corpus.loader == "hotpotqa":
            from ingest.corpora.hotpotqa import load_hotpotqa

            load_hotpotqa(
                self.con,
                files[0],
                corpus=corpus.name,
                limit=self.corpus_limit(corpus),
                split=corpus.options.get("split", "dev"),
            )
        elif corpus.loader == "beir":
            from ingest.corpora.beir import load_beir

            load_beir(self.con, files[0].parent, corpus=corpus.name, split=corpus.options.get("split", "test"))
        elif corpus.loader == "enterprise_rag":
            from ingest.corpora.enterprise_rag import load_enterprise_rag

            load_enterprise_rag(self.con, files[0], extra, corpus=corpus.name)
        elif corpus.loader == "ambignq":
            from ingest.corpora.ambignq import load_ambignq

            load_ambignq(self.con, files[0], extra, corpus=corpus.name)
        else:  # a loader named in LOADERS without its branch here never runs as another loader
            raise PipelineError(f"ingest [{corpus.name}]: loader {corpus.loader!r} has no ingest step in this pipeline")
        n_docs, n_queries = self.con.execute(
            "SELECT (SELECT count(*) FROM documents WHERE corpus = $c), (SELECT count(*) FROM queries WHERE corpus = $c)",
            {"c": corpus.name},
        ).fetchone()
        return f"{n_docs} documents, {n_queries} queries"

    def ingest(self) -> None:
        for corpus in self.config.corpora:
            files = self.config.resolve_sources(corpus, self.data)
            extra = self.config.option_path(corpus, self.data)
            parts = [corpus.loader, repr(sorted(corpus.options.items())), f"limit={self.corpus_limit(corpus)}"]
            parts += [f"{f.name}={manifest.file_digest(f)}" for f in files if f.is_file()]
            if extra is not None and extra.exists():
                parts += [
                    f"{p.relative_to(extra)}={manifest.file_digest(p)}"
                    for p in sorted([extra] if extra.is_file() else extra.rglob("*"))
                    if p.is_file()
                ]
            # the corpus's rows are the stage's output: a load by hand since (``ragwh ingest``) makes it run again
            outputs = [
                *stage_outputs.ingest(corpus.name, corpus.loader),
                Output("query_answers", "starts_with(query_id, ?)", (corpus.name + "/",)),
            ]
            self.stage("ingest", corpus.name, parts, lambda c=corpus, f=files: self._ingest_one(c, f), outputs=outputs)

    def chunk(self) -> None:
        from ingest.chunking.sentence_windows import sentence_chunk_stage

        s = self.config.settings
        for corpus in self.config.corpora:
            parts = [
                self.fingerprints[("ingest", corpus.name)],
                str(s.chunk_tokens),
                str(s.chunk_overlap),
                self.embedder_name(self.config.embedder),
                manifest.project_digest(CODE_ROOT, CHUNK_CODE),
            ]

            def work(c=corpus.name) -> str:
                r = sentence_chunk_stage(
                    self.con, c, self.config.embedder, chunk_tokens=s.chunk_tokens, overlap=s.chunk_overlap
                )
                return (
                    f"{r['chunkset']}: {r['chunks']} chunks of {r['documents']} documents "
                    f"({r['multi_chunk']} multi-chunk, mean {r['mean_content_tokens']:.0f} tokens)"
                )

            self.stage("chunk:sentence", corpus.name, parts, work)

    def rewrite(self) -> None:
        cfg = self.config
        reranker = self._reranker_label()
        for corpus in cfg.corpora:
            scope = f"{corpus.name}|{self.embedder_name(cfg.embedder)}|{reranker}"
            parts = [
                self.fingerprints[("chunk:sentence", corpus.name)],
                cfg.settings.fingerprint(),
                self.embedder_name(cfg.embedder),
                reranker,
                *self._llm_parts(),
                manifest.project_digest(CODE_ROOT, CODE_GLOBS, exclude=READER_CODE[:1]),
            ]
            # the cell's run rows are its output: a run under another reranker that changed the shared texts
            # removes them (ingest/rewriting/stage.py), and this stage then runs again over the new texts
            runs = Output(
                "rewrite_runs",
                "corpus = ? AND embedder = ? AND reranker = ?",
                (corpus.name, self.embedder_name(cfg.embedder), reranker),
            )
            self.stage("rewrite", scope, parts, lambda c=corpus.name: self._rewrite_one(c), outputs=[runs])

    def _rewrite_one(self, corpus: str) -> str:
        from ingest.rewriting.stage import rewrite_stage

        llm = self._llm_backend()
        from ingest.retrieval.embedders import resolve_embedder
        from ingest.retrieval.rerank import resolve_reranker

        cfg = self.config
        embedder = resolve_embedder(cfg.embedder, cfg.precision)
        reranker = resolve_reranker(cfg.reranker, cfg.precision) if cfg.reranker else None
        report = rewrite_stage(
            self.con, corpus, cfg.settings, embedder=embedder, reranker=reranker, llm=llm, engine=self.ray
        )
        self.reports[corpus] = report
        self._label(corpus)
        steps = ", ".join(f"{k} {v:.1f} s" for k, v in report["seconds"].items())
        return (
            f"{len(report['strategies'])} strategies x {len(report['seeds'])} seeds over {report['queries']} queries: "
            f"{report['llm_calls']} LLM calls ({report['llm_cached']} cached), {report['texts_embedded']} texts "
            f"embedded, {report['pairs_scored']} pairs reranked, {report['rewrite_runs']} merged rows; {steps}"
        )

    def _label(self, corpus: str) -> None:
        cfg = self.config
        meta = {
            "rewriting_llm": f"{cfg.llm.backend}:{cfg.llm.model or '-'}",
            "rewriting_tiny_model": "true" if cfg.tiny_model_label else "false",
        }
        table = pa.table({"corpus": [corpus] * len(meta), "key": list(meta), "value": list(meta.values())})
        with transaction(self.con):
            replace_where(
                self.con,
                "corpus_meta",
                "corpus = ? AND key IN ('rewriting_llm', 'rewriting_tiny_model')",
                [corpus],
                table,
            )

    def dbt_vars(self) -> dict[str, Any]:
        return self.config.dbt_vars()

    def _dbt(
        self, stage: str, parts: list[str], select: str, exclude: str | None = None, indirect: str = "cautious"
    ) -> str:
        """A dbt build as a stage: the warehouse connection is closed while dbt holds the file.
        ``indirect``: dbt's indirect selection of tests (``eager`` also runs a selected model's tests
        that read a model built by an earlier stage)."""

        def work() -> str:
            self.close()
            extra = ["--indirect-selection", indirect] + (["--exclude", exclude] if exclude else [])
            # no --vars: the models read the settings this run stored (a bare `dbt build` does the same)
            result = run_dbt("build", self.warehouse, select=select, extra=extra, repair=self.repair_command())
            return f"{result.n_nodes} nodes ok" + (
                f", warnings: {', '.join(result.warnings)}" if result.warnings else ""
            )

        return self.stage(stage, "", [*parts, repr(sorted(self.dbt_vars().items()))], work)

    def read(self, marts_fp: str) -> list[str]:
        """The reader stage of every corpus (``reader`` configured); returns their fingerprints."""
        reader = self.config.reader
        if reader is None:
            self.outcome.not_run["read"] = (
                "no reader (reader: none, no LLM, or none of its helpers among "
                "rewriting.strategies): the answer-quality marts are empty"
            )
            self._clear_answers()
            return []
        out = []
        embedder, reranker = self.embedder_name(self.config.embedder), self._reranker_label()
        for corpus in self.config.corpora:
            scope = f"{corpus.name}|{embedder}|{reranker}"
            parts = [marts_fp, repr(reader), *self._llm_parts(), manifest.project_digest(CODE_ROOT, READER_CODE)]
            answers = Output(
                "reader_answers", "corpus = ? AND embedder = ? AND reranker = ?", (corpus.name, embedder, reranker)
            )
            out.append(
                self.stage(
                    "read", scope, parts, lambda c=corpus.name: self._read_one(c, embedder, reranker), outputs=[answers]
                )
            )
        return out

    def _clear_answers(self) -> None:
        """Without a reader, the experiment's cells keep no answers from an earlier run with one."""
        embedder, reranker = self.embedder_name(self.config.embedder), self._reranker_label()
        with transaction(self.con):
            for corpus in self.config.corpora:
                self.con.execute(
                    "DELETE FROM reader_answers WHERE corpus = ? AND embedder = ? AND reranker = ?",
                    [corpus.name, embedder, reranker],
                )
                self.con.execute(
                    "DELETE FROM funnel WHERE corpus = ? AND stage = ?", [corpus.name, f"reader:{embedder}:{reranker}"]
                )

    def _read_one(self, corpus: str, embedder: str, reranker: str) -> str:
        from ingest.rewriting.reader import reader_stage

        spec = self.config.reader
        r = reader_stage(
            self.con,
            corpus,
            self._llm_backend(),
            embedder=embedder,
            reranker=reranker,
            mode=spec.mode_of(corpus),
            max_tokens=spec.max_tokens_of(corpus),
            calls=spec.calls,
            temperature=self.config.settings.temperature,
        )
        return (
            f"{r['groups']} {r['mode']} answers, reader calls {r['calls']} ({r['prompt']}; {r['distinct_prompts']} distinct prompts): "
            f"{r['llm_calls']} LLM calls ({r['llm_cached']} cached), {r['empty_answer']} empty, {r['cut']} cut, {r['shortened']} prompts shortened"
        )

    def report(self, answers_fp: str) -> None:
        from ragwh.experiment.report import write_rewriting_report

        def work() -> str:
            write_rewriting_report(self.con, self.config, self.report_path, not_run=self.outcome.not_run)
            return f"wrote {self.report_path}"

        from ragwh.experiment.identity import config_hash

        parts = [
            answers_fp,
            str(self.report_path),
            repr(sorted(self.outcome.not_run.items())),
            manifest.project_digest(CODE_ROOT, REPORT_CODE),
            config_hash(self.config),
        ]
        self.stage("report", "", parts, work, force=not self.report_path.is_file())
        self.outcome.report = self.report_path

    def primary_model(self) -> str:
        return self.config.embedder

    def run(self) -> RunOutcome:
        self.prepare_engine()
        try:
            self.check_bootstrap()
            with self.experiment():
                self._run_stages()
        finally:
            self.close_llm()
            self.close()
        return self.outcome

    def _run_stages(self) -> None:
        self.ingest()
        self.check_bootstrap()  # with the queries loaded now, before chunking, embedding and the LLM
        self.chunk()
        self.rewrite()
        upstream = [fp for (s, _), fp in sorted(self.fingerprints.items())]
        parts = [*upstream, manifest.project_digest()]
        # the reader's funnel rows are its own output, not an input of these marts
        parts += [
            f"{t}="
            + (
                manifest.table_digest(self.con, t, "NOT starts_with(stage, 'reader:')")
                if t == "funnel"
                else manifest.table_digest(self.con, t)
            )
            for t in REWRITING_INPUTS
        ]
        marts = self._dbt("dbt:rewriting", parts, "path:models/staging +tag:rewriting", exclude=ANSWER_MARTS)
        readers = self.read(marts)
        answers = self._dbt(
            "dbt:answers",
            [marts, *readers, f"reader_answers={manifest.table_digest(self.con, 'reader_answers')}"],
            ANSWER_MARTS,
            indirect="eager",
        )
        self.report(answers)
