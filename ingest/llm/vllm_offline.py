"""vLLM's offline engine (optional extra: ``pip install 'ragwarehouse[vllm]'``, needs a GPU).

One ``vllm.LLM`` is built lazily on the first batch; a batch goes through ``LLM.chat`` (the model's
chat template, as the OpenAI server applies it) with one ``SamplingParams`` per request carrying that
request's ``temperature``, ``top_p``, ``max_tokens`` and ``seed``, so results do not depend on how
requests are grouped into batches. Token counts come from the outputs (``len(prompt_token_ids)``,
``len(outputs[0].token_ids)``), the finish reason from ``outputs[0].finish_reason``.

Structured output: a request with a ``schema`` gets it in its ``SamplingParams`` as
``structured_outputs=StructuredOutputsParams(json=schema)`` (vLLM's structured-output API; its
grammar backend, xgrammar or guidance, is vLLM's choice), or ``guided_decoding=GuidedDecodingParams(json=schema)``
on releases that predate it. A vLLM with neither cannot enforce schemas (:meth:`schema_unsupported`).
"""

from __future__ import annotations

import importlib
from typing import Any, Sequence

from ingest.llm.backend import Completion, LLMBackend, LLMError, LLMRequest
from ingest.llm.config import ENV, LLMConfig
from ingest.llm.openai_http import finish_reason
from warehouse.paths import install_hint


def _schema_param() -> tuple[str, Any] | None:
    """(SamplingParams keyword, parameter class) of this vLLM's structured output, None without one."""
    try:
        module = importlib.import_module("vllm.sampling_params")
    except ImportError:
        return None
    for keyword, name in (
        ("structured_outputs", "StructuredOutputsParams"),
        ("guided_decoding", "GuidedDecodingParams"),
    ):
        cls = getattr(module, name, None)
        if cls is not None:
            return keyword, cls
    return None


def _import_vllm() -> Any:
    try:
        return importlib.import_module("vllm")
    except ImportError as exc:
        raise LLMError(
            f"the vLLM backend needs the optional extra: {install_hint('vllm')} on a GPU machine "
            f"(or set {ENV['backend']}=openai and point {ENV['base_url']} at a served model)"
        ) from exc


class VLLMBackend(LLMBackend):
    """Batched generation in-process with ``vllm.LLM``."""

    name = "vllm"

    def __init__(self, config: LLMConfig):
        if not config.model:
            raise ValueError(f"no LLM model configured: set {ENV['model']} (a Hugging Face id or a local path)")
        self.model = config.model
        self.config = config
        self._vllm = _import_vllm()
        self._engine = None
        self._schema_param = _schema_param()

    def _llm(self):
        if self._engine is None:
            kwargs = {"seed": self.config.seed, **dict(self.config.vllm)}
            self._engine = self._vllm.LLM(model=self.model, **kwargs)
        return self._engine

    def schema_unsupported(self) -> str | None:
        if self._schema_param is None:
            return (
                "this vLLM has no structured outputs (neither StructuredOutputsParams nor GuidedDecodingParams in "
                "vllm.sampling_params): upgrade vLLM"
            )
        return None

    def sampling_params(self, request: LLMRequest) -> Any:
        """The ``SamplingParams`` of one request (module doc)."""
        extra = {}
        if request.schema is not None:
            if self._schema_param is None:
                raise LLMError(f"item {request.item_id} ({request.prompt}): {self.schema_unsupported()}")
            keyword, cls = self._schema_param
            extra[keyword] = cls(json=dict(request.schema))
        s = request.sampling
        return self._vllm.SamplingParams(
            temperature=s.temperature, top_p=s.top_p, max_tokens=s.max_tokens, seed=s.seed, **extra
        )

    def generate(self, requests: Sequence[LLMRequest]) -> list[Completion]:
        if not requests:
            return []
        params = [self.sampling_params(r) for r in requests]
        conversations = [[dict(m) for m in r.messages] for r in requests]
        outputs = self._llm().chat(conversations, sampling_params=params, use_tqdm=True)
        if len(outputs) != len(requests):
            raise LLMError(f"vLLM returned {len(outputs)} outputs for {len(requests)} requests")
        return [
            Completion(
                out.outputs[0].text,
                finish_reason(out.outputs[0].finish_reason),
                len(out.prompt_token_ids) if out.prompt_token_ids is not None else None,
                len(out.outputs[0].token_ids),
            )
            for out in outputs
        ]
