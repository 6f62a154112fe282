"""In-process generation with Hugging Face transformers (optional extra ``local-llm``): CPU, CUDA or MPS.

The model (:mod:`ingest.llm.local_models`: a packaged name, a ``.gguf`` file, a model directory or a hub
id) is loaded lazily: the tokenizer when a prompt is first counted, the weights at the first batch; once
per process (every backend of the same model and files shares them: a run builds one per LLM stage).
Each request's messages go through the tokenizer's chat template (``add_generation_prompt=True``); a
model without one is an error. Requests that share a long prompt prefix (A1's document) are batched
together, the others by prompt length (:meth:`TransformersBackend._batches`), in batches of at most
``batch_size`` rows and ``max_batch_tokens`` cached positions (rows x (longest prompt + longest
completion)), decoded by
:func:`ingest.llm.decoding.decode`, which honours each request's temperature, top_p, max_tokens and seed.

Options (``llm.transformers`` in the experiment config): ``device`` (``auto``: cuda, then mps, then
cpu), ``dtype`` (``auto``: float32 on the CPU, bfloat16 on CUDA (float16 where bf16 is unsupported),
float16 on MPS; or ``float32`` | ``bfloat16`` | ``float16``), ``batch_size`` (64; measured on this project's CPU, 64-row batches decode 1.3x faster than 16-row ones),
``max_batch_tokens`` (32768), ``threads`` (torch CPU threads; default torch's own; 1 is faster on a
busy shared machine).

Structured output: a request with a ``schema`` is decoded under it, each token chosen among those the
schema's grammar allows (:mod:`ingest.llm.grammar`, llguidance; part of the ``local-llm`` extra). Without
the library the backend cannot enforce schemas (:meth:`schema_unsupported`).

The context window is the model config's ``max_position_embeddings``; a prompt that leaves no room
for one token is an error naming the item (the stages fit their prompts first, see
:mod:`ingest.llm.fit`), and the completion is capped at what the window leaves. Token counts are exact:
``prompt_tokens`` = prompt ids, ``completion_tokens`` = generated ids including the end token.
"""

from __future__ import annotations

import functools
import importlib.util
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from ingest.llm.backend import Completion, LLMBackend, LLMError, LLMRequest
from ingest.llm.config import LLMConfig
from ingest.llm.local_models import DEFAULT_LOCAL_MODEL, ModelSource, resolve_model
from warehouse.paths import install_hint

DTYPES = ("auto", "float32", "bfloat16", "float16")
GROUP_PREFIX = 256  # prompt tokens rows must share to be batched as one document's run
DEVICES = ("auto", "cpu", "cuda", "mps")


@dataclass(frozen=True)
class TransformersOptions:
    device: str = "auto"
    dtype: str = "auto"
    batch_size: int = 64
    max_batch_tokens: int = 32768
    threads: int | None = None

    @classmethod
    def parse(cls, raw: Mapping[str, Any]) -> "TransformersOptions":
        unknown = sorted(set(raw) - set(cls.__dataclass_fields__))
        if unknown:
            raise ValueError(f"unknown llm.transformers keys {unknown}; known: {sorted(cls.__dataclass_fields__)}")
        opts = cls(**raw)
        if opts.device not in DEVICES or opts.dtype not in DTYPES:
            raise ValueError(
                f"llm.transformers: device must be one of {', '.join(DEVICES)} and dtype one of {', '.join(DTYPES)}"
            )
        if opts.batch_size < 1 or opts.max_batch_tokens < 1 or (opts.threads is not None and opts.threads < 1):
            raise ValueError("llm.transformers: batch_size, max_batch_tokens and threads must be >= 1")
        return opts


def _require_extra() -> None:
    missing = [m for m in ("transformers", "gguf", "accelerate") if importlib.util.find_spec(m) is None]
    if missing:
        raise LLMError(f"the transformers backend needs {', '.join(missing)}: " + install_hint("local-llm"))


def pick_device(requested: str) -> str:
    import torch

    if requested != "auto":
        return requested
    if torch.cuda.is_available():
        return "cuda"
    if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
        return "mps"
    return "cpu"


def pick_dtype(requested: str, device: str):
    """The ``auto`` dtype per device. CPU: float32, not bfloat16: measured on an AMX/AVX512-BF16 Xeon
    (benchmarks/README.md), bf16 is 2-4x faster but its temperature-0 text differs from
    float32's and even depends on which requests share a batch, which breaks reproducibility."""
    import torch

    if requested != "auto":
        return getattr(torch, requested)
    if device == "cuda":
        return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    if device == "mps":
        return torch.float16
    return torch.float32


# --- what is loaded once per process ----------------------------------------------------------------------
# A GGUF file is parsed in Python by transformers for each of the config, the tokenizer and the weights (the
# packaged tiny model: seconds each on a CPU), and a run builds a backend per LLM stage; the parts loaded
# are kept per model source (and the file's size and modification time), so a process loads them once.
# The weights are never changed by generation (eval mode, no gradients).


def _stamp(source: ModelSource) -> tuple:
    """What identifies the loaded files' version: size and modification time of the .gguf file, or of the
    files of a model directory (a hub id: none)."""
    root = Path(source.path)
    files = [root / source.gguf_file] if source.gguf_file else (sorted(root.iterdir()) if root.is_dir() else [])
    return tuple((f.name, f.stat().st_size, f.stat().st_mtime_ns) for f in files if f.is_file())


@functools.lru_cache(maxsize=4)
def _config(source: ModelSource, stamp: tuple):
    from transformers import AutoConfig

    return AutoConfig.from_pretrained(source.path, **source.kwargs())


@functools.lru_cache(maxsize=4)
def _tokenizer(source: ModelSource, stamp: tuple):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(source.path, **source.kwargs())


@functools.lru_cache(maxsize=2)
def _model(source: ModelSource, stamp: tuple, dtype, device: str):
    from transformers import AutoModelForCausalLM

    return AutoModelForCausalLM.from_pretrained(source.path, dtype=dtype, **source.kwargs()).to(device).eval()


class TransformersBackend(LLMBackend):
    """Batched local generation (module doc)."""

    name = "transformers"

    def __init__(self, config: LLMConfig):
        _require_extra()
        self.model = config.model or DEFAULT_LOCAL_MODEL
        self.options = TransformersOptions.parse(dict(config.transformers))
        self.source: ModelSource = resolve_model(self.model)
        self._tokenizer = None
        self._lm = None
        self._window: int | None = None
        self._prefix = None  # the last batch's shared prompt prefix, kept across calls (the cache sends 64 at a time)
        self._grammar = None  # the tokenizer wrapped for structured output, built at the first schema

    # --- lazily loaded parts ------------------------------------------------------------------------
    def _load_error(self, what: str, exc: Exception) -> LLMError:
        return LLMError(
            f"model {self.model!r}: could not load its {what} from {self.source.path}"
            f"{' (' + self.source.gguf_file + ')' if self.source.gguf_file else ''}: "
            f"{type(exc).__name__}: {str(exc)[:300]} (a hub id needs the network or a filled HF cache; "
            "offline, give a local .gguf file, a model directory or the packaged smollm2-135m-instruct)"
        )

    @property
    def tokenizer(self):
        if self._tokenizer is None:
            try:
                tok = _tokenizer(self.source, _stamp(self.source))
            except (OSError, ValueError) as exc:
                raise self._load_error("tokenizer", exc) from exc
            if not getattr(tok, "chat_template", None):
                raise LLMError(
                    f"model {self.model!r} has no chat template (tokenizer chat_template is empty): the "
                    "LLM stages send chat messages; use an instruction-tuned model that ships one"
                )
            self._tokenizer = tok
        return self._tokenizer

    def context_window(self) -> int:
        if self._window is None:
            try:
                cfg = _config(self.source, _stamp(self.source))
            except (OSError, ValueError) as exc:
                raise self._load_error("config", exc) from exc
            self._window = int(cfg.max_position_embeddings)
        return self._window

    @property
    def lm(self):
        if self._lm is None:
            import torch

            if self.options.threads:
                torch.set_num_threads(self.options.threads)
            device = pick_device(self.options.device)
            try:
                self._lm = _model(self.source, _stamp(self.source), pick_dtype(self.options.dtype, device), device)
            except (OSError, ValueError) as exc:
                raise self._load_error("weights", exc) from exc
        return self._lm

    # --- the interface ----------------------------------------------------------------------------
    def prompt_ids(self, messages: Sequence[dict]) -> list[int]:
        text = self.tokenizer.apply_chat_template(
            [dict(m) for m in messages], tokenize=False, add_generation_prompt=True
        )
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def prompt_tokens(self, messages: Sequence[dict]) -> int:
        return len(self.prompt_ids(messages))

    def _eos(self) -> set[int]:
        ids = {self.tokenizer.eos_token_id}
        configured = self.lm.generation_config.eos_token_id
        ids.update(configured if isinstance(configured, list) else [configured])
        return {i for i in ids if i is not None}

    def schema_unsupported(self) -> str | None:
        from ingest.llm import grammar

        if not grammar.available():
            return f"the transformers backend needs {grammar.LIBRARY} for structured output: " + install_hint(
                "local-llm"
            )
        return None

    def _constraint(self, request: LLMRequest):
        if request.schema is None:
            return None
        problem = self.schema_unsupported()
        if problem is not None:
            raise LLMError(f"item {request.item_id} ({request.prompt}): {problem}")
        if self._grammar is None:
            from ingest.llm.grammar import SchemaGrammar

            self._grammar = SchemaGrammar(self.tokenizer, self.lm.config.vocab_size, self._eos())
        try:
            return self._grammar.constraint(request.schema)
        except ValueError as exc:
            raise LLMError(f"item {request.item_id} ({request.prompt}): {exc}") from exc

    def generate(self, requests: Sequence[LLMRequest]) -> list[Completion]:
        from ingest.llm.decoding import Row, decode

        if not requests:
            return []
        window = self.context_window()
        rows = []
        for r in requests:
            ids = self.prompt_ids(r.messages)
            room = window - len(ids)
            if room < 1:
                raise LLMError(
                    f"item {r.item_id} ({r.prompt}): the prompt is {len(ids)} tokens, model {self.model!r} "
                    f"holds {window}: shorten the input (the stages fit documents to the window)"
                )
            rows.append(
                Row(
                    ids,
                    r.sampling.temperature,
                    r.sampling.top_p,
                    min(r.sampling.max_tokens, room),
                    r.sampling.seed,
                    self._constraint(r),
                )
            )
        pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else self.tokenizer.eos_token_id
        eos = self._eos()
        out: list[Completion | None] = [None] * len(rows)
        for batch in self._batches(rows):
            decoded, self._prefix = decode(self.lm, [rows[i] for i in batch], eos=eos, pad=pad, prefix=self._prefix)
            for i, (ids, finish) in zip(batch, decoded):
                text = self.tokenizer.decode(ids, skip_special_tokens=True)
                out[i] = Completion(text, finish, len(rows[i].ids), len(ids) + (finish == "stop"))
        return out

    def _batches(self, rows: list) -> list[list[int]]:
        """Row indices cut into batches within ``batch_size`` and ``max_batch_tokens``.

        Rows are sorted by prompt ids; runs of rows whose prompts share at least ``GROUP_PREFIX``
        tokens with the run's first row (A1: one document's chunks) are batched together in that order
        (their batches share, and pass on, the document prefix); the other rows are batched by prompt
        length, so little of a batch is padding."""
        from ingest.llm.decoding import common_prefix

        order = sorted(range(len(rows)), key=lambda i: tuple(rows[i].ids))
        runs: list[list[int]] = []
        for i in order:
            if runs and common_prefix([rows[runs[-1][0]].ids, rows[i].ids]) >= GROUP_PREFIX:
                runs[-1].append(i)
            else:
                runs.append([i])
        loose = sorted((r[0] for r in runs if len(r) == 1), key=lambda i: (len(rows[i].ids), i))
        batches: list[list[int]] = []
        for run in [r for r in runs if len(r) > 1] + [loose]:
            current: list[int] = []
            longest = 0
            for i in run:
                need = len(rows[i].ids) + rows[i].max_new
                if current and (
                    len(current) >= self.options.batch_size
                    or (len(current) + 1) * max(longest, need) > self.options.max_batch_tokens
                ):
                    batches.append(current)
                    current, longest = [], 0
                current.append(i)
                longest = max(longest, need)
            if current:
                batches.append(current)
        return batches
