"""The rewriting study's ``analysis:`` and ``reader:`` blocks (arXiv 2609.05637), validated.

``analysis:`` sets the dbt vars of the rewriting marts (:data:`ANALYSIS_VARS`; defaults in
``dbt_project.yml``, which are the paper's protocol). ``reader:`` configures the reader stage and the
dbt vars of the reader's inputs (which helpers, how many passages, which queries and seeds)::

    analysis:
      ensemble_seed: 42                  # the paper's post-hoc ensemble / oracle tables are seed-42 analyses
      predeclared_subsets:               # the paper's ensembles; Holm over this family (rule max)
        - [S1, Q2D]
        - [S1, HyDE, Q2D]
        - [S1, S3, S4, HyDE]
        - [S1, S3, S4, HyDE, Q2D]
        - [HyDE, Q2D]
      reference_ensemble: [S1, S3, S4, HyDE]   # the budget controls' share of ITS gain over S1
    reader:
      helpers: [Q2D]
      top_k: 5
      mode: {enterprise_rag: long}       # short | long | per corpus; default: long for enterprise_rag corpora
      max_tokens: null                   # null: by mode (short 32, long 256)
      sample: 200                        # seeded random queries per cell (null: all)
      sample_seed: 42
      seeds: [42]                        # rewriting seeds the reader reads
      calls: shared                      # shared: one cached temperature-0 call per distinct prompt (an untriggered
                                         # query's router - S1 difference is 0); per_arm: the paper's reading, a
                                         # separate seeded call per arm at the study's sampling temperature

A seed key (``rescue_seed``, ``ensemble_seed``, ``reader.seeds``) must name configured seeds; when the
paper's 42 is not among ``rewriting.seeds`` and the key is not given, the first configured seed is used
(and passed to dbt), so every default names data the run produces.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from ingest.rewriting.reader import MAX_TOKENS, PROMPTS, READER_CALLS
from ingest.rewriting.settings import RewriteSettings
from ingest.rewriting.strategies import load_strategies
from ragwh.experiment.config.bootstrap_cost import too_costly
from ragwh.experiment.config.chunking import CorpusSpec
from ragwh.experiment.config.llm import LLMSpec
from ragwh.experiment.config.reader import _Reader
from udfs.metrics.registry import registered_metrics

#: ``analysis:`` key -> the dbt var of the rewriting marts it sets (defaults: dbt_project.yml vars)
ANALYSIS_VARS = {
    "baseline": "rewriting_baseline",
    "bootstrap_b": "rewriting_bootstrap_b",
    "bootstrap_seed": "rewriting_bootstrap_seed",
    "primary_metric": "rewriting_primary_metric",
    "rescue_seed": "rewriting_rescue_seed",
    "rrf_k": "rewriting_rrf_k",
    "router_taus": "router_taus",
    "router_taus_cosine": "router_taus_cosine",
    "router_folds": "router_folds",
    "paper_tau": "router_paper_tau",
    "ensemble_seed": "rewriting_ensemble_seed",
    "predeclared_subsets": "rewriting_predeclared_subsets",
    "reference_ensemble": "rewriting_reference_ensemble",
}
RAW_METRICS = registered_metrics("document")  # seeds/metric_registry.csv
#: dbt_project.yml's defaults of the vars whose value must name a configured strategy / seed
DEFAULT_BASELINE, DEFAULT_RESCUE_SEED, DEFAULT_ENSEMBLE_SEED = "S1", 42, 42
#: the paper's pre-declared ensembles and the budget table's reference ensemble (dbt_project.yml's defaults)
PAPER_PREDECLARED = (
    ("S1", "Q2D"),
    ("S1", "HyDE", "Q2D"),
    ("S1", "S3", "S4", "HyDE"),
    ("S1", "S3", "S4", "HyDE", "Q2D"),
    ("HyDE", "Q2D"),
)
PAPER_REFERENCE = ("S1", "S3", "S4", "HyDE")

READER_MODES = tuple(PROMPTS)
#: loaders whose gold answers are sentences (EM is ~0 there; F1 is the measure): the reader's default long mode
LONG_ANSWER_LOADERS = ("enterprise_rag",)


@dataclasses.dataclass(frozen=True)
class ReaderSpec:
    """The reader LLM of the answer-quality marts (``reader:``).

    ``helpers`` (dbt var ``reader_helpers``): whose always-merge and router lists it reads; ``top_k``
    (``reader_top_k``, 1..10) passages; ``modes``: (corpus, ``short`` | ``long``) for every corpus;
    ``max_tokens`` per answer (None: :data:`MAX_TOKENS` of the corpus's mode); ``sample``
    (``reader_sample``): queries per cell drawn with ``sample_seed`` (``reader_sample_seed``), None = all;
    ``seeds`` (``reader_seeds``): the rewriting seeds whose lists it reads; ``calls``: ``shared`` (one cached
    temperature-0 call per distinct prompt) or ``per_arm`` (the paper's reading: separate seeded calls per arm at
    the study's sampling temperature; :mod:`ingest.rewriting.reader`)."""

    helpers: tuple[str, ...] = ("Q2D",)
    top_k: int = 5
    max_tokens: int | None = None
    modes: tuple[tuple[str, str], ...] = ()
    sample: int | None = 200
    sample_seed: int = 42
    seeds: tuple[int, ...] = (42,)
    calls: str = "shared"

    def mode_of(self, corpus: str) -> str:
        return dict(self.modes).get(corpus, "short")

    def max_tokens_of(self, corpus: str) -> int:
        return self.max_tokens if self.max_tokens is not None else MAX_TOKENS[self.mode_of(corpus)]

    def dbt_vars(self) -> dict[str, Any]:
        return {
            "reader_helpers": list(self.helpers),
            "reader_top_k": self.top_k,
            "reader_sample": self.sample,
            "reader_sample_seed": self.sample_seed,
            "reader_seeds": list(self.seeds),
        }


def _seed(
    r: _Reader, raw: dict, key: str, settings: RewriteSettings, default: int, where: str = "analysis"
) -> int | None:
    """A configured seed for ``key``: its value (checked), or None when the default is among the seeds."""
    if key in raw:
        seed = r.integer(raw[key], f"{where}.{key}", 0)
        if seed not in settings.seeds:
            raise r.fail(f"{where}.{key}", f"{seed} is not one of rewriting.seeds {list(settings.seeds)}")
        return seed
    return None if default in settings.seeds else settings.seeds[0]


def _subset(r: _Reader, value: Any, key: str, solo: list[str]) -> tuple[str, ...]:
    """A list of at least two distinct solo strategies of the seed (an ensemble)."""
    members = tuple(r.choice(s, f"{key}[{i}]", solo) for i, s in enumerate(r.strings(value, key)))
    if len(set(members)) != len(members) or len(members) < 2:
        raise r.fail(key, f"expected at least two distinct solo strategies (an ensemble), got {list(members)}")
    return members


def parse_analysis(r: _Reader, raw: dict, settings: RewriteSettings) -> tuple[tuple[str, Any], ...]:
    """The ``analysis:`` overrides, validated (keys: :data:`ANALYSIS_VARS`). The baseline (default S1)
    must be a configured solo strategy; the rescue and ensemble seeds (default 42) configured seeds
    (module doc). Subsets name solo strategies of the seed; one the run lacks has no rows in the marts."""
    out: dict[str, Any] = {}
    for key in ("bootstrap_b", "rrf_k", "router_folds"):
        if key in raw:
            out[key] = r.integer(raw[key], f"analysis.{key}", 2 if key == "router_folds" else 1)
    if "bootstrap_b" in out:  # a floor (1 query): ragwh run checks again with the loaded queries
        problem = too_costly(out["bootstrap_b"], len(settings.strategies), 1, "queries", "analysis.bootstrap_b")
        if problem:
            raise r.fail("analysis.bootstrap_b", problem)
    if "bootstrap_seed" in raw:
        out["bootstrap_seed"] = r.integer(raw["bootstrap_seed"], "analysis.bootstrap_seed", 0)
    for key, default in (("rescue_seed", DEFAULT_RESCUE_SEED), ("ensemble_seed", DEFAULT_ENSEMBLE_SEED)):
        seed = _seed(r, raw, key, settings, default)
        if seed is not None:
            out[key] = seed
    known = load_strategies()
    solo = [s for s in settings.strategies if known[s].kind == "solo"]
    if "baseline" in raw:
        out["baseline"] = r.choice(raw["baseline"], "analysis.baseline", solo)
    elif DEFAULT_BASELINE not in settings.strategies:
        raise r.fail(
            "analysis.baseline",
            f"the default baseline {DEFAULT_BASELINE} is not among rewriting.strategies: "
            f"add it, or name another solo strategy ({', '.join(solo) or 'none configured'})",
        )
    if "primary_metric" in raw:
        out["primary_metric"] = r.choice(raw["primary_metric"], "analysis.primary_metric", RAW_METRICS)
    if "paper_tau" in raw:  # the paper's fixed router tau (0.65), applied to every dataset
        tau = raw["paper_tau"]
        if not (isinstance(tau, (int, float)) and not isinstance(tau, bool) and -1.0 <= tau <= 1.0):
            raise r.fail("analysis.paper_tau", f"expected a number in [-1, 1], got {tau!r}")
        out["paper_tau"] = float(tau)
    for key in ("router_taus", "router_taus_cosine"):
        if key in raw:
            taus = raw[key]
            if not (
                isinstance(taus, list)
                and taus
                and all(isinstance(t, (int, float)) and not isinstance(t, bool) and -1.0 <= t <= 1.0 for t in taus)
            ):
                raise r.fail(f"analysis.{key}", f"expected a non-empty list of numbers in [-1, 1], got {taus!r}")
            out[key] = tuple(float(t) for t in taus)
            r.unique(out[key], f"analysis.{key}")
    all_solo = [s for s, spec in known.items() if spec.kind == "solo"]
    if "predeclared_subsets" in raw:
        value = raw["predeclared_subsets"]
        if not isinstance(value, list):
            raise r.fail("analysis.predeclared_subsets", f"expected a list of subsets, got {type(value).__name__}")
        subsets = tuple(_subset(r, s, f"analysis.predeclared_subsets[{i}]", all_solo) for i, s in enumerate(value))
        if len({frozenset(s) for s in subsets}) != len(subsets):
            raise r.fail("analysis.predeclared_subsets", "a subset is listed twice (members in any order)")
        out["predeclared_subsets"] = subsets
    if "reference_ensemble" in raw:
        out["reference_ensemble"] = _subset(r, raw["reference_ensemble"], "analysis.reference_ensemble", all_solo)
    return tuple(sorted(out.items()))


def _modes(r: _Reader, raw: Any, corpora: list[CorpusSpec]) -> tuple[tuple[str, str], ...]:
    """(corpus, mode) for every corpus: ``reader.mode`` as one mode, a mapping by corpus name, or absent
    (long for :data:`LONG_ANSWER_LOADERS`, else short)."""
    modes = {c.name: "long" if c.loader in LONG_ANSWER_LOADERS else "short" for c in corpora}
    if isinstance(raw, str):
        mode = r.choice(raw, "reader.mode", READER_MODES)
        modes = dict.fromkeys(modes, mode)
    elif raw is not None:
        given = r.mapping(raw, "reader.mode", set(modes))
        modes.update({k: r.choice(v, f"reader.mode.{k}", READER_MODES) for k, v in given.items()})
    return tuple(sorted(modes.items()))


def parse_reader(
    r: _Reader, raw: Any, settings: RewriteSettings, llm: LLMSpec, baseline: str, corpora: list[CorpusSpec]
) -> ReaderSpec | None:
    """``reader:`` (a mapping, or ``none``); no reader without an LLM or without a helper to merge. A
    helper is a configured solo strategy other than the baseline."""
    if raw in (None, "none") or llm.backend == "none":
        return None
    raw = r.mapping(
        raw, "reader", {"helpers", "top_k", "max_tokens", "mode", "sample", "sample_seed", "seeds", "calls"}
    )
    defaults = ReaderSpec()
    known = load_strategies()
    allowed = [s for s in settings.strategies if known[s].kind == "solo" and s != baseline]
    helpers = (
        tuple(
            r.choice(h, f"reader.helpers[{i}]", allowed)
            for i, h in enumerate(r.strings(raw["helpers"], "reader.helpers"))
        )
        if "helpers" in raw
        else tuple(h for h in defaults.helpers if h in allowed)
    )
    r.unique(helpers, "reader.helpers")
    if not helpers:
        return None
    top_k = r.integer(raw.get("top_k", defaults.top_k), "reader.top_k", 1)
    if top_k > 10:
        raise r.fail("reader.top_k", f"expected at most 10 (the merged lists the reader reads keep 10), got {top_k}")
    max_tokens = raw.get("max_tokens")
    max_tokens = None if max_tokens is None else r.integer(max_tokens, "reader.max_tokens", 1)
    sample = raw.get("sample", defaults.sample)
    sample = None if sample is None else r.integer(sample, "reader.sample", 1)
    sample_seed = r.integer(raw.get("sample_seed", defaults.sample_seed), "reader.sample_seed", 0)
    if "seeds" in raw:
        seeds = tuple(
            r.integer(s, f"reader.seeds[{i}]", 0) for i, s in enumerate(_list(r, raw["seeds"], "reader.seeds"))
        )
        wrong = [s for s in seeds if s not in settings.seeds]
        if not seeds or wrong or len(set(seeds)) != len(seeds):
            raise r.fail(
                "reader.seeds",
                f"expected distinct seeds among rewriting.seeds {list(settings.seeds)}, got {list(seeds)}",
            )
    else:
        seeds = defaults.seeds if set(defaults.seeds) <= set(settings.seeds) else settings.seeds[:1]
    calls = r.choice(raw["calls"], "reader.calls", READER_CALLS) if "calls" in raw else defaults.calls
    return ReaderSpec(
        helpers, top_k, max_tokens, _modes(r, raw.get("mode"), corpora), sample, sample_seed, seeds, calls
    )


def _list(r: _Reader, value: Any, key: str) -> list:
    if not isinstance(value, list):
        raise r.fail(key, f"expected a list, got {type(value).__name__}")
    return value
