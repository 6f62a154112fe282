"""The LLM half of the chunking study, run for real with the packaged tiny model on the CPU.

TINY-MODEL OUTPUT, NOT RESULTS: SmolLM2-135M exercises the pipeline; its figures say what the stages
do and cost with a real model, not what the study would find.

On a fresh warehouse (``--warehouse``, default a temporary file):

1. ingest the first ``--qasper`` papers of ``qasper_test_more_shared`` and the ``--wikipedia``
   lowest-page-id articles of ``articles_shared.jsonl`` that pass the loader's filters (written to a
   temporary JSONL holding only them); chunk them (fixed windows size-matched to the gold structure);
2. generated queries on the Wikipedia articles: the whole funnel per type, the ROUGE-L F1
   distribution, the BM25 gold-top-1 rate;
3. A1 contexts for every fixed chunk of the first ``--contexts-docs`` documents of each corpus
   (default: all; run on a copy of the warehouse that keeps only their fixed chunks): count, empty and
   cut answers, documents shortened to the window, prefix tokens (mean, max), s/chunk;
4. ``induce --inducer llm`` on both corpora (structure answers capped at ``--induce-max-tokens``;
   ``--structured on|off|auto`` is ``llm.structured``: JSON-schema-constrained answers or free text),
   then chunk with the LLM-induced structure: legal as returned / self-corrected / repaired / failed,
   structured documents and schema-valid first answers, documents shown truncated (longer than the
   8192-token window), answers cut at max_tokens, sections per document vs gold, share of induced
   chunk spans identical to a gold one, wall and CPU seconds per document;
5. after each stage a rerun, which must make zero generations (the ``llm_calls`` cache).

``--dtype-check`` instead compares float32 and bfloat16 on 16 short chat prompts (greedy, 96 new
tokens): wall time, whether the texts agree, and whether each text is the same alone and in a batch.

    PYTHONPATH=. .venv/bin/python benchmarks/bench_llm_chunking.py --out /tmp/bench_llm.json
    PYTHONPATH=. .venv/bin/python benchmarks/bench_llm_chunking.py --stages induce --structured on --out /tmp/ind.json
    PYTHONPATH=. .venv/bin/python benchmarks/bench_llm_chunking.py --dtype-check
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

from ingest.llm import LLMConfig, LLMRequest, Sampling, open_llm
from warehouse.db import connect
from warehouse.paths import PROJECT_ROOT

DATA = PROJECT_ROOT.parent / "shared" / "data"
QASPER = "qasper/qasper_test_more_shared.v0.3-format.json"
WIKIPEDIA = "wikipedia/articles_shared.jsonl"
PROMPTS = [
    "What is the capital of France?",
    "Write a haiku about the sea.",
    "Explain photosynthesis in one sentence.",
    "List three prime numbers.",
    "What does a database index do?",
    "Give a synonym for happy.",
    "Summarize the plot of Romeo and Juliet in two sentences.",
    "What is 17 times 23?",
    "Name two programming languages and one use of each.",
    "Why is the sky blue?",
    "Translate 'good morning' into Spanish.",
    "What is a neural network?",
    "Describe a cat to someone who has never seen one.",
    "What causes the seasons on Earth?",
    "Suggest a title for a paper about document chunking.",
    "What is the boiling point of water at sea level?",
]


STRUCTURED = {"on": True, "off": False, "auto": None}


def llm_config(args, **kw) -> LLMConfig:
    options = {"threads": args.threads} if args.threads else {}
    if getattr(args, "dtype", None):
        options["dtype"] = args.dtype
    options.update(kw)
    return LLMConfig(
        backend="transformers",
        model=args.model,
        commit_every=args.commit_every,
        transformers=options,
        structured=STRUCTURED[getattr(args, "structured", "auto")],
    )


def dtype_check(args) -> dict:
    from ingest.llm.transformers_local import TransformersBackend

    requests = [
        LLMRequest(f"p{i}", "bench.v1", ({"role": "user", "content": q},), Sampling(max_tokens=96, seed=1))
        for i, q in enumerate(PROMPTS)
    ]
    out: dict = {"prompts": len(requests), "max_tokens": 96}
    texts = {}
    for dtype in ("float32", "bfloat16"):
        backend = TransformersBackend(llm_config(args, dtype=dtype))
        backend.lm  # load outside the timing
        started = time.perf_counter()
        batch = backend.generate(requests)
        seconds = time.perf_counter() - started
        alone = [backend.generate([r])[0] for r in requests]
        texts[dtype] = [c.text for c in batch]
        out[dtype] = {
            "batch_seconds": round(seconds, 2),
            "completion_tokens": sum(c.completion_tokens for c in batch),
            "same_alone_and_in_batch": sum(a.text == b.text for a, b in zip(alone, batch)),
        }
    out["same_text_float32_bfloat16"] = sum(a == b for a, b in zip(texts["float32"], texts["bfloat16"]))
    return out


def wikipedia_subset(source: Path, n: int, folder: Path) -> Path:
    """A JSONL of the ``n`` lowest-page-id articles of ``source`` that the loader keeps."""
    from ingest.corpora.wikipedia.load import build_wikipedia

    kept = sorted(
        int(d.split("/", 1)[1]) for d in build_wikipedia(source).tables["documents"].column("doc_id").to_pylist()
    )
    chosen = set(kept[:n])
    lines = [
        line
        for line in source.read_text(encoding="utf-8").splitlines()
        if line.strip() and int(json.loads(line)["page_id"]) in chosen
    ]
    path = folder / f"wikipedia_first{n}.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def run(args) -> dict:
    from ingest.chunking.stage import chunk_corpus
    from ingest.corpora.qasper.load import load_qasper
    from ingest.corpora.wikipedia.load import load_wikipedia
    from ingest.genqueries import generate_queries

    folder = Path(tempfile.mkdtemp(prefix="bench_llm_"))
    warehouse = Path(args.warehouse) if args.warehouse else folder / "bench.duckdb"
    con = connect(warehouse)
    out: dict = {
        "model": args.model,
        "warehouse": str(warehouse),
        "threads": args.threads,
        "dtype": getattr(args, "dtype", None) or "auto",
        "note": "TINY-MODEL OUTPUT, NOT RESULTS (SmolLM2-135M exercises the pipeline)",
    }
    data = Path(args.data)
    load_qasper(con, [data / QASPER], limit=args.qasper)
    load_wikipedia(con, wikipedia_subset(data / WIKIPEDIA, args.wikipedia, folder))
    for corpus in ("qasper", "wikipedia"):
        chunk_corpus(con, corpus, "texttiling", show_progress=False)  # gold + fixed chunks (no induced structure yet)
    llm = open_llm(con, config=llm_config(args))
    started = time.perf_counter()
    llm.backend.lm  # load once, outside the per-stage figures
    out["model_load_seconds"] = round(time.perf_counter() - started, 1)

    def emit(key: str) -> None:
        print(json.dumps({key: out[key]}, default=str), flush=True)

    stages = set(args.stages.split(","))
    if "queries" in stages:
        calls = llm.calls
        queries = generate_queries(con, "wikipedia", llm)
        out["queries"] = {k: v for k, v in queries.items() if k not in ("model", "backend")}
        out["queries"]["rerun_generations"] = _rerun(llm, lambda: generate_queries(con, "wikipedia", llm))
        out["queries"]["generations"] = llm.calls - calls - out["queries"]["rerun_generations"]
        emit("queries")
    if "contexts" in stages:
        con.close()
        out.update(_contexts(args, warehouse, folder, llm.backend))
        emit("contexts")
        con = connect(warehouse)
        llm = open_llm(con, llm.backend, llm_config(args))
    if "induce" in stages:
        out["induction"] = _induction(args, con, llm)
    out["llm_calls"] = dict(
        zip(
            ("calls", "prompt_tokens", "completion_tokens", "cut", "empty"),
            con.execute(
                "SELECT count(*), sum(prompt_tokens), sum(completion_tokens), count(*) FILTER (WHERE finish_reason = 'length'), "
                "count(*) FILTER (WHERE trim(response_text) = '') FROM llm_calls"
            ).fetchone(),
        )
    )
    con.close()
    return out


def _contexts(args, warehouse: Path, folder: Path, backend) -> dict:
    """A1 on the first --contexts-docs documents of each corpus: a copy of the warehouse keeps only their fixed chunks."""
    import shutil

    from ingest.chunking.contexts import generate_contexts

    copy = folder / "contexts.duckdb"
    shutil.copyfile(warehouse, copy)
    ccon = connect(copy)
    out: dict = {}
    keep = [
        d
        for corpus in ("qasper", "wikipedia")
        for (d,) in ccon.execute(
            "SELECT doc_id FROM documents WHERE corpus = ? ORDER BY doc_id LIMIT ?", [corpus, args.contexts_docs]
        ).fetchall()
    ]
    ccon.execute("DELETE FROM chunks WHERE chunkset = 'fixed' AND doc_id NOT IN (SELECT unnest(?))", [keep])
    cllm = open_llm(ccon, backend, llm_config(args))
    report = generate_contexts(ccon, None, cllm)["corpora"]
    for corpus, r in report.items():
        r["seconds_per_chunk"] = round(r["seconds"] / max(r["chunks"], 1), 2)
        r["document_ids"] = [d for d in keep if d.startswith(corpus + "/")]
        r["prefix_tokens_max"] = ccon.execute(
            "SELECT max(p.prefix_tokens) FROM chunk_prefixes p JOIN chunks c USING (chunkset, chunk_id) "
            "JOIN documents d USING (doc_id) WHERE p.prefix_kind = 'llm_context' AND d.corpus = ?",
            [corpus],
        ).fetchone()[0]
        r["context_tokens_model"] = dict(
            zip(
                ("mean", "max"),
                ccon.execute(
                    "SELECT avg(completion_tokens), max(completion_tokens) FROM llm_calls WHERE prompt_name = 'contextual_chunk' "
                    "AND item_id IN (SELECT chunk_id FROM chunks c JOIN documents d USING (doc_id) WHERE d.corpus = ? "
                    "AND c.chunkset = 'fixed')",
                    [corpus],
                ).fetchone(),
            )
        )
    out["contexts"] = report
    out["contexts_rerun_generations"] = _rerun(cllm, lambda: generate_contexts(ccon, None, cllm))
    ccon.close()
    return out


def _induction(args, con, llm) -> dict:
    from ingest.chunking.stage import chunk_corpus
    from ingest.structure.stage import induce, induction_report

    out = {}
    structured = STRUCTURED[args.structured]
    for corpus in ("qasper", "wikipedia"):
        started, cpu, calls = time.perf_counter(), time.process_time(), llm.calls
        induce(con, "llm", corpus, llm, max_tokens=args.induce_max_tokens, show_progress=False, structured=structured)
        seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
        chunk_corpus(con, corpus, "llm", show_progress=False)
        stats = induction_report(con, "llm", corpus)
        stats.update(
            seconds=round(seconds, 1),
            seconds_per_document=round(seconds / stats["documents"], 1),
            cpu_seconds=round(cpu, 1),
            cpu_seconds_per_document=round(cpu / stats["documents"], 1),
            generations=llm.calls - calls,
        )
        stats["outcomes"] = dict(
            con.execute(
                "SELECT outcome, count(*) FROM induction_log l JOIN documents d USING (doc_id) "
                "WHERE l.structure = 'induced:llm' AND d.corpus = ? GROUP BY 1 ORDER BY 1",
                [corpus],
            ).fetchall()
        )
        stats["per_document"] = [
            dict(zip(("doc_id", "outcome", "structured", "schema_valid", "n_sections", "detail"), row))
            for row in con.execute(
                "SELECT doc_id, outcome, structured, schema_valid, n_sections, left(detail, 240) FROM induction_log l "
                "JOIN documents d USING (doc_id) WHERE l.structure = 'induced:llm' AND d.corpus = ? ORDER BY doc_id",
                [corpus],
            ).fetchall()
        ]
        stats["rerun_generations"] = _rerun(
            llm,
            lambda c=corpus: induce(
                con, "llm", c, llm, max_tokens=args.induce_max_tokens, show_progress=False, structured=structured
            ),
        )
        out[corpus] = stats
        print(json.dumps({"induction": {corpus: stats}}, default=str), flush=True)
    return out


def _rerun(llm, work) -> int:
    """Generations a rerun of ``work`` makes (0 when everything came from the cache)."""
    before = llm.calls
    work()
    return llm.calls - before


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="smollm2-135m-instruct")
    parser.add_argument("--qasper", type=int, default=20, help="QASPER papers (first N of the shared test file)")
    parser.add_argument("--wikipedia", type=int, default=10, help="Wikipedia articles (lowest page ids kept)")
    parser.add_argument("--stages", default="queries,contexts,induce", help="comma-separated subset of the stages")
    parser.add_argument(
        "--contexts-docs",
        type=int,
        default=10**6,
        help="A1 contexts for the fixed chunks of the first N documents per corpus (default: all)",
    )
    parser.add_argument("--induce-max-tokens", type=int, default=1024, help="cap on each structure answer")
    parser.add_argument(
        "--structured",
        choices=sorted(STRUCTURED),
        default="auto",
        help="llm.structured for the induction: on (JSON schema enforced), off (free text), auto",
    )
    parser.add_argument(
        "--dtype",
        choices=["float32", "bfloat16"],
        default=None,
        help="llm.transformers.dtype (default: the backend's auto, float32 on the CPU); bfloat16 is "
        "~3.7x faster here but its text depends on batching: label such figures",
    )
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads (1 is faster on a busy machine)")
    parser.add_argument("--commit-every", type=int, default=16)
    parser.add_argument("--data", default=os.environ.get("RAGWH_DATA", str(DATA)), help="the shared data directory")
    parser.add_argument("--warehouse", default=None)
    parser.add_argument("--out", default=None, help="write the JSON figures here too")
    parser.add_argument("--dtype-check", action="store_true", help="only compare float32 and bfloat16")
    args = parser.parse_args()
    started, cpu = time.perf_counter(), time.process_time()
    result = dtype_check(args) if args.dtype_check else run(args)
    result["total_seconds"] = round(time.perf_counter() - started, 1)
    result["total_cpu_seconds"] = round(time.process_time() - cpu, 1)
    text = json.dumps(result, indent=2, default=str)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
