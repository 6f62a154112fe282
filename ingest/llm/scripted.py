"""A scripted stand-in backend FOR TESTS ONLY: it answers from a Python function, not from a model.

Nothing it produces is a result. Its ``llm_calls`` rows carry ``backend = 'scripted'`` so they can
never be mistaken for model output. ``respond`` returns the answer text (finish reason and token
counts then NULL: a script reads and writes no tokens) or a whole :class:`Completion` (to script an
answer cut at ``max_tokens``). With ``structured=True`` it claims to enforce schemas, so stages send
them and a test can check what was sent (the script itself is what keeps an answer to its schema).
"""

from __future__ import annotations

from typing import Callable, Sequence

from ingest.llm.backend import Completion, LLMBackend, LLMRequest


class ScriptedBackend(LLMBackend):
    """Answers each request with ``respond(request)`` and records every request it was asked."""

    name = "scripted"

    def __init__(
        self,
        respond: Callable[[LLMRequest], str | Completion],
        model: str = "scripted-test-model",
        structured: bool = False,
    ):
        self.model = model
        self._respond = respond
        self.structured = structured
        self.requests: list[LLMRequest] = []

    def schema_unsupported(self) -> str | None:
        return None if self.structured else super().schema_unsupported()

    def generate(self, requests: Sequence[LLMRequest]) -> list[Completion]:
        self.requests.extend(requests)
        answers = [self._respond(r) for r in requests]
        return [a if isinstance(a, Completion) else Completion(a) for a in answers]
