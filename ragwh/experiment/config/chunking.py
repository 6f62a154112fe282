"""Experiment configurations: one YAML file under ``experiments/`` fixes everything a run needs.

A config names the corpora and their source files (relative to the data directory), the embedders
(exactly one marked ``strong``: the primary cell's embedder), the rerankers, the structure inducer,
the LLM backend (or none; ``llm.backend: transformers`` with ``model: smollm2-135m-instruct`` runs the
packaged tiny model offline, see ``experiments/demo-llm.yml``), the conditions and contrasts to run, the retrieval depth ``k``, the
bootstrap (``B`` replicates, ``seed``) and the pre-registered primary cell. Validation is strict:
an unknown key, a wrong type (a boolean is not a number), a key or a list entry given twice raises
:class:`ConfigError` naming the file and the dotted key.

Example (``experiments/cpu.yml``)::

    name: cpu
    corpora:
      - name: qasper
        loader: qasper
        sources: [qasper/qasper_test_more_shared.v0.3-format.json]
    embedders:
      - {model: all-MiniLM-L6-v2, strong: true}
    rerankers: []
    inducer: texttiling
    llm: {backend: none}
    conditions: [A0, A2, A3-d1, A3-d2, A3, A4, G2, G3-d1, G3-d2, G3, G4, P]
    contrasts: [C2, C3, C4]
    k: 50
    bootstrap: {B: 10000, seed: 20260710}
    primary: {metric: cov-nDCG@10, embedder: strong, reranker: none}
    limit: null

``retrievers`` (default ``[dense]``): the first-stage systems; ``[dense, bm25]`` also ranks every flat
condition's texts with BM25 (:mod:`ingest.retrieval.bm25`), stored under the system name ``bm25`` in
the ``embedder`` column, with its parameters in ``bm25:`` (``name``, ``k1`` 0.9, ``b`` 0.4, ``method``
lucene, ``stopwords`` english, ``stemmer`` porter; recorded in ``run_manifest.system_params``).
``contrasts`` may also declare contrasts between any two systems or conditions: a mapping
``{name: dense-vs-bm25, treatment: A3@all-MiniLM-L6-v2, control: A3@bm25}`` (an arm is ``CONDITION`` or
``CONDITION@SYSTEM``, the system a stored embedder name without or with its precision suffix, ``bm25``
or an imported run's name; without ``@`` both arms are read in every cell), computed with the same
document-clustered bootstrap as C1-C4 and Holm-adjusted within their own family (``declared``) per
cell (dbt var ``declared_contrasts``).

``precision`` (top level, and per embedder / reranker to override it): ``auto`` (default: bf16 on a
CPU with native bf16 instructions for an encoder, fp16 on CUDA, else fp32), ``fp32`` or ``bf16``
(:mod:`ingest.retrieval.precision`; the stored embedder / reranker names carry the precision).

``engine`` (``local`` | ``ray``), ``ray:`` and ``max_memory_fraction``: where the model-bound work runs (with
``ray``: the embedding job, the cross-encoder scoring, and the LLM stages' generation when ``llm.backend`` is
``vllm`` or ``transformers``) and how much memory a job may take (:mod:`.engine`).

Shared with the rewriting study's configs: the error type and typed access to the parsed YAML
(:mod:`.reader`) and the ``llm:`` block (:mod:`.llm`).
"""

from __future__ import annotations

import csv
import os
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from ingest.llm.yamlfile import load_yaml
from ragwh.experiment.config.bootstrap_cost import refuse_costly
from ragwh.experiment.config.engine import ENGINE_KEYS, parse_engine
from ragwh.experiment.config.llm import LLMSpec, parse_llm  # noqa: F401 (re-exported)
from ragwh.experiment.config.reader import ConfigError, _model_name, _Reader, yaml_where  # noqa: F401 (re-exported)
from ragwh.experiment.config.systems import RETRIEVERS, DeclaredContrast, bm25_settings, declared_contrast
from udfs.metrics.registry import registered_metrics
from warehouse.paths import PROJECT_ROOT

EXPERIMENTS_DIR = PROJECT_ROOT / "experiments"
DEFAULT_CONFIG = EXPERIMENTS_DIR / "default.yml"
#: Loaders the orchestrator knows (``corpora[].loader``).
LOADERS = ("qasper", "wikipedia", "beir", "hotpotqa")
#: Inducers with an implementation (``inducer``); ``llm`` needs an LLM backend.
INDUCERS = ("texttiling", "llm")
LLM_BACKENDS = ("none", "openai", "vllm", "transformers")
#: Precisions a config may ask for (``precision``, ``embedders[].precision``, ``rerankers[].precision``).
PRECISIONS = ("auto", "fp32", "bf16")
#: Conditions whose chunk texts come from an LLM stage: not runnable without a backend.
LLM_CONDITIONS = {
    "A1": "A1 needs LLM-written chunk contexts and no LLM backend is configured "
    "(llm.backend: none; set llm.backend or RAGWH_LLM_BACKEND to run it)"
}
#: Where the demo corpus ships (package data).
DEMO_PACKAGE = "ragwh.experiment.demo"


@dataclass(frozen=True)
class CorpusSpec:
    name: str
    loader: str
    sources: tuple[str, ...]
    options: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class EmbedderSpec:
    """``name`` (= ``model``) names the model; ``embeddings.embedder`` and ``runs.embedder`` hold it
    with the precision suffix of ``precision`` resolved on the machine (auto | fp32 | bf16)."""

    name: str
    model: str
    strong: bool
    precision: str = "auto"


@dataclass(frozen=True)
class RerankerSpec:
    """``name`` (= ``model``) names the cross-encoder; ``runs.reranker`` holds it with the precision
    suffix of ``precision`` (auto | fp32 | bf16)."""

    name: str
    model: str
    precision: str = "auto"


@dataclass(frozen=True)
class PrimaryCell:
    metric: str
    embedder: str  # resolved to the strong embedder's name
    reranker: str
    corpus: str | None = None


@dataclass(frozen=True)
class ExperimentConfig:
    """A validated experiment. ``source_file`` is where it was read from."""

    name: str
    description: str
    demo: bool
    corpora: tuple[CorpusSpec, ...]
    embedders: tuple[EmbedderSpec, ...]
    rerankers: tuple[RerankerSpec, ...]
    inducer: str
    llm: LLMSpec
    conditions: tuple[str, ...]
    contrasts: tuple[str, ...]
    k: int
    bootstrap_b: int
    bootstrap_seed: int
    primary: PrimaryCell
    limit: int | None
    source_file: Path
    precision: str = "auto"  # the default of every model; also the TextTiling inducer's paragraph vectors
    retrievers: tuple[str, ...] = ("dense",)
    bm25: Any = None  # ingest.retrieval.bm25.BM25Settings when "bm25" is among the retrievers
    declared: tuple[DeclaredContrast, ...] = ()
    engine: str = "local"  # where the model-bound work runs (.engine)
    ray: Any = None  # ingest.retrieval.ray_engine.RaySettings with engine ray
    max_memory_fraction: float = 0.8

    @property
    def strong_embedder(self) -> EmbedderSpec:
        return next(e for e in self.embedders if e.strong)

    def precision_of(self, model: str) -> str:
        """The precision asked for ``model`` (a configured embedder's or reranker's), else the default."""
        return next((s.precision for s in (*self.embedders, *self.rerankers) if s.model == model), self.precision)

    def runnable_conditions(self) -> tuple[list[str], dict[str, str]]:
        """Split the configured conditions into (runnable, {not runnable: reason})."""
        runnable: list[str] = []
        skipped: dict[str, str] = {}
        for condition in self.conditions:
            if condition in LLM_CONDITIONS and self.llm.backend == "none":
                skipped[condition] = LLM_CONDITIONS[condition]
            else:
                runnable.append(condition)
        return runnable, skipped

    def dbt_vars(self) -> dict[str, Any]:
        """The dbt ``--vars`` this experiment fixes (inducer, primary cell, bootstrap, conditions)."""
        return {
            "inducer": self.inducer,
            "primary_metric": self.primary.metric,
            "primary_embedder": self.primary.embedder,
            "primary_reranker": self.primary.reranker,
            "bootstrap_b": self.bootstrap_b,
            "bootstrap_seed": self.bootstrap_seed,
            "k": self.k,
            "declared_contrasts": [d.var() for d in self.declared],
        }

    def resolve_sources(self, corpus: CorpusSpec, data: Path | None) -> list[Path]:
        """Absolute source files of ``corpus``: demo sources from package data, others under ``data``.

        Raises :class:`ConfigError` when a file is missing, saying how to point at the data."""
        if self.demo:
            root = Path(str(resources.files(DEMO_PACKAGE)))
        elif data is None:
            raise ConfigError(
                f"{self.source_file}: corpus {corpus.name!r} reads files relative to a data directory; "
                "pass --data DIR or set RAGWH_DATA (e.g. RAGWH_DATA=../shared/data), "
                "or download QASPER with `ragwh fetch qasper --data DIR`"
            )
        else:
            root = data
        paths = [root / s for s in corpus.sources]
        missing = [str(p) for p in paths if not p.is_file()]
        if missing:
            raise ConfigError(
                f"{self.source_file}: corpora[{corpus.name}].sources: file(s) not found: {', '.join(missing)} "
                f"(data directory {root}; point --data / RAGWH_DATA at the directory holding them)"
            )
        return paths


_TOP_KEYS = {
    "name",
    "description",
    "demo",
    "corpora",
    "embedders",
    "rerankers",
    "inducer",
    "llm",
    "conditions",
    "contrasts",
    "k",
    "bootstrap",
    "primary",
    "limit",
    "precision",
    "retrievers",
    "bm25",
    *ENGINE_KEYS,
}

_REQUIRED = ("name", "corpora", "embedders", "conditions", "contrasts")


def _seed_column(file: str, column: str) -> list[str]:
    with open(PROJECT_ROOT / "seeds" / file, newline="", encoding="utf-8") as handle:
        return [row[column] for row in csv.DictReader(handle)]


def known_conditions() -> list[str]:
    """Conditions defined in ``seeds/conditions.csv`` (the only place a condition lives)."""
    return _seed_column("conditions.csv", "condition")


def known_contrasts() -> dict[str, tuple[str, str]]:
    """Contrasts of ``seeds/contrast_family.csv``: name -> (treatment, control)."""
    with open(PROJECT_ROOT / "seeds" / "contrast_family.csv", newline="", encoding="utf-8") as handle:
        return {r["contrast"]: (r["treatment"], r["control"]) for r in csv.DictReader(handle)}


def known_metrics() -> list[str]:
    """Metric names ``query_metrics`` produces (both levels): ``seeds/metric_registry.csv``."""
    return list(registered_metrics())


def deepest_cutoff() -> tuple[int, str]:
    """(rank, metric) of the deepest rank cutoff among :func:`known_metrics` (``R@50``: 50; the token
    budgets of ``TBC@N`` are not ranks): a run must keep at least that many chunks per query."""
    import re

    cutoffs = [
        (int(m.group(1)), name)
        for name in known_metrics()
        if not name.startswith("TBC")
        for m in [re.search(r"@(\d+)$", name)]
        if m
    ]
    return max(cutoffs)


def config_file(path: str | os.PathLike | None = None) -> Path:
    """The experiment YAML a ``--config`` names: the file itself (relative to the current directory);
    else, for a relative path that is not there, the bundled experiment it names (``experiments/cpu.yml``,
    ``cpu.yml`` or ``cpu``: what an installed ``ragwh`` run outside a checkout finds); no path: the demo."""
    if not path:
        return DEFAULT_CONFIG
    file = Path(path).expanduser()
    if not file.is_file() and not file.is_absolute():
        for candidate in (PROJECT_ROOT / file, EXPERIMENTS_DIR / file, EXPERIMENTS_DIR / f"{file}.yml"):
            if candidate.is_file():
                return candidate
    return file.resolve()


def load_config(path: str | os.PathLike | None = None, overrides: dict[str, Any] | None = None) -> ExperimentConfig:
    """Read and validate an experiment YAML (default: ``experiments/default.yml``, the demo), with the
    command line's ``overrides`` applied (:mod:`ragwh.experiment.config.overrides`)."""
    file = config_file(path)
    if not file.is_file():
        bundled = ", ".join(sorted(p.stem for p in EXPERIMENTS_DIR.glob("*.yml")))
        raise ConfigError(f"{file}: config file not found (bundled experiments in {EXPERIMENTS_DIR}: {bundled})")
    try:
        raw = load_yaml(file.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise ConfigError(f"{file}: not valid YAML{yaml_where(exc)}") from exc
    from ragwh.experiment.config.overrides import apply_overrides

    return parse_config(apply_overrides(raw, overrides), file)


def parse_config(raw: Any, file: Path) -> ExperimentConfig:
    """Validate an already-parsed YAML mapping (see :func:`load_config`)."""
    r = _Reader(file)
    if isinstance(raw, dict) and "study" in raw:  # study: rewriting is read by rewriting_config.load_experiment
        raise r.fail(
            "study",
            f"{raw['study']!r} configs are run with `ragwh run --config {file.name}` "
            "(ragwh/experiment/config/rewriting.py), not read as a chunking experiment",
        )
    raw = r.mapping(raw, "", _TOP_KEYS)
    for key in _REQUIRED:
        if key not in raw:
            raise r.fail(key, "required key missing")

    demo = raw.get("demo", False)
    if not isinstance(demo, bool):
        raise r.fail("demo", f"expected true/false, got {demo!r}")

    def corpus_spec(key: str, c: dict) -> CorpusSpec:
        sources = r.strings(c["sources"], f"{key}.sources")
        if not sources:
            raise r.fail(f"{key}.sources", "expected at least one source file")
        options = c.get("options", {}) or {}
        if not isinstance(options, dict):
            raise r.fail(f"{key}.options", "expected a mapping")
        return CorpusSpec(
            r.string(c["name"], f"{key}.name"),
            r.choice(c["loader"], f"{key}.loader", LOADERS),
            tuple(sources),
            dict(options),
        )

    corpora = r.corpora(raw["corpora"], corpus_spec)
    names = [c.name for c in corpora]

    if not isinstance(raw["embedders"], list) or not raw["embedders"]:
        raise r.fail("embedders", "expected a non-empty list of embedders")
    precision = r.choice(raw.get("precision", "auto"), "precision", PRECISIONS)
    embedders = []
    for i, e in enumerate(raw["embedders"]):
        key = f"embedders[{i}]"
        e = r.mapping(e, key, {"model", "strong", "precision"})
        if "model" not in e:
            raise r.fail(f"{key}.model", "required key missing (a registered name, hub id or local path)")
        strong = e.get("strong", False)
        if not isinstance(strong, bool):
            raise r.fail(f"{key}.strong", f"expected true/false, got {strong!r}")
        model = r.string(e["model"], f"{key}.model")
        _model_name(r, f"{key}.model", model, "embedder")
        embedders.append(
            EmbedderSpec(model, model, strong, r.choice(e.get("precision", precision), f"{key}.precision", PRECISIONS))
        )
    strong = [e.name for e in embedders if e.strong]
    if len(strong) != 1:
        raise r.fail("embedders", f"exactly one embedder must have 'strong: true' (found {len(strong)})")

    rerankers = []
    for i, e in enumerate(raw.get("rerankers") or []):
        key = f"rerankers[{i}]"
        e = r.mapping(e, key, {"model", "precision"})
        if "model" not in e:
            raise r.fail(f"{key}.model", "required key missing (a cross-encoder name, hub id or local path)")
        model = r.string(e["model"], f"{key}.model")
        if model == "none":
            raise r.fail(f"{key}.model", "'none' is reserved for first-stage runs")
        _model_name(r, f"{key}.model", model, "reranker")
        rerankers.append(
            RerankerSpec(model, model, r.choice(e.get("precision", precision), f"{key}.precision", PRECISIONS))
        )

    inducer = r.choice(raw.get("inducer", "texttiling"), "inducer", INDUCERS)

    llm = parse_llm(r, raw.get("llm"))
    if inducer == "llm" and llm.backend == "none":
        raise r.fail("inducer", "'llm' needs an LLM backend (set llm.backend) or use 'texttiling'")

    conditions = r.strings(raw["conditions"], "conditions")
    valid = known_conditions()
    for i, cond in enumerate(conditions):
        r.choice(cond, f"conditions[{i}]", valid)
    r.unique(conditions, "conditions")
    if not isinstance(raw["contrasts"], list):
        raise r.fail("contrasts", f"expected a list, got {type(raw['contrasts']).__name__}")
    contrasts, declared = [], []
    defined = known_contrasts()
    for i, con in enumerate(raw["contrasts"]):
        if isinstance(con, dict):
            declared.append(
                declared_contrast(r, con, f"contrasts[{i}]", conditions, [*defined, *(d.name for d in declared)])
            )
            continue
        con = r.string(con, f"contrasts[{i}]")
        r.choice(con, f"contrasts[{i}]", sorted(defined))
        for arm in defined[con]:
            if arm not in conditions:
                raise r.fail(
                    f"contrasts[{i}]", f"{con} compares {' - '.join(defined[con])} but {arm} is not in conditions"
                )
        contrasts.append(con)

    retrievers = r.strings(raw.get("retrievers", ["dense"]), "retrievers")
    for i, name in enumerate(retrievers):
        r.choice(name, f"retrievers[{i}]", RETRIEVERS)
    if "dense" not in retrievers or len(set(retrievers)) != len(retrievers):
        raise r.fail("retrievers", f"expected 'dense' and optionally 'bm25', each once, got {retrievers}")
    bm25 = bm25_settings(r, raw.get("bm25"), "bm25" in retrievers)

    k = r.integer(raw.get("k", 50), "k", 1)
    depth, deepest = deepest_cutoff()
    if k < depth:
        raise r.fail(
            "k",
            f"{k} is below the deepest metric cutoff {depth} ({deepest}): the metrics would be computed "
            f"on {k}-deep lists; use k >= {depth}",
        )
    boot = r.mapping(raw.get("bootstrap", {}) or {}, "bootstrap", {"B", "seed"})
    b = r.integer(boot.get("B", 10_000), "bootstrap.B", 100)  # and a ceiling: config/bootstrap_cost.py
    seed = r.integer(boot.get("seed", 20260710), "bootstrap.seed", 0)

    p = r.mapping(raw.get("primary", {}) or {}, "primary", {"metric", "embedder", "reranker", "corpus"})
    emb = p.get("embedder", "strong")
    if emb == "strong":
        emb = strong[0]
    r.choice(emb, "primary.embedder", [e.name for e in embedders])
    rer = p.get("reranker", "none")
    r.choice(rer, "primary.reranker", ["none"] + [x.name for x in rerankers])
    corpus = p.get("corpus")
    if corpus is not None:
        r.choice(corpus, "primary.corpus", names)
    metric = r.choice(r.string(p.get("metric", "cov-nDCG@10"), "primary.metric"), "primary.metric", known_metrics())
    primary = PrimaryCell(metric, emb, rer, corpus)

    limit = raw.get("limit")
    if limit is not None:
        limit = r.integer(limit, "limit", 1)
        unsupported = sorted({c.loader for c in corpora} - {"qasper", "hotpotqa"})
        if unsupported:
            raise r.fail(
                "limit",
                f"a document limit applies to qasper and hotpotqa corpora only, not {', '.join(unsupported)} "
                "(Wikipedia samples with a per-bucket cap: corpora[].options.cap)",
            )

    engine, ray, max_memory_fraction = parse_engine(r, raw)
    config = ExperimentConfig(
        name=r.string(raw["name"], "name"),
        description=str(raw.get("description", "")),
        demo=demo,
        corpora=tuple(corpora),
        embedders=tuple(embedders),
        rerankers=tuple(rerankers),
        inducer=inducer,
        llm=llm,
        conditions=tuple(conditions),
        contrasts=tuple(contrasts),
        k=k,
        bootstrap_b=b,
        bootstrap_seed=seed,
        primary=primary,
        limit=limit,
        source_file=file,
        precision=precision,
        retrievers=tuple(retrievers),
        bm25=bm25,
        declared=tuple(declared),
        engine=engine,
        ray=ray,
        max_memory_fraction=max_memory_fraction,
    )
    refuse_costly(r, config)  # a floor: the corpora are not loaded yet (ragwh run checks again)
    return config
