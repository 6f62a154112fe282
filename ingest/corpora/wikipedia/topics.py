"""Topic buckets of Wikipedia articles (from their categories) and the seeded, capped sampling walk.

Bucketing: :data:`TOPIC_BUCKETS` is an ordered keyword table. An article's bucket is the FIRST bucket
in table order having a keyword that occurs, as a whole word or phrase (case-insensitive, ``\\b``
boundaries), in any of the article's category names; no match gives :data:`FALLBACK_BUCKET`. Plural
forms are listed explicitly (``war`` does not match ``software``, ``warfare`` or ``wars``).

Sampling walk: the candidates are sorted by page id, permuted with ``numpy.random.default_rng(seed)``
and walked in that order; a candidate is taken while its bucket holds fewer than ``cap`` articles.
So each bucket's realized size is ``min(cap, candidates in the bucket)``, and which articles fill a
bucket over the cap depends only on the seed and the candidate set (not on file order).
"""

from __future__ import annotations

import re
from typing import Sequence

import numpy as np

FALLBACK_BUCKET = "other"

#: (bucket, keywords) in priority order: the first bucket with a matching keyword wins.
TOPIC_BUCKETS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "history/war",
        (
            "war",
            "wars",
            "warfare",
            "battle",
            "battles",
            "military history",
            "military conflicts",
            "conflict",
            "conflicts",
            "revolution",
            "revolutions",
            "empire",
            "empires",
            "dynasty",
            "dynasties",
            "history of",
            "invasion",
            "invasions",
            "siege",
            "sieges",
            "ancient history",
            "medieval",
            "antiquity",
        ),
    ),
    (
        "biography",
        (
            "births",
            "deaths",
            "living people",
            "people from",
            "people of",
            "alumni",
            "burials",
        ),
    ),
    (
        "science/nature",
        (
            "science",
            "sciences",
            "scientific",
            "physics",
            "chemistry",
            "chemical",
            "biology",
            "mathematics",
            "mathematical",
            "astronomy",
            "climatology",
            "radiation",
            "radiometry",
            "optics",
            "mammals",
            "birds",
            "insects",
            "reptiles",
            "plants",
            "species",
            "fauna",
            "flora",
            "megafauna",
            "acids",
            "anatomy",
            "anatomical",
            "medicine",
            "medical",
            "diseases",
            "spacecraft",
            "spaceflight",
            "missions to the moon",
            "technology",
            "algorithms",
            "psychology",
            "evolutionary",
            "ecology",
            "geology",
            "morphology",
            "logic",
            "computing",
            "astronauts",
            "engineering",
            "nature",
        ),
    ),
    (
        "arts/media",
        (
            "art",
            "arts",
            "film",
            "films",
            "cinema",
            "novel",
            "novels",
            "literature",
            "literary",
            "music",
            "musical",
            "television",
            "media",
            "painting",
            "paintings",
            "books",
            "theatre",
            "animation",
            "comics",
            "poetry",
            "aesthetics",
            "dance",
            "video games",
        ),
    ),
    (
        "geography/places",
        (
            "country",
            "countries",
            "territories",
            "provinces",
            "cities",
            "towns",
            "villages",
            "regions",
            "geography",
            "continents",
            "islands",
            "rivers",
            "mountains",
            "balkans",
            "populated places",
            "capitals",
            "republics",
            "prairies",
        ),
    ),
)
BUCKETS: tuple[str, ...] = tuple(name for name, _ in TOPIC_BUCKETS) + (FALLBACK_BUCKET,)


def _pattern(keywords: Sequence[str]) -> re.Pattern[str]:
    return re.compile(r"\b(?:" + "|".join(re.escape(k) for k in keywords) + r")\b", re.IGNORECASE)


_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple((name, _pattern(kws)) for name, kws in TOPIC_BUCKETS)


def topic_bucket(categories: Sequence[str], table: Sequence[tuple[str, Sequence[str]]] | None = None) -> str:
    """The bucket of an article with these category names (first match in table order, else 'other').

    ``table`` defaults to :data:`TOPIC_BUCKETS`; pass another (same shape) to bucket differently.
    """
    patterns = _PATTERNS if table is None else tuple((name, _pattern(kws)) for name, kws in table)
    for name, pattern in patterns:
        if any(pattern.search(c) for c in categories):
            return name
    return FALLBACK_BUCKET


def sampling_walk(page_ids: Sequence[int], buckets: Sequence[str], seed: int, cap: int) -> list[int]:
    """Page ids taken by the seeded walk (see module doc), sorted ascending.

    ``page_ids[i]`` is in bucket ``buckets[i]``; ``cap >= 0`` is the most articles one bucket keeps.
    """
    if len(page_ids) != len(buckets):
        raise ValueError(f"{len(page_ids)} page ids but {len(buckets)} buckets")
    if cap < 0:
        raise ValueError(f"cap must be >= 0, got {cap}")
    order = np.argsort(np.asarray(page_ids, dtype=np.int64), kind="stable")
    walk = order[np.random.default_rng(seed).permutation(len(order))]
    taken: dict[str, int] = {}
    chosen: list[int] = []
    for i in walk.tolist():
        bucket = buckets[i]
        if taken.get(bucket, 0) < cap:
            taken[bucket] = taken.get(bucket, 0) + 1
            chosen.append(int(page_ids[i]))
    return sorted(chosen)
