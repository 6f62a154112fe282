"""Chunkers: structural (per structure), fixed size-matched, and whole-document.

Every chunker returns chunks that tile the document body exactly and contiguously
(``docs/design.md``): the first chunk starts at ``paragraphs[0].char_start``, each chunk starts where
the previous one ended, the last ends at ``paragraphs[-1].char_end``. All chunk edges are sentence
starts (:mod:`ingest.chunking.sentences`; a paragraph start is a sentence start), so the separators between
sentences and paragraphs belong to the END of the chunk before them. A chunk's content is
``text[char_start:char_end].strip()`` and ``content_tokens`` counts that content
(:mod:`ingest.chunking.tokens`, no special tokens).

Decisions (split, merge, window edges) use the per-sentence token counts ``t_k`` of the stripped
sentences and add them up: ``tokens(sentences a..b) = sum t_k``. For the default WordPiece tokenizer
this sum is exact (WordPiece splits words at whitespace, and sentences meet at whitespace); the
stored ``content_tokens`` is always recounted on the final chunk text by the caller.

Structural chunks (one structure, :func:`structural_chunks`)
    1. One piece per section with a non-empty *own segment* (its paragraphs not inside any child),
       in pre-order = document order. Containers (no own paragraphs) get no piece.
    2. A piece over ``MAX_TOKENS`` (350) is split at sentence boundaries by greedy fill: sentences are
       added in order while the piece stays <= 350 tokens; the sentence that would push it over starts
       the next piece. A single sentence over 350 tokens stays whole (one oversized piece).
    3. Merge: the *group* of a piece is its section's ``parent_idx`` (the document root for level-1
       sections), so pieces of one section and pieces of sibling sections share a group. Scanning
       left to right, a piece under ``MIN_TOKENS`` (60) merges with an adjacent piece of the same
       group: the smaller of the two neighbours (previous on a tie, previous when only it qualifies,
       next when only it qualifies). The merged piece takes the ``section_idx`` of the part with
       more content tokens (the earlier part on a tie), so its heading path names the section most
       of it comes from, and is examined again (it may still be under 60). A small piece with no same-group neighbour stays
       as it is. Merging may exceed 350 tokens (at most 350 + 59 for a merge of split pieces).

Fixed size-matched chunks (:func:`fixed_chunks`)
    Target window ``T`` = mean ``content_tokens`` of the document's structural chunks under the
    reference structure. With ``W`` = total sentence tokens of the body and ``n = max(1,
    floor(W / T + 1/2))`` windows, the ideal edges are at ``k * W / n`` tokens (``k = 1..n-1``); each
    snaps to the nearest sentence boundary in cumulative-token space (the earlier one on a tie) and
    duplicate edges are dropped. The realized mean is ``W / n'`` with ``n' <= n`` windows.

Whole-document chunk (:func:`doc_chunk`)
    One chunk from the first paragraph's start to the last paragraph's end.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ingest.chunking.sentences import split_sentences
from ingest.structure.segments import SectionRow

MAX_TOKENS = 350  # a structural piece above this many content tokens is split
MIN_TOKENS = 60  # a structural piece below this many content tokens merges with a neighbour
ROOT_GROUP = -1  # merge group of level-1 sections (their parent is the document)


@dataclass(frozen=True)
class BodySentences:
    """The sentences of a document body as sentence indices into global char offsets.

    ``starts[k]`` is the char offset where sentence ``k`` starts; sentence ``k`` ends where sentence
    ``k + 1`` starts (the last one at ``body_end``). ``para_first[p]`` is the index of the first sentence
    of paragraph ``p`` (``para_first[n_paragraphs] = n_sentences``). ``tokens[k]`` counts the stripped
    text of sentence ``k``.
    """

    starts: np.ndarray
    para_first: np.ndarray
    body_end: int
    tokens: np.ndarray

    def span(self, first: int, end: int) -> tuple[int, int]:
        """Char span ``[start, end)`` of sentences ``first .. end-1``."""
        stop = int(self.starts[end]) if end < len(self.starts) else self.body_end
        return int(self.starts[first]), stop


@dataclass(frozen=True)
class Piece:
    """Sentences ``first .. end-1`` as one chunk; ``section_idx`` is None outside structural chunks."""

    first: int
    end: int
    tokens: int
    section_idx: int | None = None
    group: int = ROOT_GROUP


def body_sentence_starts(text: str, paragraphs: Sequence[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray]:
    """Sentence starts over the body and the first sentence of each paragraph (see :class:`BodySentences`).

    Raises ``ValueError`` for a body without paragraphs or an empty paragraph (both are rejected by
    the loaders, so this only fires on a corrupted warehouse)."""
    if not paragraphs:
        raise ValueError("document has no paragraphs")
    starts: list[int] = []
    para_first = np.zeros(len(paragraphs) + 1, dtype=np.int64)
    for p, (s, e) in enumerate(paragraphs):
        if not s < e:
            raise ValueError(f"paragraph {p} is empty ([{s}, {e}))")
        para_first[p] = len(starts)
        starts.extend(start for start, _ in split_sentences(text[s:e], s))
    para_first[len(paragraphs)] = len(starts)
    return np.asarray(starts, dtype=np.int64), para_first


def sentence_texts(text: str, starts: np.ndarray, body_end: int) -> list[str]:
    """Stripped text of each sentence (what its token count measures)."""
    ends = list(starts[1:]) + [body_end]
    return [text[s:e].strip() for s, e in zip(starts.tolist(), ends)]


def own_segments(rows: Sequence[SectionRow]) -> list[tuple[int, int, int]]:
    """``(section_idx, first_para, last_para)`` of each section's own segment, in document order.

    The own segment runs from the section's ``para_start`` to just before its first child's
    ``para_start`` (its whole span when it has no child); containers (empty own segment) are skipped.
    """
    first_child: dict[int, int] = {}
    for r in rows:
        if r.parent_idx is not None and r.parent_idx not in first_child:
            first_child[r.parent_idx] = r.para_start
    out = []
    for r in rows:
        last = first_child.get(r.section_idx, r.para_end + 1) - 1
        if last >= r.para_start:
            out.append((r.section_idx, r.para_start, last))
    return out


def structural_chunks(rows: Sequence[SectionRow], sents: BodySentences) -> list[Piece]:
    """Structural pieces of one structure (split, then merged; see the module doc)."""
    pieces: list[Piece] = []
    expected_first = 0
    for section_idx, p0, p1 in own_segments(rows):
        a, b = int(sents.para_first[p0]), int(sents.para_first[p1 + 1])
        if a != expected_first:
            raise ValueError(f"own segments do not tile the body at section {section_idx}")
        expected_first = b
        parent = rows[section_idx].parent_idx
        group = ROOT_GROUP if parent is None else parent
        pieces.extend(Piece(f, e, t, section_idx, group) for f, e, t in greedy_split(sents.tokens, a, b))
    if expected_first != len(sents.starts):
        raise ValueError("own segments do not reach the end of the body")
    return merge_small(pieces)


def greedy_split(tokens: np.ndarray, a: int, b: int, max_tokens: int = MAX_TOKENS) -> list[tuple[int, int, int]]:
    """Split sentences ``a..b-1`` into ``(first, end, tokens)`` runs of <= ``max_tokens`` by greedy fill.

    A run that fits whole is returned as one piece; a sentence alone over the limit is its own run."""
    total = int(tokens[a:b].sum())
    if total <= max_tokens:
        return [(a, b, total)]
    runs = []
    start, acc = a, 0
    for k in range(a, b):
        t = int(tokens[k])
        if k > start and acc + t > max_tokens:
            runs.append((start, k, acc))
            start, acc = k, 0
        acc += t
    runs.append((start, b, acc))
    return runs


def merge_small(pieces: Sequence[Piece], min_tokens: int = MIN_TOKENS) -> list[Piece]:
    """Merge pieces under ``min_tokens`` with a same-group neighbour (rule and order: module doc)."""
    out = list(pieces)
    i = 0
    while i < len(out):
        p = out[i]
        prev_ok = i > 0 and out[i - 1].group == p.group
        next_ok = i + 1 < len(out) and out[i + 1].group == p.group
        if p.tokens >= min_tokens or not (prev_ok or next_ok):
            i += 1
            continue
        j = i - 1 if prev_ok and (not next_ok or out[i - 1].tokens <= out[i + 1].tokens) else i
        left, right = out[j], out[j + 1]
        major = left.section_idx if left.tokens >= right.tokens else right.section_idx
        out[j] = Piece(left.first, right.end, left.tokens + right.tokens, major, left.group)
        del out[j + 1]
        i = j
    return out


def fixed_chunks(tokens: np.ndarray, target: float) -> list[Piece]:
    """Size-matched windows over all sentences of the body (rule: module doc)."""
    n_sent = len(tokens)
    cum = np.concatenate([[0], np.cumsum(tokens, dtype=np.int64)])
    total = int(cum[-1])
    n = 1 if target <= 0 else max(1, int(np.floor(total / target + 0.5)))
    edges = np.zeros(0, dtype=np.int64)
    if n > 1 and n_sent > 1:
        ideal = np.arange(1, n, dtype=np.float64) * total / n
        inner = cum[1:n_sent].astype(np.float64)  # boundary j (after j sentences, 1..n_sent-1) at cum[j]
        idx = np.searchsorted(inner, ideal, side="left")
        lo = np.clip(idx - 1, 0, n_sent - 2)
        hi = np.clip(idx, 0, n_sent - 2)
        pick = np.where(np.abs(ideal - inner[lo]) <= np.abs(inner[hi] - ideal), lo, hi)
        edges = np.unique(pick + 1)
    bounds = np.concatenate([[0], edges, [n_sent]])
    return [Piece(int(f), int(e), int(cum[e] - cum[f])) for f, e in zip(bounds[:-1], bounds[1:])]


def doc_chunk(n_sentences: int, tokens: np.ndarray) -> list[Piece]:
    """The whole body as one piece."""
    return [Piece(0, n_sentences, int(tokens.sum()))]
