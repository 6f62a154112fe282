"""Plain-Python, character-by-character reference implementations the vectorized kernels are checked against."""

from __future__ import annotations

import math


def dcg(ranking, spans, k):
    covered = [set() for _ in spans]
    total = 0.0
    for i, (a, b) in enumerate(ranking[:k]):
        gain = 0.0
        for j, (s, e) in enumerate(spans):
            new = set(range(max(a, s), min(b, e))) - covered[j]
            covered[j] |= new
            gain += len(new) / (e - s)
        total += gain / len(spans) / math.log2(i + 2)
    return total


def greedy_idcg(pool, spans, k):
    covered = [set() for _ in spans]
    total = 0.0
    for step in range(k):
        best, best_gain = None, 0.0
        for c, (a, b) in enumerate(pool):
            gain = sum(
                len(set(range(max(a, s), min(b, e))) - covered[j]) / (e - s) for j, (s, e) in enumerate(spans)
            ) / len(spans)
            if gain > best_gain + 1e-15:
                best, best_gain = c, gain
        if best is None:
            break
        a, b = pool[best]
        for j, (s, e) in enumerate(spans):
            covered[j] |= set(range(max(a, s), min(b, e)))
        total += best_gain / math.log2(step + 2)
    return total


def greedy_order(pool, spans, k):
    covered = [set() for _ in spans]
    order = []
    for _ in range(k):
        best, best_gain = None, 0.0
        for c, (a, b) in enumerate(pool):
            gain = sum(len(set(range(max(a, s), min(b, e))) - covered[j]) / (e - s) for j, (s, e) in enumerate(spans))
            if gain > best_gain + 1e-15:
                best, best_gain = c, gain
        if best is None:
            break
        order.append(pool[best])
        a, b = pool[best]
        for j, (s, e) in enumerate(spans):
            covered[j] |= set(range(max(a, s), min(b, e)))
    return order


def span_recall(ranking, spans, k, threshold=0.5):
    chars = set()
    for a, b in ranking[:k]:
        chars |= set(range(a, b))
    return sum(len(chars & set(range(s, e))) / (e - s) >= threshold for s, e in spans) / len(spans)


def tbc(ranking, tokens, spans, budget):
    chars, used = set(), 0
    for (a, b), t in zip(ranking, tokens):
        if used + t > budget:
            break
        used += t
        chars |= set(range(a, b))
    gold = set()
    for s, e in spans:
        gold |= set(range(s, e))
    return len(chars & gold) / len(gold)
