"""Wikipedia into the warehouse: pages -> documents, paragraphs, gold sections; topic buckets and the
sampling walk -> ``corpus_meta``; every filter -> funnel; bad articles -> quarantine.

:func:`build_wikipedia` is pure (file in, Arrow tables out): :func:`read_articles` (parse, normalize,
verify) then :func:`select_articles` (filters, sampling). :func:`load_wikipedia` writes the tables in ONE
transaction (:func:`write_wikipedia`), replacing this corpus's rows, so a reload leaves identical tables
and a failure leaves the warehouse as it was. The XML export and the JSONL layout of the same articles
give identical tables (apart from ``documents.source_file`` and the ``source_*`` meta keys, which name
the file read).

Pipeline: read records (:mod:`ingest.corpora.wikipedia.records`) -> keep ns=0 non-redirect pages ->
normalize and verify (:mod:`ingest.corpora.wikipedia.wikitext`; a failure is quarantined) -> quality filters ->
topic bucket from the categories -> seeded sampling walk with a per-bucket cap
(:mod:`ingest.corpora.wikipedia.topics`). ``doc_id = '<corpus>/<page_id>'``.

Quality filters (``filters=True``), applied in this order, the first failure counted:
``words >= min_words`` (whitespace tokens with a word character in the normalized body, title
excluded), ``depth >= min_depth`` (levels of the verified section tree: ``==``/``===``/``====`` is 3),
``sections >= min_sections`` (rows of the section tree, ``Introduction`` included).

Funnel stages (``funnel(corpus, stage, reason, n)``; every stage has ``input`` and ``kept`` and
``input = kept + the other reasons`` unless marked):

* ``pages`` -- pages in the file; ``redirect``, ``other_namespace``; ``kept`` = articles.
* ``articles`` -- ``empty_document`` (no paragraph after normalization), ``verification_failed``
  (both quarantined with the reason).
* ``headings`` -- headings of verified articles, the lead included; ``inside_markup`` (a heading
  nested in other markup, e.g. a ``<div>``: its title stays a paragraph, it opens no section),
  ``no_paragraphs`` (whole subtree empty, dropped); ``kept`` = section rows.
* ``heading_levels`` -- the same headings less ``inside_markup``; ``clamped_deeper_than_4`` (nesting
  depth over 4, placed at 4), ``renested_after_jump`` (e.g. ``==`` then ``====``: nested one level
  down); ``kept`` = level unchanged.
* ``filters`` -- verified articles; ``too_few_words``, ``too_shallow``, ``too_few_sections`` (first
  failing filter); with ``filters=False`` nothing is dropped.
* ``filter_failures`` (*independent*: an article may fail several; no ``kept``) -- per filter, the
  verified articles failing it (counted whether or not filters are applied).
* ``sampling`` -- articles past the filters; ``over_bucket_cap``; ``kept`` = loaded documents.
"""

from __future__ import annotations

import re
import statistics
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import duckdb
import pyarrow as pa

from ingest.corpora.wikipedia.records import WikiRecord, read_records
from ingest.corpora.wikipedia.topics import BUCKETS, sampling_walk, topic_bucket
from ingest.corpora.wikipedia.wikitext import WikiArticle, categories, parse, parse_article
from ingest.errors import no_documents
from warehouse.db import replace_structured_corpus, replace_where, transaction
from warehouse.schema import arrow_schema

STRUCTURE = "gold"
DEFAULT_SEED = 20260710
DEFAULT_CAP = 60
MIN_WORDS = 3000
MIN_DEPTH = 3
MIN_SECTIONS = 12
FILTER_REASONS = ("too_few_words", "too_shallow", "too_few_sections")
STAGES: dict[str, tuple[str, ...]] = {
    "pages": ("input", "redirect", "other_namespace", "kept"),
    "articles": ("input", "empty_document", "verification_failed", "kept"),
    "headings": ("input", "inside_markup", "no_paragraphs", "kept"),
    "heading_levels": ("input", "clamped_deeper_than_4", "renested_after_jump", "kept"),
    "filters": ("input", *FILTER_REASONS, "kept"),
    "filter_failures": ("input", *FILTER_REASONS),
    "sampling": ("input", "over_bucket_cap", "kept"),
}
QUARANTINE_STAGES = ("articles",)
_META_KEYS = (
    "source_file",
    "source_format",
    "filters",
    "min_words",
    "min_depth",
    "min_sections",
    "sampling_seed",
    "bucket_cap",
)
_CORPUS_NAME = re.compile(r"[A-Za-z0-9_.:-]+")

_SCHEMAS: dict[str, pa.Schema] = {
    name: arrow_schema(name) for name in ("documents", "paragraphs", "sections", "quarantine", "funnel", "corpus_meta")
}


@dataclass(frozen=True)
class Candidate:
    """A verified article with its category names and topic bucket."""

    record: WikiRecord
    article: WikiArticle
    categories: tuple[str, ...]
    bucket: str

    def failures(self, min_words: int, min_depth: int, min_sections: int) -> list[str]:
        """Filter reasons this article fails, in filter order."""
        a = self.article
        fails = [
            (a.words < min_words, "too_few_words"),
            (a.depth < min_depth, "too_shallow"),
            (len(a.sections) < min_sections, "too_few_sections"),
        ]
        return [reason for failed, reason in fails if failed]


@dataclass
class WikipediaArticles:
    """The verified articles of one file, before filters and sampling (see :func:`read_articles`)."""

    file: Path
    corpus: str
    candidates: list[Candidate]
    funnel: dict[str, Counter]  # stages pages, articles, headings, heading_levels
    quarantine: list[dict]


@dataclass
class WikipediaTables:
    """Everything one load writes (Arrow tables by warehouse table name), the funnel and the loaded
    articles (for the summary)."""

    corpus: str
    tables: dict[str, pa.Table]
    funnel: dict[str, Counter]
    loaded: list[Candidate]
    bucket_sizes: dict[str, int]


def read_articles(
    file: Path, corpus: str = "wikipedia", progress: Callable[[int, int], None] | None = None
) -> WikipediaArticles:
    """Read ``file``, keep ns=0 non-redirect pages, normalize and verify each (failures quarantined),
    and bucket the verified ones. ``progress(done, total)`` is called after each article."""
    if not _CORPUS_NAME.fullmatch(corpus):
        raise ValueError(f"corpus name {corpus!r} must match {_CORPUS_NAME.pattern} (it prefixes doc_id)")
    file = Path(file)
    records = read_records(file)
    funnel: dict[str, Counter] = {stage: Counter() for stage in ("pages", "articles", "headings", "heading_levels")}
    quarantine: list[dict] = []

    f = funnel["pages"]
    f["input"] = len(records)
    articles = []
    for r in records:
        if r.redirect:
            f["redirect"] += 1
        elif r.ns != 0:
            f["other_namespace"] += 1
        else:
            articles.append(r)
    f["kept"] = len(articles)

    candidates: list[Candidate] = []
    funnel["articles"]["input"] = len(articles)
    for done, r in enumerate(articles, start=1):
        code = parse(r.wikitext)
        article = parse_article(r.title, code)
        reason = "empty_document" if not article.paragraphs else "verification_failed" if article.violations else None
        if reason is None:
            names = tuple(categories(code))
            candidates.append(Candidate(r, article, names, topic_bucket(names)))
        else:
            funnel["articles"][reason] += 1
            quarantine.append(
                {
                    "corpus": corpus,
                    "source_file": str(file),
                    "record_id": f"{corpus}/{r.page_id}",
                    "stage": "articles",
                    "reason": f"{reason}: "
                    + "; ".join(article.violations)
                    + f" (page {r.title!r}; fix the wikitext or report a normalizer bug)",
                }
            )
        if progress is not None:
            progress(done, len(articles))
    funnel["articles"]["kept"] = len(candidates)
    for c in candidates:
        a = c.article
        funnel["headings"]["input"] += a.n_headings + 1 + a.nested_headings
        funnel["headings"]["inside_markup"] += a.nested_headings
        funnel["headings"]["no_paragraphs"] += a.dropped_headings
        funnel["heading_levels"]["clamped_deeper_than_4"] += a.clamped_headings
        funnel["heading_levels"]["renested_after_jump"] += a.relevelled_headings - a.clamped_headings
    funnel["headings"]["kept"] = sum(len(c.article.sections) for c in candidates)
    hl = funnel["heading_levels"]
    hl["input"] = funnel["headings"]["input"] - funnel["headings"]["inside_markup"]
    hl["kept"] = hl["input"] - hl["clamped_deeper_than_4"] - hl["renested_after_jump"]
    return WikipediaArticles(file, corpus, candidates, funnel, quarantine)


def select_articles(
    read: WikipediaArticles,
    filters: bool = True,
    seed: int = DEFAULT_SEED,
    cap: int = DEFAULT_CAP,
    min_words: int = MIN_WORDS,
    min_depth: int = MIN_DEPTH,
    min_sections: int = MIN_SECTIONS,
) -> WikipediaTables:
    """Apply the quality filters and the sampling walk to ``read``: the rows of every table."""
    if cap < 0:
        raise ValueError(f"cap must be >= 0, got {cap}")
    corpus, source = read.corpus, str(read.file)
    funnel: dict[str, Counter] = {stage: Counter(read.funnel.get(stage, {})) for stage in STAGES}
    passed: list[Candidate] = []
    funnel["filters"]["input"] = funnel["filter_failures"]["input"] = len(read.candidates)
    for c in read.candidates:
        fails = c.failures(min_words, min_depth, min_sections)
        funnel["filter_failures"].update(fails)
        if filters and fails:
            funnel["filters"][fails[0]] += 1
        else:
            passed.append(c)
    funnel["filters"]["kept"] = len(passed)

    chosen = set(sampling_walk([c.record.page_id for c in passed], [c.bucket for c in passed], seed, cap))
    loaded = sorted((c for c in passed if c.record.page_id in chosen), key=lambda c: c.record.page_id)
    funnel["sampling"].update(input=len(passed), over_bucket_cap=len(passed) - len(loaded), kept=len(loaded))
    bucket_sizes = {b: 0 for b in BUCKETS}
    bucket_sizes.update(Counter(c.bucket for c in loaded))

    meta = {
        "source_file": source,
        "source_format": read.file.suffix.lower().lstrip("."),
        "filters": "true" if filters else "false",
        "min_words": str(min_words),
        "min_depth": str(min_depth),
        "min_sections": str(min_sections),
        "sampling_seed": str(seed),
        "bucket_cap": str(cap),
    }
    meta.update({f"bucket_size:{b}": str(n) for b, n in bucket_sizes.items()})
    tables = _tables(loaded, corpus, source)
    tables["quarantine"] = pa.Table.from_pylist(
        sorted(read.quarantine, key=lambda q: q["record_id"]), schema=_SCHEMAS["quarantine"]
    )
    tables["funnel"] = pa.Table.from_pylist(
        [
            {"corpus": corpus, "stage": stage, "reason": reason, "n": int(funnel[stage][reason])}
            for stage, reasons in STAGES.items()
            for reason in reasons
        ],
        schema=_SCHEMAS["funnel"],
    )
    tables["corpus_meta"] = pa.Table.from_pylist(
        [{"corpus": corpus, "key": k, "value": v} for k, v in meta.items()], schema=_SCHEMAS["corpus_meta"]
    )
    return WikipediaTables(corpus, tables, funnel, loaded, bucket_sizes)


def build_wikipedia(
    file: Path,
    corpus: str = "wikipedia",
    filters: bool = True,
    seed: int = DEFAULT_SEED,
    cap: int = DEFAULT_CAP,
    progress: Callable[[int, int], None] | None = None,
) -> WikipediaTables:
    """Read, normalize, verify, filter, bucket and sample (:func:`read_articles` then
    :func:`select_articles` with the default thresholds): the rows of every table, nothing written."""
    if cap < 0:
        raise ValueError(f"cap must be >= 0, got {cap}")
    return select_articles(read_articles(file, corpus, progress), filters, seed, cap)


def _tables(loaded: list[Candidate], corpus: str, source: str) -> dict[str, pa.Table]:
    docs: dict[str, list] = {name: [] for name in _SCHEMAS["documents"].names}
    paras: dict[str, list] = {name: [] for name in _SCHEMAS["paragraphs"].names}
    secs: dict[str, list] = {name: [] for name in _SCHEMAS["sections"].names}
    for c in loaded:
        a = c.article
        doc_id = f"{corpus}/{c.record.page_id}"
        for name, value in (
            ("doc_id", doc_id),
            ("corpus", corpus),
            ("title", a.title),
            ("text", a.text),
            ("topic_bucket", c.bucket),
            ("split", None),
            ("source_file", source),
        ):
            docs[name].append(value)
        n = len(a.paragraphs)
        paras["doc_id"].extend([doc_id] * n)
        paras["para_idx"].extend(range(n))
        paras["char_start"].extend(s for s, _ in a.paragraphs)
        paras["char_end"].extend(e for _, e in a.paragraphs)
        for row in a.sections:
            secs["structure"].append(STRUCTURE)
            secs["doc_id"].append(doc_id)
            for name in (
                "section_idx",
                "parent_idx",
                "level",
                "title",
                "para_start",
                "para_end",
                "char_start",
                "char_end",
            ):
                secs[name].append(getattr(row, name))
    return {
        "documents": pa.Table.from_pydict(docs, schema=_SCHEMAS["documents"]),
        "paragraphs": pa.Table.from_pydict(paras, schema=_SCHEMAS["paragraphs"]),
        "sections": pa.Table.from_pydict(secs, schema=_SCHEMAS["sections"]),
    }


def load_wikipedia(
    con: duckdb.DuckDBPyConnection,
    file: Path,
    corpus: str = "wikipedia",
    filters: bool = True,
    seed: int = DEFAULT_SEED,
    cap: int = DEFAULT_CAP,
    progress: Callable[[int, int], None] | None = None,
) -> dict:
    """Build the corpus from ``file`` (see :func:`build_wikipedia`) and write it (:func:`write_wikipedia`).
    Returns :func:`summarize`'s dict."""
    started = time.perf_counter()
    built = build_wikipedia(Path(file), corpus, filters, seed, cap, progress)
    write_wikipedia(con, built)
    return summarize(built, Path(file), time.perf_counter() - started)


def write_wikipedia(con: duckdb.DuckDBPyConnection, built: WikipediaTables) -> None:
    """Replace the corpus's rows in ONE transaction: documents, paragraphs, gold sections, this loader's
    funnel stages and quarantine rows, and its ``corpus_meta`` keys (other structures, stages and keys
    of the corpus are left alone). Refused (:func:`ingest.errors.no_documents`) when no article is left."""
    t = built.tables
    corpus = built.corpus
    if t["documents"].num_rows == 0:
        meta = dict(zip(t["corpus_meta"].column("key").to_pylist(), t["corpus_meta"].column("value").to_pylist()))
        raise no_documents(
            [meta["source_file"]],
            corpus,
            {s: dict(built.funnel[s]) for s in ("pages", "articles", "filters", "sampling")},
        )
    meta_list = ", ".join(f"'{k}'" for k in _META_KEYS)
    with transaction(con):
        replace_structured_corpus(con, corpus, t, STAGES, QUARANTINE_STAGES)
        replace_where(
            con,
            "corpus_meta",
            f"corpus = ? AND (key IN ({meta_list}) OR starts_with(key, 'bucket_size:'))",
            [corpus],
            t["corpus_meta"],
        )


def summarize(built: WikipediaTables, file: Path, seconds: float) -> dict:
    """The summary :func:`load_wikipedia` returns (and ``ragwh ingest wikipedia`` prints).

    ``sections_per_article`` / ``paragraphs_per_article`` / ``words_per_article``: min, median, mean,
    max over loaded articles; ``depth_histogram``: loaded articles per section-tree depth.
    """
    arts = [c.article for c in built.loaded]

    def stats(values: list[int]) -> dict[str, float]:
        if not values:
            return {"min": 0, "median": 0.0, "mean": 0.0, "max": 0}
        return {
            "min": min(values),
            "median": float(statistics.median(values)),
            "mean": statistics.fmean(values),
            "max": max(values),
        }

    return {
        "corpus": built.corpus,
        "file": str(file),
        "documents": built.tables["documents"].num_rows,
        "paragraphs": built.tables["paragraphs"].num_rows,
        "sections": built.tables["sections"].num_rows,
        "quarantined": built.tables["quarantine"].num_rows,
        "funnel": {stage: {r: int(built.funnel[stage][r]) for r in reasons} for stage, reasons in STAGES.items()},
        "bucket_sizes": dict(built.bucket_sizes),
        "sections_per_article": stats([len(a.sections) for a in arts]),
        "paragraphs_per_article": stats([len(a.paragraphs) for a in arts]),
        "words_per_article": stats([a.words for a in arts]),
        "depth_histogram": dict(sorted(Counter(a.depth for a in arts).items())),
        "seconds": seconds,
    }
