"""Any OpenAI-compatible server (vLLM serve, llama.cpp server, Ollama, hosted APIs) over HTTP.

``POST <base_url>/chat/completions`` with ``{"model", "messages", "temperature", "top_p",
"max_tokens", "seed"}``; the answer is ``choices[0].message.content``, its finish reason
``choices[0].finish_reason`` (``stop`` / ``length``; anything else, e.g. a server's ``eos``, reads as
``stop`` when the answer ended on its own, None when absent) and its token counts the response's
``usage.prompt_tokens`` / ``usage.completion_tokens`` (None when the server sends no usage). At most ``concurrency``
requests are in flight (a thread pool over one shared ``httpx.Client``). A request is retried on HTTP
5xx or 429, on a timeout and on a connection error, waiting ``backoff_s * 2**r`` seconds (capped at
``backoff_max_s``) before retry ``r``; any other 4xx fails at once with the server's message.
"""
from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Sequence

import httpx

from ingest.llm.backend import Completion, LLMBackend, LLMError, LLMRequest
from ingest.llm.config import ENV, LLMConfig


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
        headers = {"Content-Type": "application/json"}
        if config.api_key:
            headers["Authorization"] = f"Bearer {config.api_key}"
        self._client = httpx.Client(
            timeout=httpx.Timeout(config.timeout_s),
            headers=headers,
            limits=httpx.Limits(max_connections=config.concurrency, max_keepalive_connections=config.concurrency),
        )

    def generate(self, requests: Sequence[LLMRequest]) -> list[Completion]:
        if not requests:
            return []
        with ThreadPoolExecutor(max_workers=min(self.config.concurrency, len(requests))) as pool:
            return list(pool.map(self._one, requests))

    def _one(self, request: LLMRequest) -> Completion:
        s = request.sampling
        body = {
            "model": self.model,
            "messages": [dict(m) for m in request.messages],
            "temperature": s.temperature,
            "top_p": s.top_p,
            "max_tokens": s.max_tokens,
            "seed": s.seed,
        }
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
                if not retryable(response.status_code):
                    raise LLMError(f"{self.url} rejected item {request.item_id} ({request.prompt}): {last_problem} "
                                   f"(check {ENV['model']}, {ENV['api_key']} and the server's logs)")
            if attempt + 1 < attempts:
                self._sleep(min(self.config.backoff_s * 2 ** attempt, self.config.backoff_max_s))
        raise LLMError(f"{self.url} failed for item {request.item_id} ({request.prompt}) after {attempts} attempts: "
                       f"{last_problem} (is the server up at {ENV['base_url']}? raise timeout_s/max_retries in the "
                       "experiment config; completed items are cached, so a rerun resumes)")

    def _content(self, response: httpx.Response, request: LLMRequest) -> Completion:
        try:
            payload = response.json()
            choice = payload["choices"][0]
            content = choice["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise LLMError(f"{self.url} answered item {request.item_id} without choices[0].message.content "
                           f"({type(exc).__name__}): {response.text[:300]}") from exc
        if not isinstance(content, str):
            raise LLMError(f"{self.url} answered item {request.item_id} with non-text content: {content!r:.200}")
        reason = choice.get("finish_reason") if isinstance(choice, dict) else None
        usage = payload.get("usage") if isinstance(payload.get("usage"), dict) else {}
        return Completion(content, finish_reason(reason), _count(usage.get("prompt_tokens")),
                          _count(usage.get("completion_tokens")))

    def close(self) -> None:
        self._client.close()
