"""Scripted answers for the scale benchmark's LLM strategies (S2, S3, S4, HyDE, Query2Doc): NOT a model.

The scale benchmark (:mod:`benchmarks.bench_scale`) sends the rewriting prompts to a real OpenAI-compatible
HTTP server on 127.0.0.1 (``tests/ingest/llm/chat_server.py``, the server the tests use) in a process of its
own (:class:`ScriptedServer`, as a real server would be: in the client's process its threads would queue for
the client's interpreter lock), through the project's ``openai`` backend, so the HTTP client, the cache
(``llm_calls``), parsing, the cosine filter, embedding the variants and searching them all run at scale; the
answers come from :class:`ScriptedAnswers`, a deterministic function of the prompt and the sampling seed,
never from a model. What it writes is shaped like each strategy's
answer, made of the question's words with about a third of them swapped for other words of the synthetic
vocabulary (drawn from ``sha256(question, seed, strategy)``), so variants are neither identical to the
question nor unrelated to it and most pass the cosine band:

* S2 (``sibling questions``), S3 (``in N different ways``): N lines, one question each;
* S4 (``comparison question``): one line;
* HyDE (``write a passage to answer the question``), Query2Doc (``passage that answers the given query``):
  one passage of ~60 words.

Every ``llm_calls`` row carries the model name :data:`MODEL`, so nothing it produces can pass for a result.
"""

from __future__ import annotations

import argparse
import hashlib
import re
import subprocess
import sys
from pathlib import Path

import numpy as np

MODEL = "scripted-scale-server (not a model)"
_N = re.compile(r"\bin (\d+) different ways|\bWrite (\d+) ")  # S3's "in $n different ways", S2's "Write $n ..."
#: (strategy, marker): the prompt a request carries (ingest/llm/prompts/rewrite_*.txt, every version)
KINDS = (
    ("S2", "sibling questions"),
    ("S3", "different ways"),
    ("S4", "comparison question"),
    ("HyDE", "to answer the question"),
    ("Q2D", "answers the given query"),
)


class ScriptedAnswers:
    """``answer(body)`` for :class:`tests.ingest.llm.chat_server.ChatServer`; ``vocabulary``: the corpus's words."""

    def __init__(self, vocabulary: list[str]):
        self.vocabulary = np.array(sorted(set(vocabulary)), dtype=object)

    def _variant(self, words: list[str], rng: np.random.Generator, length: int) -> str:
        picked = [words[i] for i in rng.integers(0, len(words), length)] if length > len(words) else list(words)
        swap = rng.random(len(picked)) < 1 / 3
        picked = [str(self.vocabulary[rng.integers(len(self.vocabulary))]) if s else w for w, s in zip(picked, swap)]
        return " ".join(picked)

    def __call__(self, body: dict) -> str:
        content = [m["content"] for m in body["messages"] if m["role"] == "user"][-1]
        query = re.split(r"\n(?:Question|Query): ", "\n" + content)[-1].split("\n")[0].strip()
        words = re.findall(r"\w+", query.lower()) or ["empty"]
        kind = next((k for k, marker in KINDS if marker in content), None)
        if kind is None:  # a prompt this script does not know: fail the call loudly, never answer it
            raise ValueError(f"scripted server: no scripted answer for prompt {content[:80]!r} (add it to KINDS)")
        digest = hashlib.sha256(f"{query}\x00{body.get('seed')}\x00{kind}".encode()).digest()
        rng = np.random.default_rng(int.from_bytes(digest[:8], "little"))
        if kind in ("S2", "S3"):
            n = int(next(g for g in _N.search(content).groups() if g))
            return "\n".join(self._variant(words, rng, len(words)).capitalize() + "?" for _ in range(n))
        if kind == "S4":
            return "How does " + self._variant(words, rng, len(words)) + " compare with the other one?"
        return " ".join(self._variant(words, rng, 12).capitalize() + "." for _ in range(5))


class ScriptedServer:
    """The scripted server in a child process (``python -m benchmarks.scale_llm --seed S``): ``base_url`` once
    it listens; on exit it is told to stop (its stdin closes) and ``n_requests`` is what it answered."""

    def __init__(self, seed: int, start_timeout_s: float = 60.0):
        import selectors

        root = Path(__file__).resolve().parent.parent
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "benchmarks.scale_llm", "--seed", str(seed)],
            cwd=root,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        with selectors.DefaultSelector() as sel:  # its first line, or give up after start_timeout_s
            sel.register(self._proc.stdout, selectors.EVENT_READ)
            line = self._proc.stdout.readline().strip() if sel.select(start_timeout_s) else ""
        if not line.startswith("http://"):
            self._stop(kill=True)
            raise RuntimeError(
                f"the scripted server did not start within {start_timeout_s:g} s (it printed {line!r}); "
                f"run it alone to see why: python -m benchmarks.scale_llm --seed {seed}"
            )
        self.base_url = line
        self.n_requests: int | None = None

    def _stop(self, kill: bool = False) -> str:
        if kill:
            self._proc.kill()
        try:
            out, _ = self._proc.communicate(timeout=30)  # closes its stdin: the server stops
        except subprocess.TimeoutExpired:
            self._proc.kill()
            out, _ = self._proc.communicate()
        return out or ""

    def __enter__(self) -> "ScriptedServer":
        return self

    def __exit__(self, *exc) -> None:
        out = self._stop().strip()
        self.n_requests = int(out) if out.isdigit() else None


def main() -> None:
    ap = argparse.ArgumentParser(description="the scale benchmark's scripted OpenAI-compatible server (not a model)")
    ap.add_argument("--seed", type=int, default=0, help="the benchmark's corpus seed (its vocabulary)")
    args = ap.parse_args()
    from benchmarks.bench_scale import _vocab
    from tests.ingest.llm.chat_server import ChatServer

    low, _ = _vocab(np.random.default_rng(args.seed))  # the vocabulary bench_scale.generate() drew first
    with ChatServer(ScriptedAnswers(low.tolist())) as server:
        print(server.base_url, flush=True)
        sys.stdin.read()  # until the benchmark closes our stdin
        print(server.n_requests, flush=True)


if __name__ == "__main__":
    main()
