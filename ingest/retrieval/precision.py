"""Compute precision of the embedding and reranking models, and how it is named in the warehouse.

A config or the CLI asks for ``auto``, ``fp32`` or ``bf16`` (:data:`REQUESTABLE`); :func:`resolve_precision`
turns the request into what is computed (:data:`COMPUTED`):

* ``auto`` on CUDA -> ``fp16`` (the weights halved, as before this module existed);
* ``auto`` on a CPU -> ``bf16`` when the CPU has native bf16 matrix instructions
  (:func:`cpu_bf16_feature`: AMX-BF16 or AVX512-BF16 on x86, the BF16 extension on ARM) AND the
  model is known to be an encoder (:func:`is_encoder_config`), else ``fp32``;
* ``fp32`` / ``bf16`` -> exactly that (``bf16`` on a CPU without the instructions is correct but slow).

``bf16`` is ``torch.autocast(device, dtype=torch.bfloat16)`` around the model's forward pass
(matrix products in bf16, LayerNorm / softmax / pooling in fp32; weights stay fp32), so vectors
and scores differ from fp32 ones in the last bits only (cosine to fp32 >= 0.9999 on MiniLM).

Vectors (and reranker scores) from different precisions are different data. The precision is part
of the name stored in ``embeddings.embedder`` / ``runs.embedder`` / ``runs.reranker`` (and every
mart keyed by them): :func:`stored_name` appends ``@bf16`` or ``@fp16``; fp32 keeps the bare model
name (so vectors stored before precisions existed, all fp32, keep their key). A name that already
carries a suffix (``all-MiniLM-L6-v2@bf16``) asks for that precision explicitly (:func:`split_name`).
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

REQUESTABLE = ("auto", "fp32", "bf16")
COMPUTED = ("fp32", "bf16", "fp16")
SEPARATOR = "@"

#: ``model_type`` values of encoder-only transformer architectures (config.json).
ENCODER_MODEL_TYPES = frozenset(
    {
        "albert",
        "bert",
        "camembert",
        "deberta",
        "deberta-v2",
        "distilbert",
        "electra",
        "ernie",
        "luke",
        "megatron-bert",
        "mobilebert",
        "modernbert",
        "mpnet",
        "new",
        "nomic_bert",
        "roberta",
        "xlm",
        "xlm-roberta",
        "xlm-roberta-xl",
    }
)
#: x86 ``/proc/cpuinfo`` flags (and the ARM feature) that give native bf16 matrix products.
BF16_CPU_FLAGS = ("amx_bf16", "avx512_bf16", "bf16")


class PrecisionError(ValueError):
    """A precision that cannot be used as asked; the message says what to pass instead."""


def split_name(name: str) -> tuple[str, str | None]:
    """``('model', 'bf16')`` for ``'model@bf16'``; ``(name, None)`` when ``name`` has no precision suffix."""
    base, sep, suffix = name.rpartition(SEPARATOR)
    if sep and base and suffix in COMPUTED:
        return base, suffix
    return name, None


def stored_name(model_name: str, precision: str) -> str:
    """The warehouse key of ``model_name`` computed in ``precision``: bare for fp32, else ``model@precision``."""
    if precision not in COMPUTED:
        raise PrecisionError(f"precision {precision!r} is not one of {', '.join(COMPUTED)}")
    base, _ = split_name(model_name)
    return base if precision == "fp32" else f"{base}{SEPARATOR}{precision}"


def _cpuinfo_flags(path: str = "/proc/cpuinfo") -> set[str]:
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return set()
    flags: set[str] = set()
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip().lower() in ("flags", "features"):
            flags.update(value.split())
    return flags


@functools.cache
def cpu_bf16_feature() -> str | None:
    """The CPU feature that makes bf16 matrix products native (``'amx_bf16'``, ``'avx512_bf16'``,
    ``'bf16'`` on ARM), or None.

    Asks torch's own CPU probes first (``torch.cpu._is_amx_tile_supported`` /
    ``_is_avx512_bf16_supported``: cpuinfo via CPUID, also right inside containers), then the
    ``/proc/cpuinfo`` flags (where those private probes are missing or say no)."""
    import torch

    probes = (("amx_bf16", "_is_amx_tile_supported"), ("avx512_bf16", "_is_avx512_bf16_supported"))
    for feature, probe in probes:
        check = getattr(torch.cpu, probe, None)
        try:
            if check is not None and check():
                return feature
        except Exception:  # a probe that cannot run says nothing; the flags below decide
            pass
    flags = _cpuinfo_flags()
    return next((f for f in BF16_CPU_FLAGS if f in flags), None)


def is_encoder_config(config: dict[str, Any]) -> bool:
    """True for an encoder-only transformer config: its ``model_type`` is an encoder architecture
    (:data:`ENCODER_MODEL_TYPES`) and it is neither a decoder nor an encoder-decoder."""
    if config.get("is_decoder") or config.get("is_encoder_decoder"):
        return False
    return str(config.get("model_type", "")).lower() in ENCODER_MODEL_TYPES


def encoder_from_source(source: str) -> bool | None:
    """Whether the model at ``source`` (a local directory or a hub id already in the local Hugging
    Face cache) is an encoder, read from its ``config.json``; None when the config cannot be found
    (never downloads)."""
    path = Path(source).expanduser()
    config_file: Path | None = path / "config.json" if path.is_dir() else None
    if config_file is None or not config_file.is_file():
        config_file = None
        try:
            from huggingface_hub import try_to_load_from_cache

            cached = try_to_load_from_cache(source, "config.json")
            config_file = Path(cached) if isinstance(cached, str) else None
        except Exception:  # not a hub id, or no cache: unknown
            config_file = None
    if config_file is None:
        return None
    try:
        return is_encoder_config(json.loads(config_file.read_text(encoding="utf-8")))
    except (OSError, ValueError):
        return None


def resolve_precision(requested: str, device: str, encoder: bool | None) -> str:
    """What is computed for ``requested`` on ``device`` (module doc); ``encoder`` None = unknown (fp32).
    ``fp16`` is accepted too (a stored name ``model@fp16`` asks for it; it loads on CUDA only)."""
    if requested not in REQUESTABLE + ("fp16",):
        raise PrecisionError(f"precision {requested!r} is not one of {', '.join(REQUESTABLE)}")
    if requested != "auto":
        return requested
    if device.startswith("cuda"):
        return "fp16"
    return "bf16" if encoder and cpu_bf16_feature() else "fp32"


def apply_precision(model, precision: str, device: str):
    """Make ``model`` (a sentence-transformers model or cross-encoder, an ``nn.Module``) compute in
    ``precision`` on ``device``: fp16 halves the weights (CUDA only), bf16 runs every forward pass
    under ``torch.autocast(device_type, dtype=torch.bfloat16)``, fp32 leaves it alone. Returns it."""
    import torch

    device_type = torch.device(device).type
    if precision == "fp16":
        if device_type != "cuda":
            raise PrecisionError(f"fp16 needs a CUDA device, got {device!r} (use precision fp32 or bf16)")
        return model.half()
    if precision == "bf16":
        forward = model.forward

        @functools.wraps(forward)
        def autocast_forward(*args, **kwargs):
            with torch.autocast(device_type, dtype=torch.bfloat16):
                return forward(*args, **kwargs)

        model.forward = autocast_forward
        return model
    if precision != "fp32":
        raise PrecisionError(f"precision {precision!r} is not one of {', '.join(COMPUTED)}")
    return model
