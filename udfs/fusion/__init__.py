"""Rank fusion rules, one per module (ranx style), over a dense stack of runs (:mod:`udfs.fusion.stack`).

Every rule is a typed public function ``rule(stack_values, members) -> fused`` where the stack holds,
for N items (a document of one query group) and S runs, the run's score or rank of the item (NaN / 0
where the run does not list it), ``members`` is an (M, S) boolean matrix (one row per fusion: which
runs it combines), and the result is (N, M) fused scores, NaN where no member lists the item. Each
rule equals ranx ``fuse`` (ranx 0.3.21) on the same runs; the module docstrings give the formula and
the exact ranx call. Rankings of fused scores: :mod:`udfs.fusion.ranking`.

    comb_max   ranx fuse(norm=None, method="max")         the score-based union (each document keeps its max)
    rrf        ranx fuse(method="rrf", params={"k": 60})  reciprocal-rank fusion
    comb_sum   ranx fuse(norm="min-max", method="sum")    CombSUM of min-max normalized scores
    comb_mnz   ranx fuse(norm="min-max", method="mnz")    CombMNZ of min-max normalized scores
    min_max    ranx min-max normalization (used by comb_sum and comb_mnz)

Shared machinery: :mod:`udfs.fusion.stack` (long rows -> the dense stack), :mod:`udfs.fusion.subsets`
(every subset's sum / max from a smaller subset's), :mod:`udfs.fusion.ranking` (ranks and top k of fused
scores, ties by doc_id).
"""
