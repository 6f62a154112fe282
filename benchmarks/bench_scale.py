"""Benchmark: the rewriting study's non-model stages at EnterpriseRAG-Bench scale, per stage, in fresh processes.

    nice -n 10 timeout 1200 .venv/bin/python benchmarks/bench_scale.py --docs 32000 --out /tmp/scale_32k.json

1. ``generate``: an EnterpriseRAG-shaped synthetic export under ``WORKDIR/export``: the benchmark's 9
   sources in its proportions (:data:`SOURCES`: Slack ~275K of ~500K documents, Gmail ~120K, ...), each
   with its own document length range (log-uniform words: Slack 8-80, Fireflies transcripts 800-6000,
   Google Drive 300-5000, ...), deterministic text (Zipf-distributed pseudo-words, capitalized
   15-word sentences; seed ``--seed``) written as one BEIR ``corpus.jsonl`` per source, and
   ``questions.jsonl`` with ``--queries`` (470) questions of 1-3 judged documents each (a question is
   made of words of its first judged document);
2. ``load``: the real loader path, :func:`ingest.corpora.enterprise_rag.load_enterprise_rag`;
3. ``chunk``: sentence windows 512/50 (:func:`ingest.chunking.sentence_windows.sentence_chunk_stage`,
   the rewriting study's chunkset, MiniLM's tokenizer);
4. ``embed``: every chunk embedded and stored with the labelled stand-in ``hash-standin-384``
   (:mod:`ingest.retrieval.standin`: deterministic, 384-d, no model; nothing it yields is a result);
5. ``rewrite``: the rewriting stage for S1, the budget controls S1-pool100 and S1-ann4 and (unless
   ``--no-llm``) the LLM strategies S2, S3, S4, HyDE and Query2Doc, three seeds, ``dense: hnsw``, no reranker.
   The LLM strategies' prompts go through the project's ``openai`` HTTP backend to a scripted
   OpenAI-compatible server on 127.0.0.1 in a process of its own (:mod:`benchmarks.scale_llm`: answers
   made from the question's words, not by a model; cached in ``llm_calls`` like any answer). ``--without
   S1-ann4`` leaves strategies out, a departure from the protocol recorded in the JSON (``left_out``):
   S1-ann4 alone builds 9 of the stage's 12 HNSW graphs;
6. ``rewrite_rerun``: the same stage again in a new process: the vectors are stored, the HNSW graphs
   persisted next to the warehouse (:func:`ingest.rewriting.ann.cached_index`) and the answers cached, so
   nothing is embedded, built or asked again;
7. ``marts``: ``dbt build`` of the staging views and every rewriting mart but the answer marts
   (bootstrap B = ``--boot``).

Each stage runs in its own child process (``python bench_scale.py --stage NAME``), so its
``peak_rss_mib`` is that process's own peak resident set (``ru_maxrss`` from ``os.wait4``, dbt included:
dbt runs in-process), interpreter and imports included; ``seconds`` is the child's wall time. The JSON
(``--out``)::

    {"stages": {name: {"seconds": .., "peak_rss_mib": ..}}, "counts": {...}, "embedder": "hash-standin-384", ...}
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

CORPUS = "enterprise_rag"
#: (source, documents in the benchmark (thousands), min words, max words): log-uniform lengths
SOURCES = (
    ("slack", 275, 8, 80),
    ("gmail", 120, 40, 600),
    ("linear", 35, 30, 300),
    ("google_drive", 25, 300, 5000),
    ("hubspot", 15, 40, 400),
    ("fireflies", 10, 800, 6000),
    ("github", 8, 80, 2000),
    ("jira", 6, 40, 500),
    ("confluence", 5, 300, 4000),
)
STRATEGIES = ("S1", "S1-pool100", "S1-ann4")  # LLM-free: S1 and the budget controls
LLM_STRATEGIES = ("S2", "S3", "S4", "HyDE", "Q2D")  # through the scripted server (benchmarks/scale_llm.py)
MARTS = "path:models/staging +tag:rewriting"  # every rewriting mart; the answer marts are excluded
STAGES = ("generate", "load", "chunk", "embed", "rewrite", "rewrite_rerun", "marts")
SENTENCE = 15  # words per sentence
VOCAB = 6000
COUNTED = (
    "documents",
    "chunks",
    "embeddings",
    "queries",
    "qrels",
    "rewrites",
    "rewrite_text_runs",
    "rewrite_runs",
    "rewrite_query_metrics",
    "rewrite_solo",
    "rewrite_budget_baselines",
)


def source_counts(n_docs: int) -> list[int]:
    """Documents per source: the benchmark's proportions, largest remainders so they sum to ``n_docs``."""
    weights = np.array([s[1] for s in SOURCES], dtype=np.float64)
    exact = n_docs * weights / weights.sum()
    counts = np.floor(exact).astype(int)
    for i in np.argsort(-(exact - counts), kind="stable")[: n_docs - counts.sum()]:
        counts[i] += 1
    return counts.tolist()


def _vocab(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    letters = np.array(list("abcdefghiklmnoprstuvwy"))
    words = sorted({"".join(rng.choice(letters, int(rng.integers(3, 10)))) for _ in range(VOCAB * 2)})[:VOCAB]
    rng.shuffle(words)
    low = np.array(words, dtype=object)
    return low, np.array([w.capitalize() for w in words], dtype=object)


def _texts(rng: np.random.Generator, low: np.ndarray, cap: np.ndarray, lengths: np.ndarray) -> list[str]:
    """One text per length: Zipf word ids, 15-word sentences, the first word capitalized, a period closing each."""
    total = int(lengths.sum())
    ids = (rng.zipf(1.25, total) - 1) % VOCAB
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    within = np.arange(total) - np.repeat(starts, lengths)
    words = np.where(within % SENTENCE == 0, cap[ids], low[ids])
    ends = (within % SENTENCE == SENTENCE - 1) | (within == np.repeat(lengths, lengths) - 1)
    words[ends] = words[ends] + "."
    return [" ".join(words[s : s + n]) for s, n in zip(starts.tolist(), lengths.tolist())]


def generate(export: Path, n_docs: int, n_queries: int, seed: int = 0) -> dict:
    """Write the synthetic export (module doc, step 1); returns the counts per source."""
    rng = np.random.default_rng(seed)
    low, cap = _vocab(rng)
    docs: list[tuple[str, str]] = []  # (dsid, text) of every document, for the questions
    per_source, words = {}, 0
    for (source, _, lo, hi), n in zip(SOURCES, source_counts(n_docs)):
        lengths = np.exp(rng.uniform(np.log(lo), np.log(hi), n)).astype(np.int64)
        folder = export / source
        folder.mkdir(parents=True, exist_ok=True)
        with open(folder / "corpus.jsonl", "w", encoding="utf-8") as f:
            for i, text in enumerate(_texts(rng, low, cap, lengths)):
                dsid = "dsid_" + hashlib.md5(f"{seed}:{source}:{i}".encode()).hexdigest()
                f.write(json.dumps({"_id": dsid, "title": f"{source} {i}", "text": text}) + "\n")
                docs.append((dsid, text))
        per_source[source] = n
        words += int(lengths.sum())
    picks = rng.choice(len(docs), size=(n_queries, 3), replace=len(docs) < 3 * n_queries)
    n_judged = rng.integers(1, 4, n_queries)
    with open(export / "questions.jsonl", "w", encoding="utf-8") as f:
        for q in range(n_queries):
            judged = list(dict.fromkeys(docs[i][0] for i in picks[q, : n_judged[q]].tolist()))
            toks = docs[picks[q, 0]][1].rstrip(".").split()
            lo = int(rng.integers(0, max(1, len(toks) - 8)))
            f.write(
                json.dumps(
                    {
                        "question_id": f"q{q:05d}",
                        "question_type": "synthetic",
                        "source_types": [],
                        "question": "What about " + " ".join(toks[lo : lo + 8]).lower() + "?",
                        "expected_doc_ids": judged,
                        "gold_answer": " ".join(toks[lo : lo + 3]),
                    }
                )
                + "\n"
            )
    return {"documents_per_source": per_source, "words": words}


def _settings(llm: bool = True, without: tuple[str, ...] = ()):
    from ingest.rewriting.settings import RewriteSettings

    return RewriteSettings(
        strategies=tuple(s for s in STRATEGIES + (LLM_STRATEGIES if llm else ()) if s not in without)
    )


def parse_without(value: str) -> tuple[str, ...]:
    """``--without S1-ann4,...``: strategies left out of the run (a departure from the protocol, named in the JSON)."""
    names = tuple(v.strip() for v in value.split(",") if v.strip())
    unknown = [n for n in names if n not in STRATEGIES + LLM_STRATEGIES]
    if unknown:
        raise argparse.ArgumentTypeError(
            f"unknown strategies {', '.join(unknown)}: the benchmark runs {', '.join(STRATEGIES + LLM_STRATEGIES)}"
        )
    return names


def _rewrite(con, args: argparse.Namespace) -> dict:
    """The rewriting stage, its LLM strategies' prompts answered by the scripted loopback server (module doc)."""
    from ingest.llm import open_llm
    from ingest.llm.config import LLMConfig
    from ingest.retrieval.standin import STANDIN_NAME
    from ingest.rewriting.stage import rewrite_stage

    if not args.llm:
        return rewrite_stage(con, CORPUS, _settings(False, args.without), embedder=STANDIN_NAME, show_progress=False)
    from benchmarks.scale_llm import MODEL, ScriptedServer

    with ScriptedServer(args.seed) as server:
        llm = open_llm(
            con,
            config=LLMConfig(backend="openai", base_url=server.base_url, model=MODEL, max_retries=0),
            progress=False,
        )
        report = rewrite_stage(
            con, CORPUS, _settings(True, args.without), embedder=STANDIN_NAME, llm=llm, show_progress=False
        )
    return report | {"http_requests": server.n_requests}


def run_stage(stage: str, work: Path, args: argparse.Namespace) -> dict:
    """One stage, in this process (the parent runs each in a child: :func:`run_benchmark`)."""
    os.environ["RAGWH_STANDIN_EMBEDDER"] = "1"  # the labelled stand-in, allowed here only
    from warehouse.db import connect

    warehouse = work / "scale.duckdb"
    if stage == "generate":
        return generate(work / "export", args.docs, args.queries, args.seed)
    if stage == "marts":
        from warehouse.dbt import run_dbt

        result = run_dbt(
            "build",
            warehouse,
            select=args.marts,
            progress=False,
            vars={"rewriting_bootstrap_b": args.boot},
            extra=["--indirect-selection", "cautious", "--exclude", "stg_reader_answers+"],
        )
        return {"dbt_nodes": result.n_nodes}
    con = connect(warehouse)
    try:
        if stage == "load":
            from ingest.corpora.enterprise_rag import load_enterprise_rag

            out = load_enterprise_rag(con, work / "export" / "questions.jsonl", work / "export", CORPUS)
            return {k: v for k, v in out.items() if isinstance(v, (int, float, str))}
        if stage == "chunk":
            from ingest.chunking.sentence_windows import sentence_chunk_stage

            return {k: v for k, v in sentence_chunk_stage(con, CORPUS).items() if isinstance(v, (int, float, str))}
        from ingest.retrieval.standin import STANDIN_NAME

        if stage == "embed":
            from ingest.chunking.sentence_windows import chunkset_name
            from ingest.retrieval.embedders import resolve_embedder
            from ingest.rewriting.index import load_index
            from ingest.rewriting.vectors import Embedder

            spec = resolve_embedder(STANDIN_NAME)
            emb = Embedder(spec, load=spec.load, batch_size=256)
            s = _settings()
            index = load_index(con, CORPUS, chunkset_name(s.chunk_tokens, s.chunk_overlap), emb, show_progress=False)
            return {"chunks": len(index.chunk_ids), "texts_embedded": emb.encoded}
        if stage in ("rewrite", "rewrite_rerun"):
            report = _rewrite(con, args)
            return {
                k: report[k]
                for k in (
                    "queries",
                    "chunks",
                    "searches",
                    "texts_embedded",
                    "rewrite_text_runs",
                    "rewrite_runs",
                    "llm_calls",
                    "llm_cached",
                    "http_requests",
                )
                if k in report
            } | {"steps": report["seconds"]}
        raise ValueError(f"unknown stage {stage!r}: one of {', '.join(STAGES)}")
    finally:
        con.close()


def _child(stage: str, work: Path, args: argparse.Namespace) -> dict:
    """Run ``stage`` in a fresh interpreter; its wall seconds, own peak RSS and its result."""
    result_file = work / f"stage_{stage}.json"
    result_file.unlink(missing_ok=True)
    cmd = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--stage",
        stage,
        "--workdir",
        str(work),
        "--docs",
        str(args.docs),
        "--queries",
        str(args.queries),
        "--seed",
        str(args.seed),
        "--boot",
        str(args.boot),
        "--marts",
        args.marts,
        "--llm" if args.llm else "--no-llm",
        "--without",
        ",".join(args.without),
    ]
    t = time.perf_counter()
    proc = subprocess.Popen(cmd, env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)})
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - t
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(f"stage {stage} failed (exit {proc.returncode}); rerun it alone: {' '.join(cmd)}")
    return {
        "seconds": round(seconds, 2),
        "peak_rss_mib": round(usage.ru_maxrss / 1024, 1),
        "result": json.loads(result_file.read_text()),
    }


def counts(warehouse: Path) -> dict[str, int]:
    """Row counts of the tables and marts the benchmark writes (:data:`COUNTED`)."""
    from warehouse.db import connect

    con = connect(warehouse, read_only=True)
    try:
        have = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
        return {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in COUNTED if t in have}
    finally:
        con.close()


def run_benchmark(
    work: Path,
    docs: int,
    queries: int = 470,
    *,
    seed: int = 0,
    boot: int = 200,
    marts: str = MARTS,
    stages: tuple[str, ...] = STAGES,
    llm: bool = True,
    without: tuple[str, ...] = (),
) -> dict:
    """Every stage in its own child process, in order, on a fresh ``work`` folder; returns the JSON dict.
    ``marts``: the dbt selection of the marts stage (a test builds fewer nodes); ``llm``: run the LLM
    strategies through the scripted server. The warehouse of an earlier run in ``work`` is deleted with its
    saved HNSW graphs, so the first rewrite stage builds them (a reused folder would load them)."""
    import shutil

    work.mkdir(parents=True, exist_ok=True)
    for old in ("scale.duckdb", "scale.duckdb.wal"):
        (work / old).unlink(missing_ok=True)
    shutil.rmtree(work / "scale.duckdb.ann", ignore_errors=True)
    args = argparse.Namespace(docs=docs, queries=queries, seed=seed, boot=boot, marts=marts, llm=llm, without=without)
    out: dict = {
        "embedder": "hash-standin-384 (labelled stand-in: no model, nothing here is a result)",
        "tokenizer": "all-MiniLM-L6-v2",
        "docs": docs,
        "queries": queries,
        "seed": seed,
        "boot": boot,
        "marts": marts,
        "strategies": list(_settings(llm, without).strategies),
        "dense": "hnsw",
        "left_out": list(without),
        "llm": f"{'scripted loopback server (benchmarks/scale_llm.py): not a model' if llm else 'none'}",
        "peak_rss": "per stage: the stage's own child process (ru_maxrss via os.wait4), imports included; "
        "the scripted LLM server is a process of its own, not counted",
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
        "stages": {},
        "results": {},
    }
    for stage in stages:
        run = _child(stage, work, args)
        out["stages"][stage] = {"seconds": run["seconds"], "peak_rss_mib": run["peak_rss_mib"]}
        out["results"][stage] = run["result"]
        print(f"{stage}: {run['seconds']:.1f} s, peak RSS {run['peak_rss_mib']:.0f} MiB  {run['result']}", flush=True)
    out["counts"] = counts(work / "scale.duckdb")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=int, required=True)
    ap.add_argument("--queries", type=int, default=470)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--workdir", type=Path, default=None, help="default: /tmp/bench_scale_<docs>")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--boot", type=int, default=200, help="bootstrap replicates of the marts")
    ap.add_argument("--marts", default=MARTS, help="dbt selection of the marts stage")
    ap.add_argument(
        "--llm",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="the LLM strategies through the scripted loopback server (default: on)",
    )
    ap.add_argument(
        "--without",
        type=parse_without,
        default=(),
        metavar="S[,S...]",
        help="leave these strategies out (a departure from the protocol: S1-ann4 builds 9 of the 12 graphs)",
    )
    ap.add_argument("--stage", choices=STAGES, help=argparse.SUPPRESS)  # internal: one stage in this process
    args = ap.parse_args()
    work = args.workdir or Path(f"/tmp/bench_scale_{args.docs}")
    if args.stage:
        result = run_stage(args.stage, work, args)
        (work / f"stage_{args.stage}.json").write_text(json.dumps(result, default=float))
        return
    if args.out is None:
        ap.error("--out is required")
    out = run_benchmark(
        work,
        args.docs,
        args.queries,
        seed=args.seed,
        boot=args.boot,
        marts=args.marts,
        llm=args.llm,
        without=args.without,
    )
    args.out.write_text(json.dumps(out, indent=1))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
