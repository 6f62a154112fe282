"""A deterministic, rule-based sentence splitter that returns character offsets.

The rule (applied to one paragraph; a paragraph boundary is always a sentence boundary):

A boundary follows a run of terminal punctuation ``.``, ``!`` or ``?`` (``…`` counts too), optionally
followed by closing quotes/brackets (``" ' ) ] ” ’ »``), when ALL of these hold:

1. whitespace follows the run (so ``3.5``, ``e.g.,``, ``U.S.-based`` or ``arXiv:1909.00694`` never
   split);
2. the next non-space character, after any opening quotes/brackets (``" ' ( [ “ ‘ «``), is an
   uppercase letter or a digit (lowercase continuations such as ``approx. two`` never split);
3. if the run is a single ``.``, the word it ends is not an abbreviation: a word of
   :data:`ABBREVIATIONS` (``e.g.``, ``i.e.``, ``et al.``, ``Fig.``, ``Eq.``, ``cf.``, ``vs.``, ``No.``, …,
   compared case-insensitively), a single-letter initial (``J. Smith``), or a dotted initialism with
   two or more letters (``U.S.``, ``e.g.``). A citation before the period (``[12].``, ``(Smith, 2019).``,
   ``BIBREF3.``) is a normal word, so the period after it ends the sentence.

``etc.`` is deliberately NOT an abbreviation: followed by an uppercase word it usually ends a sentence.

Offsets: sentences tile the paragraph. Sentence ``k`` spans ``[start_k, start_{k+1})`` (the last
ends at the paragraph end), so the whitespace after a sentence belongs to the END of that sentence,
as separators do for chunks (``docs/design.md``). Offsets are Python string indices (code points).
"""

from __future__ import annotations

import re

ABBREVIATIONS: frozenset[str] = frozenset(
    """
    al. e.g. i.e. cf. vs. viz. resp. approx. ca. c. fig. figs. eq. eqs. eqn. eqns. tab. tabs. sec. secs.
    sect. ch. chap. ref. refs. no. nos. vol. vols. pp. p. ed. eds. dr. mr. mrs. ms. prof. st. jr. sr.
    inc. ltd. co. corp. dept. univ. est. appx. alg. def. thm. lem. prop. cor. col. gen. gov.
    jan. feb. mar. apr. jun. jul. aug. sep. sept. oct. nov. dec. mt. ft.
    """.split()
)

_CLOSERS = "\"')]”’»"
_OPENERS = "\"'([“‘«"
# A run of terminal punctuation, optional closers, then whitespace (captured as its own group so the
# boundary can be placed after it). The lookbehind starts a match only at the first mark of a run: without
# it a long run not followed by whitespace (100K dots) was retried from each of its marks, each try reading
# to the run's end (quadratic: minutes for 40K marks, a 10 MB run never ended); a match starting inside a
# run could only end where the one from its first mark does, so the boundaries are the same.
_CANDIDATE = re.compile(r"(?<![.!?…])([.!?…]+)([" + re.escape(_CLOSERS) + r"]*)(\s+)")
_INITIALISM = re.compile(r"^(?:[^\W\d_]\.)+$")


def _is_abbreviation(word: str) -> bool:
    """``word`` ends with its period; True for listed abbreviations, initials and dotted initialisms."""
    word = word.lstrip(_OPENERS)
    return word.lower() in ABBREVIATIONS or bool(_INITIALISM.match(word))


def sentence_starts(text: str) -> list[int]:
    """Start offsets of the sentences of one paragraph ``text`` (always begins with 0)."""
    starts = [0]
    n = len(text)
    for m in _CANDIDATE.finditer(text):
        nxt = m.end()
        while nxt < n and text[nxt] in _OPENERS:
            nxt += 1
        if nxt >= n or not (text[nxt].isupper() or text[nxt].isdigit()):
            continue
        punct = m.group(1)
        if punct == "." and not m.group(2):
            word_start = m.start()
            while word_start > 0 and not text[word_start - 1].isspace():
                word_start -= 1
            word = text[word_start : m.start() + 1]
            # 'et al.' is caught by 'al.'; a bare number before the period ("in 2019. The") is not an
            # abbreviation.
            if _is_abbreviation(word):
                continue
        if m.end() < n:
            starts.append(m.end())
    return starts


def split_sentences(text: str, offset: int = 0) -> list[tuple[int, int]]:
    """Sentence spans ``[(start, end), ...]`` tiling ``text`` exactly, shifted by ``offset``.

    An empty ``text`` has no sentences.
    """
    if not text:
        return []
    starts = sentence_starts(text)
    ends = starts[1:] + [len(text)]
    return [(offset + s, offset + e) for s, e in zip(starts, ends)]
