"""TextTiling (Hearst, 1997) over paragraph embeddings, producing a two-level section tree.

Units are the document's body paragraphs, represented by L2-normalized embedding vectors ``v_p``.

1. Gap scores. For the gap ``g`` between paragraphs ``g`` and ``g + 1`` (``g = 0..n-2``) the left
   block is paragraphs ``max(0, g-w+1)..g`` and the right block ``g+1..min(n-1, g+w)``; the score is
   the cosine of the block sums: ``s_g = cos(sum_left v, sum_right v)`` (``w`` = ``window``).
2. Smoothing: a centred moving average of width ``smoothing`` (odd; 1 = none), shrinking at the ends.
3. Depth scores. Climbing from gap ``g`` to the left while the score strictly increases reaches the
   left peak ``L_g`` (likewise ``R_g`` to the right); ``depth_g = (L_g - s_g) + (R_g - s_g)``.
4. Candidates are the valleys (no neighbour lower, ``depth > 0``). The cutoffs are document
   parameters, from the mean ``mu`` and standard deviation ``sd`` (population) of the candidates'
   depths: level-1 boundaries need ``depth >= mu + top_sd * sd``, level-2 boundaries
   ``depth >= mu - sub_sd * sd`` (Hearst's liberal cutoff at ``sub_sd = 0.5``; ``>=`` so that equally
   deep valleys, ``sd = 0``, are all boundaries rather than none).
5. Boundaries are accepted greedily by decreasing depth (ties: earlier gap first) as long as every
   segment keeps at least ``min_top`` paragraphs (level 1) or ``min_sub`` paragraphs (level 2,
   checked inside its level-1 segment).
6. Tree: a level-1 segment without accepted level-2 boundaries is one level-1 section owning its
   paragraphs; otherwise it is a level-1 container (no own paragraphs) whose level-2 children own
   the sub-segments. Titles come from :mod:`ingest.structure.titles`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ingest.structure.segments import Heading


@dataclass(frozen=True)
class TextTilingParams:
    """Defaults (see module doc for meanings); the units are paragraphs and standard deviations."""

    window: int = 2
    smoothing: int = 1
    top_sd: float = 0.5
    sub_sd: float = 0.5
    min_top: int = 3
    min_sub: int = 2

    def __post_init__(self) -> None:
        if self.window < 1 or self.smoothing < 1 or self.smoothing % 2 == 0 or self.min_top < 1 or self.min_sub < 1:
            raise ValueError("TextTiling: window >= 1, odd smoothing >= 1, min_top >= 1 and min_sub >= 1 are required")


def gap_scores(vectors: np.ndarray, window: int) -> np.ndarray:
    """``s_g`` for ``g = 0..n-2``: cosine of the summed vectors of the ``window`` paragraphs on each side."""
    n = len(vectors)
    if n < 2:
        return np.zeros(0)
    csum = np.vstack([np.zeros((1, vectors.shape[1])), np.cumsum(vectors, axis=0, dtype=np.float64)])
    g = np.arange(n - 1)
    left = csum[g + 1] - csum[np.maximum(0, g + 1 - window)]
    right = csum[np.minimum(n, g + 1 + window)] - csum[g + 1]
    norms = np.linalg.norm(left, axis=1) * np.linalg.norm(right, axis=1)
    dots = np.einsum("ij,ij->i", left, right)
    return np.divide(dots, norms, out=np.zeros_like(dots), where=norms > 0)


def smooth(scores: np.ndarray, width: int) -> np.ndarray:
    """Centred moving average of odd ``width`` (the window shrinks at both ends)."""
    if width == 1 or len(scores) == 0:
        return scores.astype(np.float64)
    half = width // 2
    csum = np.concatenate([[0.0], np.cumsum(scores, dtype=np.float64)])
    idx = np.arange(len(scores))
    lo, hi = np.maximum(0, idx - half), np.minimum(len(scores), idx + half + 1)
    return (csum[hi] - csum[lo]) / (hi - lo)


def depth_scores(scores: np.ndarray) -> np.ndarray:
    """``(L_g - s_g) + (R_g - s_g)`` with ``L_g``/``R_g`` the peaks reached climbing while scores rise."""
    m = len(scores)
    left_peak = scores.astype(np.float64).copy()
    right_peak = left_peak.copy()
    for i in range(1, m):  # a sequential scan: the climb from i continues as the climb from i-1
        if scores[i - 1] > scores[i]:
            left_peak[i] = left_peak[i - 1]
    for i in range(m - 2, -1, -1):
        if scores[i + 1] > scores[i]:
            right_peak[i] = right_peak[i + 1]
    return (left_peak - scores) + (right_peak - scores)


def valleys(scores: np.ndarray, depths: np.ndarray) -> np.ndarray:
    """Gaps with positive depth and no neighbour scoring lower."""
    padded = np.concatenate([[np.inf], scores, [np.inf]])
    is_valley = (padded[:-2] >= scores) & (padded[2:] >= scores) & (depths > 0)
    return np.flatnonzero(is_valley)


def select(
    candidates: Sequence[int], depths: np.ndarray, start: int, stop: int, fixed: Sequence[int], min_len: int
) -> list[int]:
    """Accept candidate gaps (a gap ``g`` cuts before paragraph ``g + 1``) by decreasing depth while
    every segment of ``[start, stop)`` between accepted cuts and ``fixed`` cuts keeps ``min_len``
    paragraphs. Returns the accepted gaps, sorted."""
    cuts = sorted({start, stop, *[g + 1 for g in fixed]})
    accepted: list[int] = []
    for g in sorted(candidates, key=lambda c: (-depths[c], c)):
        cut = g + 1
        if not start < cut < stop or cut in cuts:
            continue
        k = int(np.searchsorted(cuts, cut))
        if cut - cuts[k - 1] >= min_len and cuts[k] - cut >= min_len:
            cuts.insert(k, cut)
            accepted.append(g)
    return sorted(accepted)


def tile(
    vectors: np.ndarray, params: TextTilingParams = TextTilingParams()
) -> list[tuple[int, int, list[tuple[int, int]]]]:
    """Two-level segmentation of ``n`` paragraphs: ``[(top_start, top_end, [(sub_start, sub_end), ...])]``
    with 0-based, end-exclusive paragraph ranges tiling ``0..n``; the sub list is empty when the
    level-1 segment is not subdivided."""
    n = len(vectors)
    if n == 0:
        raise ValueError("TextTiling needs at least one paragraph")
    scores = smooth(gap_scores(np.asarray(vectors, dtype=np.float64), params.window), params.smoothing)
    depths = depth_scores(scores)
    cand = valleys(scores, depths)
    if len(cand) == 0:
        return [(0, n, [])]
    mu, sd = float(depths[cand].mean()), float(depths[cand].std())
    top = select(cand[depths[cand] >= mu + params.top_sd * sd], depths, 0, n, [], params.min_top)
    taken = set(top)
    sub_pool = [int(g) for g in cand[depths[cand] >= mu - params.sub_sd * sd] if int(g) not in taken]
    bounds = [0] + [g + 1 for g in top] + [n]
    out = []
    for a, b in zip(bounds[:-1], bounds[1:]):
        inner = select([g for g in sub_pool if a <= g < b - 1], depths, a, b, [], params.min_sub)
        cuts = [a] + [g + 1 for g in inner] + [b]
        out.append((a, b, list(zip(cuts[:-1], cuts[1:])) if inner else []))
    return out


def headings_from_tiles(
    tiles: Sequence[tuple[int, int, list[tuple[int, int]]]],
    top_titles: Sequence[str],
    sub_titles: Sequence[Sequence[str]],
) -> list[Heading]:
    """The pre-order heading list of a two-level tiling (containers own 0 paragraphs)."""
    headings: list[Heading] = []
    for (a, b, subs), title, titles in zip(tiles, top_titles, sub_titles):
        if not subs:
            headings.append(Heading(1, title, b - a))
            continue
        headings.append(Heading(1, title, 0))
        headings.extend(Heading(2, t, e - s) for (s, e), t in zip(subs, titles))
    return headings
