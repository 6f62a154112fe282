"""Any OpenAI-compatible server (vLLM serve, llama.cpp server, Ollama, hosted APIs) over HTTP.

``POST <base_url>/chat/completions`` with ``{"model", "messages", "temperature", "top_p",
"max_tokens", "seed"}``; the answer is ``choices[0].message.content``, its finish reason
``choices[0].finish_reason`` (``stop`` / ``length``; anything else, e.g. a server's ``eos``, reads as
``stop`` when the answer ended on its own, None when absent) and its token counts the response's
``usage.prompt_tokens`` / ``usage.completion_tokens`` (None when the server sends no usage). At most ``concurrency``
requests are in flight (a thread pool over one shared ``httpx.Client``). A request is retried on HTTP
5xx or 429, on a timeout and on a connection error, waiting ``backoff_s * 2**r`` seconds (capped at
``backoff_max_s``) before retry ``r``; any other 4xx fails at once with the server's message.

Structured output: a request with a ``schema`` also sends ``response_format: {"type": "json_schema",
"json_schema": {"name": <prompt name>, "schema": <schema>, "strict": true}}``. A server that answers such
a request with HTTP 400, 422 or 501 is taken to refuse structured output: the backend raises
:class:`~ingest.llm.backend.SchemaRefused` with the server's message, and from then on refuses every
structured request itself, without sending it (never is a structured request answered unconstrained);
the stage falls back to free-text requests (:mod:`ingest.llm.structured`).
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Sequence

import httpx

from ingest.llm.backend import Completion, LLMBackend, LLMError, LLMRequest, SchemaRefused
from ingest.llm.config import ENV, LLMConfig

#: statuses that, answering a request with a response_format, mean the server refuses structured output
SCHEMA_REFUSED = (400, 422, 501)


def retryable(status: int) -> bool:
    """HTTP statuses worth retrying: 429 (rate limited) and every 5xx."""
    return status == 429 or 500 <= status < 600


def finish_reason(reason: object) -> str | None:
    """The server's finish reason in this project's terms: ``length`` stays ``length``, any other
    string (``stop``, ``eos``, ``tool_calls``) means the answer ended on its own (``stop``), absent is None."""
    if not isinstance(reason, str) or not reason:
        return None
    return "length" if reason == "length" else "stop"


def _count(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


class OpenAIHTTPBackend(LLMBackend):
    """Chat completions against an OpenAI-compatible endpoint."""

    name = "openai"

    def __init__(self, config: LLMConfig, *, sleep: Callable[[float], None] = time.sleep):
        if not config.model:
            raise ValueError(f"no LLM model configured: set {ENV['model']} (or llm.model in the experiment config)")
        self.model = config.model
        self.config = config
        self.url = config.base_url.rstrip("/") + "/chat/completions"
        self._sleep = sleep
        self._schema_refused: str | None = None  # the server's answer once it refused a response_format
        headers = {"Content-Type": "application/json"}
        if config.api_key:
            headers["Authorization"] = f"Bearer {config.api_key}"
        self._client = httpx.Client(
            timeout=httpx.Timeout(config.timeout_s),
            headers=headers,
            limits=httpx.Limits(max_connections=config.concurrency, max_keepalive_connections=config.concurrency),
        )

    def schema_unsupported(self) -> str | None:
        return None  # servers are assumed to accept response_format; one that refuses it is met by a fallback

    def body(self, request: LLMRequest) -> dict:
        """The JSON body sent for ``request`` (module doc)."""
        s = request.sampling
        body = {
            "model": self.model,
            "messages": [dict(m) for m in request.messages],
            "temperature": s.temperature,
            "top_p": s.top_p,
            "max_tokens": s.max_tokens,
            "seed": s.seed,
        }
        if request.schema is not None:
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": request.prompt_name, "schema": dict(request.schema), "strict": True},
            }
        return body

    def generate(self, requests: Sequence[LLMRequest]) -> list[Completion]:
        if not requests:
            return []
        with ThreadPoolExecutor(max_workers=min(self.config.concurrency, len(requests))) as pool:
            return list(pool.map(self._one, requests))

    def _one(self, request: LLMRequest) -> Completion:
        if request.schema is not None and self._schema_refused is not None:  # never answer it unconstrained
            raise SchemaRefused(
                f"{self.url} refused response_format json_schema earlier ({self._schema_refused}); "
                f"item {request.item_id} ({request.prompt}) not sent with its schema"
            )
        body = self.body(request)
        attempts = self.config.max_retries + 1
        last_problem = ""
        for attempt in range(attempts):
            try:
                response = self._client.post(self.url, json=body)
            except (httpx.TimeoutException, httpx.TransportError) as exc:
                last_problem = f"{type(exc).__name__}: {exc}"
            else:
                if response.status_code == 200:
                    return self._content(response, request)
                last_problem = f"HTTP {response.status_code}: {response.text[:300]}"
                if "response_format" in body and response.status_code in SCHEMA_REFUSED:
                    self._schema_refused = " ".join(last_problem.split())[:200]
                    raise SchemaRefused(
                        f"{self.url} refused item {request.item_id} ({request.prompt}) with its "
                        f"JSON schema: {self._schema_refused}"
                    )
                if not retryable(response.status_code):
                    raise LLMError(
                        f"{self.url} rejected item {request.item_id} ({request.prompt}): {last_problem} "
                        f"(check {ENV['model']}, {ENV['api_key']} and the server's logs)"
                    )
            if attempt + 1 < attempts:
                self._sleep(min(self.config.backoff_s * 2**attempt, self.config.backoff_max_s))
        raise LLMError(
            f"{self.url} failed for item {request.item_id} ({request.prompt}) after {attempts} attempts: "
            f"{last_problem} (is the server up at {ENV['base_url']}? raise timeout_s/max_retries in the "
            "experiment config; completed items are cached, so a rerun resumes)"
        )

    def _content(self, response: httpx.Response, request: LLMRequest) -> Completion:
        try:
            payload = response.json()
            choice = payload["choices"][0]
            content = choice["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise LLMError(
                f"{self.url} answered item {request.item_id} without choices[0].message.content "
                f"({type(exc).__name__}): {response.text[:300]}"
            ) from exc
        if not isinstance(content, str):
            raise LLMError(f"{self.url} answered item {request.item_id} with non-text content: {content!r:.200}")
        reason = choice.get("finish_reason") if isinstance(choice, dict) else None
        usage = payload.get("usage") if isinstance(payload.get("usage"), dict) else {}
        return Completion(
            content, finish_reason(reason), _count(usage.get("prompt_tokens")), _count(usage.get("completion_tokens"))
        )

    def close(self) -> None:
        self._client.close()
