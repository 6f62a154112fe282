"""A real OpenAI-compatible HTTP server on 127.0.0.1 for tests: ``POST /v1/chat/completions``.

Answers come from a Python function of the request body (a test stand-in for a model, never a
result): a string (finish reason ``stop``, no ``usage``) or a dict with ``content`` and optionally
``finish_reason`` and ``usage`` (to script an answer cut at max_tokens and token counts). ``plan`` scripts the next responses: an ``int`` answers with that HTTP status and an error
body, a ``float`` sleeps that many seconds before answering normally. ``refuse_response_format``
answers every request that carries a ``response_format`` with HTTP 400, as a server without structured
output does. Every request body is recorded, and the largest number of requests in flight at once is tracked.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable


class ChatServer:
    def __init__(self, respond: Callable[[dict], str], *, delay_s: float = 0.0):
        self.respond = respond
        self.delay_s = delay_s
        self.plan: list[int | float] = []
        self.refuse_response_format = False
        self.bodies: list[dict] = []
        self.headers: list[dict] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:  # keep test output clean
                pass

            def do_POST(self) -> None:  # noqa: N802 (http.server API)
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                with server._lock:
                    server.bodies.append(body)
                    server.headers.append(dict(self.headers))
                    action = server.plan.pop(0) if server.plan else None
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                self._answered = False
                try:
                    if self.path != "/v1/chat/completions":
                        self._send(404, {"error": f"no route {self.path}"})
                        return
                    if server.refuse_response_format and "response_format" in body:
                        self._send(400, {"error": {"message": "unknown field response_format"}})
                        return
                    if isinstance(action, int):
                        self._send(action, {"error": {"message": f"scripted status {action}"}})
                        return
                    time.sleep(action if isinstance(action, float) else server.delay_s)
                    answer = server.respond(body)
                    answer = answer if isinstance(answer, dict) else {"content": answer}
                    payload = {
                        "id": "test",
                        "object": "chat.completion",
                        "model": body.get("model"),
                        "choices": [
                            {
                                "index": 0,
                                "finish_reason": answer.get("finish_reason", "stop"),
                                "message": {"role": "assistant", "content": answer["content"]},
                            }
                        ],
                    }
                    if "usage" in answer:
                        payload["usage"] = answer["usage"]
                    self._send(200, payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout test)
                finally:
                    self._done()

            def _done(self) -> None:
                # a request stops counting as in flight before its answer is written: once the client has
                # the answer it may send the next request at once, before this thread gets the CPU back
                with server._lock:
                    if not self._answered:
                        self._answered = True
                        server.in_flight -= 1

            def _send(self, status: int, payload: dict) -> None:
                data = json.dumps(payload).encode("utf-8")
                self._done()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    @property
    def n_requests(self) -> int:
        return len(self.bodies)

    def __enter__(self) -> "ChatServer":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)


def last_user_message(body: dict) -> str:
    return [m["content"] for m in body["messages"] if m["role"] == "user"][-1]
