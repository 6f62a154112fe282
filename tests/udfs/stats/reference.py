"""Independent references for the statistics kernels' tests: plain Python loops, no vectorization."""

from __future__ import annotations

import numpy as np


def plain_clustered_bootstrap(values, clusters, n_boot, seed):
    """B replicate means of a document-clustered bootstrap, one replicate at a time: clusters sorted by id, drawn
    with ``np.random.default_rng(seed).integers`` (the kernel's draws), each replicate the mean of the drawn
    clusters' values."""
    labels = sorted(set(clusters))
    members = {c: [v for v, cc in zip(values, clusters) if cc == c] for c in labels}
    rng = np.random.default_rng(seed)
    reps = []
    for _ in range(n_boot):
        drawn = rng.integers(0, len(labels), size=len(labels))
        total, count = 0.0, 0
        for j in drawn:
            total += sum(members[labels[j]])
            count += len(members[labels[j]])
        reps.append(total / count)
    return np.array(reps)
