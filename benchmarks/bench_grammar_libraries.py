"""Four grammar libraries for the transformers backend's structured output, on the packaged tiny model.

TINY-MODEL OUTPUT, NOT RESULTS: SmolLM2-135M exercises the libraries; the figures compare their cost
and behaviour on a CPU, not the quality of a structure.

Each library constrains the same greedy decoding loop (:func:`ingest.llm.decoding.decode`, float32,
one torch thread by default) to the structure-induction schema
(``ingest/llm/prompts/induce_structure.v1.schema.json``, bounds filled per document) on small
induction prompts: the first ``--docs`` papers of the bundled demo corpus (7-10 paragraphs, under
1,000 prompt tokens). Per library: the one-off tokenizer setup, the schema compilation per document,
the time spent computing masks and advancing the matcher per generated token, the generation wall
time, and what came out (finish reason, JSON that parses, schema-valid, a legal tiling as returned).
``none`` is the same loop unconstrained.

The libraries (pip wheels, all with CPU builds): llguidance (Rust), xgrammar (C++; its wheel
requires triton on Linux x86-64), outlines (its engine outlines-core, Rust, a regex index over the
vocabulary) and lm-format-enforcer (pure Python, a character-level parser walked over a token trie).
The ones that are not installed are reported as such.

    PYTHONPATH=. .venv/bin/python benchmarks/bench_grammar_libraries.py --out /tmp/grammar.json
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import resource
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np
import torch

from ingest.llm import LLMConfig, load_prompt
from ingest.llm.decoding import Row, decode
from ingest.structure.llm_inducer import numbered
from ingest.structure.llm_output import answer_violations, parse_answer
from warehouse.paths import PROJECT_ROOT

DEMO = PROJECT_ROOT / "ragwh" / "experiment" / "demo" / "demo.v0.3-format.json"
LIBRARIES = ("none", "llguidance", "xgrammar", "outlines", "lm-format-enforcer")
DISTRIBUTIONS = {
    "llguidance": "llguidance",
    "xgrammar": "xgrammar",
    "outlines": "outlines_core",
    "lm-format-enforcer": "lm-format-enforcer",
}


def bits_to_mask(bits: np.ndarray, logits: torch.Tensor) -> bool:
    """Apply a 32-bit-word token bitmask (llguidance and xgrammar share the layout) to ``logits``."""
    allowed = np.unpackbits(bits.view(np.uint8), bitorder="little")[: logits.shape[-1]].astype(bool)
    if not allowed.any():
        return False
    logits.masked_fill_(torch.from_numpy(~allowed), float("-inf"))
    return True


def ids_to_mask(ids, logits: torch.Tensor) -> bool:
    keep = torch.as_tensor(list(ids), dtype=torch.long)
    if keep.numel() == 0:
        return False
    kept = logits[keep].clone()
    logits.fill_(float("-inf"))
    logits[keep] = kept
    return True


class Timed:
    """A constraint proxy that adds the seconds spent in mask and accept to ``clock``."""

    def __init__(self, inner: Any, clock: list[float]):
        self.inner, self.clock = inner, clock

    def mask(self, logits):
        t = time.perf_counter()
        try:
            return self.inner.mask(logits)
        finally:
            self.clock[0] += time.perf_counter() - t

    def accept(self, token):
        t = time.perf_counter()
        try:
            self.inner.accept(token)
        finally:
            self.clock[0] += time.perf_counter() - t


# --- one factory per library: setup(tokenizer, vocab, eos) -> compile(schema) -> new constraint ---------------


def llguidance_factory(tokenizer, vocab: int, eos: set[int]) -> Callable[[dict], Callable[[], Any]]:
    from ingest.llm.grammar import SchemaGrammar

    grammar = SchemaGrammar(tokenizer, vocab, eos)

    def compile_(schema: dict):
        grammar.constraint(schema)  # compiles and caches the grammar
        return lambda: grammar.constraint(schema)

    return compile_


def xgrammar_factory(tokenizer, vocab: int, eos: set[int]):
    import xgrammar as xgr

    compiler = xgr.GrammarCompiler(
        xgr.TokenizerInfo.from_huggingface(tokenizer, vocab_size=vocab, stop_token_ids=sorted(eos))
    )

    class M:
        def __init__(self, compiled):
            self.matcher = xgr.GrammarMatcher(compiled)
            self.bitmask = xgr.allocate_token_bitmask(1, vocab)

        def mask(self, logits):
            self.matcher.fill_next_token_bitmask(self.bitmask)
            return bits_to_mask(self.bitmask[0].numpy(), logits)

        def accept(self, token):
            self.matcher.accept_token(token)

    def compile_(schema: dict):
        compiled = compiler.compile_json_schema(json.dumps(schema), any_whitespace=False)
        return lambda: M(compiled)

    return compile_


def outlines_factory(tokenizer, vocab: int, eos: set[int]):
    from outlines_core import Guide, Index, Vocabulary
    from outlines_core.json_schema import build_regex_from_schema

    (eos_id,) = sorted(eos)
    words: dict[str, list[int]] = {}
    for token, token_id in tokenizer.get_vocab().items():
        if token_id != eos_id:
            words.setdefault(tokenizer.convert_tokens_to_string([token]), []).append(token_id)
    vocabulary = Vocabulary(eos_id, words)

    class M:
        def __init__(self, index):
            self.guide = Guide(index)

        def mask(self, logits):
            return ids_to_mask(self.guide.get_tokens(), logits)

        def accept(self, token):
            self.guide.advance(token, return_tokens=False)

    def compile_(schema: dict):
        index = Index(build_regex_from_schema(json.dumps(schema), whitespace_pattern=""), vocabulary)
        return lambda: M(index)

    return compile_


def lmfe_factory(tokenizer, vocab: int, eos: set[int]):
    import sys

    import transformers.tokenization_utils_base

    # lm-format-enforcer 0.11.3 imports transformers.tokenization_utils, which transformers 5 removed; the
    # class it needs from there lives on in tokenization_utils_base
    sys.modules.setdefault("transformers.tokenization_utils", transformers.tokenization_utils_base)
    from lmformatenforcer import JsonSchemaParser, TokenEnforcer
    from lmformatenforcer.integrations.transformers import build_token_enforcer_tokenizer_data

    data = build_token_enforcer_tokenizer_data(tokenizer, vocab_size=vocab)

    class M:
        def __init__(self, schema):
            self.enforcer = TokenEnforcer(data, JsonSchemaParser(schema))
            self.tokens: list[int] = []

        def mask(self, logits):
            return ids_to_mask(self.enforcer.get_allowed_tokens(self.tokens).allowed_tokens, logits)

        def accept(self, token):
            self.tokens.append(token)

    def compile_(schema: dict):
        M(schema).enforcer.get_allowed_tokens([])  # builds the parser's first state
        return lambda: M(schema)

    return compile_


FACTORIES = {
    "llguidance": llguidance_factory,
    "xgrammar": xgrammar_factory,
    "outlines": outlines_factory,
    "lm-format-enforcer": lmfe_factory,
}


def demo_documents(n: int) -> list[tuple[str, list[str]]]:
    papers = json.loads(DEMO.read_text(encoding="utf-8"))
    docs = []
    for paper_id, paper in list(papers.items())[:n]:
        docs.append((paper_id, [p for s in paper["full_text"] for p in s["paragraphs"] if p.strip()]))
    return docs


def run(args) -> dict:
    import jsonschema

    from ingest.llm.transformers_local import TransformersBackend

    backend = TransformersBackend(LLMConfig(backend="transformers", transformers={"threads": args.threads}))
    lm, tokenizer, eos = backend.lm, backend.tokenizer, backend._eos()
    vocab = lm.config.vocab_size
    ask = load_prompt("induce_structure")
    docs = demo_documents(args.docs)
    prompts = []
    for doc_id, paras in docs:
        messages = ({"role": "user", "content": ask.render(n_paragraphs=str(len(paras)), paragraphs=numbered(paras))},)
        prompts.append((doc_id, len(paras), backend.prompt_ids(messages), ask.schema(n_paragraphs=len(paras))))
    out: dict = {
        "model": backend.model,
        "threads": args.threads,
        "max_tokens": args.max_tokens,
        "documents": [{"doc_id": d, "paragraphs": n, "prompt_tokens": len(ids)} for d, n, ids, _ in prompts],
        "note": "TINY-MODEL OUTPUT, NOT RESULTS",
        "libraries": {},
    }
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    for name in args.libraries.split(","):
        entry: dict = {}
        try:
            entry["version"] = importlib.metadata.version(DISTRIBUTIONS[name]) if name != "none" else None
            cpu0, t0 = time.process_time(), time.perf_counter()
            factory = FACTORIES[name](tokenizer, vocab, eos) if name != "none" else None
            entry["setup_seconds"] = round(time.perf_counter() - t0, 3)
        except ImportError as exc:
            out["libraries"][name] = {"installed": False, "error": str(exc)[:200]}
            continue
        except Exception as exc:  # a library that fails on this tokenizer is a finding, not a crash
            out["libraries"][name] = {"installed": True, "error": f"{type(exc).__name__}: {str(exc)[:300]}"}
            continue
        per_doc = []
        for doc_id, n, ids, schema in prompts:
            row: dict = {"doc_id": doc_id}
            clock = [0.0]
            try:
                t = time.perf_counter()
                make = factory(schema) if factory else None
                row["compile_seconds"] = round(time.perf_counter() - t, 4)
                constraint = Timed(make(), clock) if make else None
                t = time.perf_counter()
                [(tokens, finish)], _ = decode(
                    lm, [Row(ids, 0.0, 1.0, args.max_tokens, 0, constraint)], eos=eos, pad=pad
                )
                seconds = time.perf_counter() - t
            except Exception as exc:
                row["error"] = f"{type(exc).__name__}: {str(exc)[:300]}"
                per_doc.append(row)
                continue
            text = tokenizer.decode(tokens, skip_special_tokens=True)
            parsed = parse_answer(text)
            try:
                error = jsonschema.exceptions.best_match(
                    jsonschema.Draft202012Validator(schema).iter_errors(json.loads(text))
                )
                problem = None if error is None else f"{list(error.absolute_path)}: {error.message}"[:160]
            except ValueError as exc:
                problem = f"not JSON: {str(exc)[:120]}"
            valid = problem is None
            row.update(
                generated_tokens=len(tokens),
                finish=finish,
                seconds=round(seconds, 2),
                mask_ms_per_token=round(1000 * clock[0] / max(len(tokens), 1), 3),
                parses=parsed.sections is not None,
                schema_valid=valid,
                schema_problem=problem,
                legal_as_returned=not answer_violations(parsed, n),
                text=text[:400],
            )
            per_doc.append(row)
            print(json.dumps({name: row}), flush=True)
        entry["documents"] = per_doc
        entry["cpu_seconds"] = round(time.process_time() - cpu0, 1)
        out["libraries"][name] = entry
    out["peak_rss_mib"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--libraries", default=",".join(LIBRARIES))
    parser.add_argument("--docs", type=int, default=2, help="first N demo papers")
    parser.add_argument("--max-tokens", type=int, default=384)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    t0, c0 = time.perf_counter(), time.process_time()
    result = run(args)
    result.update(wall_seconds=round(time.perf_counter() - t0, 1), cpu_seconds=round(time.process_time() - c0, 1))
    text = json.dumps(result, indent=2)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
