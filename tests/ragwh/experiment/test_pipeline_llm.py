"""The orchestrator's LLM stages against a real OpenAI-compatible server on 127.0.0.1: A1 contexts are
generated through the cache once, and a rerun makes no call and skips the stage."""

from __future__ import annotations

import dataclasses
import http.server
import io
import json
import threading

from rich.console import Console

from ragwh.experiment.config.chunking import LLMSpec, load_config
from ragwh.experiment.pipeline.chunking import Pipeline

CONTEXT = "This passage comes from a short demo paper and describes one of its methods."


class _Chat(http.server.BaseHTTPRequestHandler):
    requests: list[dict] = []

    def do_POST(self):  # noqa: N802 (http.server API)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        _Chat.requests.append(body)
        data = json.dumps({"choices": [{"index": 0, "message": {"role": "assistant", "content": CONTEXT}}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


def test_a1_contexts_stage_through_http_and_cache(warehouse_file, monkeypatch):
    for var in ("RAGWH_LLM_BACKEND", "RAGWH_LLM_BASE_URL", "RAGWH_LLM_MODEL", "RAGWH_LLM_REPLAY_ONLY"):
        monkeypatch.delenv(var, raising=False)
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Chat)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    _Chat.requests = []
    try:
        base = load_config(None)
        llm = LLMSpec(
            "openai",
            {
                "base_url": f"http://127.0.0.1:{httpd.server_address[1]}/v1",
                "model": "test-model",
                "max_retries": 0,
                "timeout_s": 30,
            },
        )
        config = dataclasses.replace(base, llm=llm, conditions=("A0", "A1", "A3"), contrasts=("C1",))
        runnable, skipped = config.runnable_conditions()
        assert runnable == ["A0", "A1", "A3"] and skipped == {}

        def stages(pipeline: Pipeline) -> list[tuple[str, str]]:
            try:
                pipeline.ingest()
                pipeline.queries()
                pipeline.induce()
                pipeline.chunk()
                pipeline.contexts(runnable)
                n_fixed, n_context = pipeline.con.execute(
                    "SELECT (SELECT count(*) FROM chunks WHERE chunkset = 'fixed'), "
                    "(SELECT count(*) FROM chunk_prefixes WHERE prefix_kind = 'llm_context' AND prefix = ?)",
                    [CONTEXT + "\n\n"],
                ).fetchone()
            finally:
                pipeline.close()
            assert n_fixed > 0 and n_context == n_fixed
            return [(s.stage, s.status) for s in pipeline.outcome.stages]

        console = Console(file=io.StringIO())
        first = stages(Pipeline(config, data=None, warehouse=warehouse_file, console=console))
        calls = len(_Chat.requests)
        assert first == [("ingest", "ran"), ("induce", "ran"), ("chunk", "ran"), ("contexts", "ran")]
        assert calls > 0 and {r["model"] for r in _Chat.requests} == {"test-model"}
        second = stages(Pipeline(config, data=None, warehouse=warehouse_file, console=console))
        assert second == [(s, "skipped") for s, _ in first]
        assert len(_Chat.requests) == calls  # no call on the rerun
    finally:
        httpd.shutdown()
        httpd.server_close()
