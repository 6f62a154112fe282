"""vLLM's offline engine (optional extra: ``pip install -e '.[vllm]'``, needs a GPU).

One ``vllm.LLM`` is built lazily on the first batch; a batch goes through ``LLM.chat`` (the model's
chat template, as the OpenAI server applies it) with one ``SamplingParams`` per request carrying that
request's ``temperature``, ``top_p``, ``max_tokens`` and ``seed``, so results do not depend on how
requests are grouped into batches. Token counts come from the outputs (``len(prompt_token_ids)``,
``len(outputs[0].token_ids)``), the finish reason from ``outputs[0].finish_reason``.
"""
from __future__ import annotations

import importlib
from typing import Any, Sequence

from ingest.llm.backend import Completion, LLMBackend, LLMError, LLMRequest
from ingest.llm.config import ENV, LLMConfig
from ingest.llm.openai_http import finish_reason


def _import_vllm() -> Any:
    try:
        return importlib.import_module("vllm")
    except ImportError as exc:
        raise LLMError(
            "the vLLM backend needs the optional extra: pip install -e '.[vllm]' on a GPU machine "
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

    def _llm(self):
        if self._engine is None:
            kwargs = {"seed": self.config.seed, **dict(self.config.vllm)}
            self._engine = self._vllm.LLM(model=self.model, **kwargs)
        return self._engine

    def generate(self, requests: Sequence[LLMRequest]) -> list[Completion]:
        if not requests:
            return []
        params = [
            self._vllm.SamplingParams(
                temperature=r.sampling.temperature,
                top_p=r.sampling.top_p,
                max_tokens=r.sampling.max_tokens,
                seed=r.sampling.seed,
            )
            for r in requests
        ]
        conversations = [[dict(m) for m in r.messages] for r in requests]
        outputs = self._llm().chat(conversations, sampling_params=params, use_tqdm=True)
        if len(outputs) != len(requests):
            raise LLMError(f"vLLM returned {len(outputs)} outputs for {len(requests)} requests")
        return [Completion(out.outputs[0].text, finish_reason(out.outputs[0].finish_reason),
                           len(out.prompt_token_ids) if out.prompt_token_ids is not None else None,
                           len(out.outputs[0].token_ids)) for out in outputs]
