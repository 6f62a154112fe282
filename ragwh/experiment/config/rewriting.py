"""Rewriting-study experiment configs (``study: rewriting``): one YAML fixes corpora, stack, LLM and pipeline.

``ragwh run --config experiments/rewriting-*.yml`` reads the file with :func:`load_experiment`, which
dispatches on the top-level ``study`` key (absent: the chunking study's :func:`ragwh.experiment.config.chunking.
load_config`). Validation is as strict as the chunking study's: an unknown key or a wrong type raises
:class:`~ragwh.experiment.config.chunking.ConfigError` naming the file and the dotted key. Example
(``experiments/rewriting-hotpotqa.yml``, the offline default)::

    name: rewriting-hotpotqa
    study: rewriting
    corpora:
      - {name: hotpotqa, loader: hotpotqa, sources: [hotpotqa/hotpot_dev_distractor_v1_shared.json]}
    embedder: all-MiniLM-L6-v2
    reranker: none
    llm: {backend: transformers, model: smollm2-135m-instruct}
    rewriting:                       # every key optional; defaults: ingest/rewriting/settings.py
      strategies: [S1, S2, S3, S4, HyDE, Q2D, S1-pool100, S1-ann4]
      seeds: [42, 123, 2024]
      pool: 20
      pool_fill: fixed               # the paper's fixed 20-chunk pool; `widen` doubles it until it holds K documents
      mmr: {lambda: 0.85, unit: documents}
      include_original: true
      cosine_band: [0.4, 0.9]
      cosine_filter: [S2, S3, S4]
      n_variants: {S2: 5, S3: 3, S4: 1}
      hyde: {passages: 1, combine: none, encoding: passage}
      q2d_encoding: query
      rerank_with: text
      max_merged: 20
      sampling: {temperature: 0.7, max_tokens: 256}
      chunk: {tokens: 512, overlap: 50}
      dense: hnsw                    # the paper's approximate store, index seed = run seed; `exact` for checks
      ann: {m: 16, ef_construction: 100, ef_search: 20, graphs: 4}   # every HNSW graph; S1-ann4 searches `graphs`
                                      # build_workers: N graphs built at once (default: the cores that fit in memory)
                                      # recall_check: false skips the exact search behind rewrite_ann_recall
    analysis:                        # dbt vars of the rewriting marts; every key optional (dbt_project.yml)
      baseline: S1
      bootstrap_b: 2000
      bootstrap_seed: 20240531
      primary_metric: HIT@10
      rescue_seed: 42
      rrf_k: 60
      router_taus: [0.50, 0.55, 0.60, 0.65, 0.70, 0.75, 0.80]
      router_taus_cosine: [0.30, 0.35, 0.40, 0.45, 0.50, 0.55, 0.60, 0.65, 0.70, 0.75, 0.80]
      paper_tau: 0.65                # the router's tau of the paper's row (Tables 6, 13, 14): fixed, every dataset
      router_folds: 5                # the cross-fitted tau (an addition beside the in-sample and transferred ones)
      ensemble_seed: 42              # the seed-42 post-hoc scope of the ensembles and the oracle
      predeclared_subsets: [[S1, Q2D], [S1, HyDE, Q2D], [S1, S3, S4, HyDE], [S1, S3, S4, HyDE, Q2D], [HyDE, Q2D]]
      reference_ensemble: [S1, S3, S4, HyDE]   # the budget controls' share is of its gain over S1
    reader: {helpers: [Q2D], top_k: 5, mode: short, sample: 200, seeds: [42], calls: shared}   # or `reader: none`
                                     # calls: per_arm is the paper's reading (separate seeded reader calls per arm)

``analysis:`` and ``reader:`` are validated in :mod:`ragwh.experiment.config.rewriting_analysis`.

``engine``, ``ray:`` and ``max_memory_fraction`` as in the chunking study (:mod:`ragwh.experiment.config.engine`):
with ``engine: ray`` the stage's embeddings and cross-encoder scores run as Ray Data jobs and the generation of an
in-process LLM backend (``vllm``, ``transformers``) on Ray actors; HNSW graphs, MMR and the warehouse stay on the driver.

``demo: true`` reads the corpus sources from the package's demo data (``experiments/demo-rewriting.yml``:
``demo-rewriting.hotpot.json``, 30 questions over 426 paragraphs written for this project) instead of ``--data``.

Loaders: ``hotpotqa`` (options ``split`` and ``limit``: the first N questions in file order; the
top-level ``limit`` / ``--limit`` overrides it for every hotpotqa corpus), ``beir`` (``split``; the source is the directory's
``corpus.jsonl``), ``enterprise_rag`` (source: ``questions.jsonl``; option ``documents``: the export,
relative to the data directory) and ``ambignq`` (source: the questions JSON; option ``passages``).
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any

import yaml

from ingest.llm.yamlfile import load_yaml
from ingest.rewriting.settings import RewriteSettings
from ingest.rewriting.strategies import load_strategies
from ragwh.experiment.config.chunking import PRECISIONS, CorpusSpec, config_file, load_config
from ragwh.experiment.config.engine import ENGINE_KEYS, parse_engine
from ragwh.experiment.config.llm import LLMSpec, parse_llm
from ragwh.experiment.config.reader import ConfigError, _model_name, _Reader, yaml_where
from ragwh.experiment.config.rewriting_analysis import (  # noqa: F401  (re-exported: the config's public names)
    ANALYSIS_VARS,
    DEFAULT_BASELINE,
    DEFAULT_ENSEMBLE_SEED,
    DEFAULT_RESCUE_SEED,
    RAW_METRICS,
    ReaderSpec,
    parse_analysis,
    parse_reader,
)

LOADERS = ("hotpotqa", "beir", "enterprise_rag", "ambignq")
#: corpus option naming a second input path (relative to the data directory) per loader
PATH_OPTIONS = {"enterprise_rag": "documents", "ambignq": "passages"}
LOADER_OPTIONS = {
    "hotpotqa": {"split", "limit"},
    "beir": {"split"},
    "enterprise_rag": {"documents"},
    "ambignq": {"passages"},
}
#: the banner of rewrites from a tiny model (ingest.llm.local_models.is_tiny_model): labelled, never a result
TINY_LABEL = (
    "TINY-MODEL OUTPUT, NOT RESULTS: the rewrites and the reader's answers come from {model} (a "
    "135M-parameter model that runs anywhere); they exercise the pipeline and do not reproduce the study. "
    "Serve a real model (llm.backend openai / vllm) for results."
)

_TOP = {
    "name",
    "study",
    "description",
    "demo",
    "corpora",
    "embedder",
    "reranker",
    "precision",
    "llm",
    "limit",
    "rewriting",
    "analysis",
    "reader",
    *ENGINE_KEYS,
}
_REWRITING = {
    "strategies",
    "seeds",
    "pool",
    "pool_fill",
    "mmr",
    "include_original",
    "cosine_band",
    "cosine_filter",
    "n_variants",
    "hyde",
    "q2d_encoding",
    "rerank_with",
    "max_merged",
    "sampling",
    "chunk",
    "ann",
    "dense",
}


@dataclasses.dataclass(frozen=True)
class RewritingConfig:
    name: str
    description: str
    corpora: tuple[CorpusSpec, ...]
    embedder: str
    reranker: str | None  # None: no cross-encoder (stage score = cosine)
    llm: LLMSpec
    limit: int | None
    settings: RewriteSettings
    source_file: Path
    demo: bool = False
    precision: str = "auto"  # of the embedder and the cross-encoder (ingest.retrieval.precision)
    analysis: tuple[tuple[str, Any], ...] = ()  # dbt var overrides of the rewriting marts (ANALYSIS_VARS)
    reader: ReaderSpec | None = ReaderSpec()  # None: no reader stage (``reader: none``, or no LLM)
    engine: str = "local"  # where the models run (ragwh.experiment.config.engine): ray = on a Ray instance
    ray: Any = None  # ingest.retrieval.ray_engine.RaySettings with engine ray
    max_memory_fraction: float = 0.8

    def dbt_vars(self) -> dict[str, Any]:
        """The dbt vars of the rewriting marts this experiment sets (the others keep dbt_project.yml's)."""

        def plain(v: Any) -> Any:  # tuples (nested: subsets) as lists, as dbt reads them from JSON
            return [plain(x) for x in v] if isinstance(v, tuple) else v

        out = {ANALYSIS_VARS[k]: plain(v) for k, v in self.analysis}
        if self.reader is not None:
            out.update(self.reader.dbt_vars())
        return out

    def precision_of(self, model: str) -> str:
        """The precision both models compute in (one per stack: ``precision``, default auto)."""
        return self.precision

    @property
    def tiny_model_label(self) -> str | None:
        """The banner for tiny-model output, None for any other model."""
        from ingest.llm.local_models import is_tiny_model

        model = self.llm.model or ""
        return TINY_LABEL.format(model=model) if self.llm.backend != "none" and is_tiny_model(model) else None

    def resolve_sources(self, corpus: CorpusSpec, data: Path | None) -> list[Path]:
        """The corpus's source files under ``data`` (a demo config: the package's demo data; the loader's
        path option is checked by the loader)."""
        if self.demo:
            from importlib import resources

            from ragwh.experiment.config.chunking import DEMO_PACKAGE

            data = Path(str(resources.files(DEMO_PACKAGE)))
        if data is None:
            raise ConfigError(
                f"{self.source_file}: corpus {corpus.name!r} reads files relative to a data directory; "
                "pass --data DIR or set RAGWH_DATA (e.g. RAGWH_DATA=../shared/data)"
            )
        paths = [data / s for s in corpus.sources]
        missing = [str(p) for p in paths if not p.exists()]
        if missing:
            hint = (
                " (`ragwh fetch hotpotqa --data DIR` downloads the train file)" if corpus.loader == "hotpotqa" else ""
            )
            raise ConfigError(
                f"{self.source_file}: corpora[{corpus.name}].sources: not found: {', '.join(missing)}{hint}"
            )
        return paths

    def option_path(self, corpus: CorpusSpec, data: Path | None) -> Path | None:
        """The loader's second input (documents / passages) under ``data``, or None when not configured."""
        key = PATH_OPTIONS.get(corpus.loader)
        value = corpus.options.get(key) if key else None
        return None if value is None or data is None else data / value


def load_experiment(path: str | os.PathLike | None = None, overrides: dict[str, Any] | None = None):
    """A chunking-study :class:`~ragwh.experiment.config.chunking.ExperimentConfig` or a :class:`RewritingConfig`,
    by the file's ``study`` key, with the command line's ``overrides`` applied."""
    file = config_file(path) if path else None
    if file is not None and file.is_file():
        try:
            raw = load_yaml(file.read_text(encoding="utf-8"))
        except yaml.YAMLError as exc:
            raise ConfigError(f"{file}: not valid YAML{yaml_where(exc)}") from exc
        if isinstance(raw, dict) and raw.get("study") == "rewriting":
            from ragwh.experiment.config.overrides import apply_overrides

            return parse_rewriting_config(apply_overrides(raw, overrides), file)
    return load_config(path, overrides)


def parse_rewriting_config(raw: Any, file: Path) -> RewritingConfig:
    r = _Reader(file)
    raw = r.mapping(raw, "", _TOP)
    for key in ("name", "corpora", "embedder"):
        if key not in raw:
            raise r.fail(key, "required key missing")

    def corpus_spec(key: str, c: dict) -> CorpusSpec:
        loader = r.choice(c["loader"], f"{key}.loader", LOADERS)
        sources = r.strings(c["sources"], f"{key}.sources")
        if len(sources) != 1:
            raise r.fail(f"{key}.sources", "expected exactly one source file")
        options = r.mapping(c.get("options") or {}, f"{key}.options", LOADER_OPTIONS[loader])
        return CorpusSpec(r.string(c["name"], f"{key}.name"), loader, tuple(sources), dict(options))

    corpora = r.corpora(raw["corpora"], corpus_spec)
    embedder = r.string(raw["embedder"], "embedder")
    _model_name(r, "embedder", embedder, "embedder")
    reranker = raw.get("reranker", "none")
    reranker = None if reranker in (None, "none") else r.string(reranker, "reranker")
    if reranker is not None:
        _model_name(r, "reranker", reranker, "reranker")
    llm = parse_llm(r, raw.get("llm"))
    limit = raw.get("limit")
    if limit is not None:
        limit = r.integer(limit, "limit", 1)
    for i, c in enumerate(corpora):
        if "limit" in c.options:
            r.integer(c.options["limit"], f"corpora[{i}].options.limit", 1)
    settings = _settings(r, r.mapping(raw.get("rewriting") or {}, "rewriting", _REWRITING))
    if llm.backend == "none" and any(load_strategies()[s].uses_llm for s in settings.strategies):
        raise r.fail(
            "llm.backend",
            "'none' but strategies "
            f"{[s for s in settings.strategies if load_strategies()[s].uses_llm]} call an LLM: set llm.backend "
            "(e.g. transformers with the packaged smollm2-135m-instruct) or keep only S1 and S1-pool100",
        )
    precision = r.choice(raw.get("precision", "auto"), "precision", PRECISIONS)
    analysis = parse_analysis(r, r.mapping(raw.get("analysis") or {}, "analysis", set(ANALYSIS_VARS)), settings)
    reader = parse_reader(
        r, raw.get("reader", {}), settings, llm, dict(analysis).get("baseline", DEFAULT_BASELINE), corpora
    )
    demo = raw.get("demo", False)
    if not isinstance(demo, bool):
        raise r.fail("demo", f"expected true/false, got {demo!r}")
    engine, ray, max_memory_fraction = parse_engine(r, raw)
    return RewritingConfig(
        r.string(raw["name"], "name"),
        str(raw.get("description", "")),
        tuple(corpora),
        embedder,
        reranker,
        llm,
        limit,
        settings,
        file,
        demo=demo,
        precision=precision,
        analysis=analysis,
        reader=reader,
        engine=engine,
        ray=ray,
        max_memory_fraction=max_memory_fraction,
    )


def _settings(r: _Reader, raw: dict) -> RewriteSettings:
    """:class:`RewriteSettings` from the ``rewriting:`` mapping (missing keys keep their defaults)."""
    values: dict[str, Any] = {}
    known = load_strategies()
    if "strategies" in raw:
        values["strategies"] = tuple(
            r.choice(s, f"rewriting.strategies[{i}]", list(known))
            for i, s in enumerate(r.strings(raw["strategies"], "rewriting.strategies"))
        )
        r.unique(values["strategies"], "rewriting.strategies")
    if "seeds" in raw:
        if not isinstance(raw["seeds"], list):
            raise r.fail("rewriting.seeds", "expected a list of integers")
        values["seeds"] = tuple(r.integer(s, f"rewriting.seeds[{i}]", 0) for i, s in enumerate(raw["seeds"]))
        r.unique(values["seeds"], "rewriting.seeds")
    for key in ("pool", "max_merged"):
        if key in raw:
            values[key] = r.integer(raw[key], f"rewriting.{key}", 1)
    if "include_original" in raw:
        if not isinstance(raw["include_original"], bool):
            raise r.fail("rewriting.include_original", "expected true/false")
        values["include_original"] = raw["include_original"]
    if "cosine_band" in raw:
        band = raw["cosine_band"]
        if not (isinstance(band, list) and len(band) == 2):
            raise r.fail("rewriting.cosine_band", f"expected [lo, hi], got {band!r}")
        values["cosine_band"] = tuple(r.number(x, f"rewriting.cosine_band[{i}]") for i, x in enumerate(band))
    if "cosine_filter" in raw:
        values["cosine_filter"] = tuple(
            r.choice(s, f"rewriting.cosine_filter[{i}]", list(known))
            for i, s in enumerate(r.strings(raw["cosine_filter"], "rewriting.cosine_filter"))
        )
        r.unique(values["cosine_filter"], "rewriting.cosine_filter")
    if "n_variants" in raw:
        nv = r.mapping(raw["n_variants"], "rewriting.n_variants", {"S2", "S3", "S4"})
        values["n_variants"] = tuple(
            sorted(
                {
                    **dict(RewriteSettings().n_variants),
                    **{k: r.integer(v, f"rewriting.n_variants.{k}", 1) for k, v in nv.items()},
                }.items()
            )
        )
    for key, choices in (
        ("q2d_encoding", ("query", "passage")),
        ("rerank_with", ("text", "original")),
        ("dense", ("hnsw", "exact")),
        ("pool_fill", ("fixed", "widen")),
    ):
        if key in raw:
            values[key] = r.choice(raw[key], f"rewriting.{key}", choices)
    mmr = r.mapping(raw.get("mmr") or {}, "rewriting.mmr", {"lambda", "unit"})
    if "lambda" in mmr:
        values["mmr_lambda"] = _fraction(r, mmr["lambda"], "rewriting.mmr.lambda")
    if "unit" in mmr:
        values["mmr_unit"] = r.choice(mmr["unit"], "rewriting.mmr.unit", ("documents", "chunks"))
    hyde = r.mapping(raw.get("hyde") or {}, "rewriting.hyde", {"passages", "combine", "encoding"})
    if "passages" in hyde:
        values["hyde_passages"] = r.integer(hyde["passages"], "rewriting.hyde.passages", 1)
    if "combine" in hyde:
        values["hyde_combine"] = r.choice(hyde["combine"], "rewriting.hyde.combine", ("none", "average"))
    if "encoding" in hyde:
        values["hyde_encoding"] = r.choice(hyde["encoding"], "rewriting.hyde.encoding", ("query", "passage"))
    sampling = r.mapping(raw.get("sampling") or {}, "rewriting.sampling", {"temperature", "max_tokens"})
    if "temperature" in sampling:
        values["temperature"] = _fraction(r, sampling["temperature"], "rewriting.sampling.temperature", 2.0)
    if "max_tokens" in sampling:
        values["max_tokens"] = r.integer(sampling["max_tokens"], "rewriting.sampling.max_tokens", 1)
    if isinstance(raw.get("ann"), dict) and "seeds" in raw["ann"]:
        raise r.fail(
            "rewriting.ann.seeds",
            "the HNSW index seeds follow the run seeds (rewriting.seeds); "
            "set how many graphs S1-ann4 searches with rewriting.ann.graphs",
        )
    ann = r.mapping(
        raw.get("ann") or {},
        "rewriting.ann",
        {"graphs", "m", "ef_construction", "ef_search", "build_workers", "recall_check"},
    )
    for key in ("graphs", "m", "ef_construction", "ef_search", "build_workers"):
        if key in ann:
            values[f"ann_{key}"] = r.integer(ann[key], f"rewriting.ann.{key}", 1)
    if "recall_check" in ann:
        if not isinstance(ann["recall_check"], bool):
            raise r.fail("rewriting.ann.recall_check", f"expected true or false, got {ann['recall_check']!r}")
        values["ann_recall_check"] = ann["recall_check"]
    chunk = r.mapping(raw.get("chunk") or {}, "rewriting.chunk", {"tokens", "overlap"})
    if "tokens" in chunk:
        values["chunk_tokens"] = r.integer(chunk["tokens"], "rewriting.chunk.tokens", 1)
    if "overlap" in chunk:
        values["chunk_overlap"] = r.integer(chunk["overlap"], "rewriting.chunk.overlap", 0)
    try:
        return RewriteSettings(**values)
    except ValueError as exc:
        raise r.fail("rewriting", str(exc)) from None


def _fraction(r: _Reader, value: Any, key: str, top: float = 1.0) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= top:
        raise r.fail(key, f"expected a number in [0, {top}], got {value!r}")
    return float(value)
