"""benchmarks/bench_hnsw_dimension.py: TwoNN on hand-computed points and on data of a known intrinsic dimension,
and synthetic vectors of the asked dimension."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from bench_hnsw_dimension import DIM, synth, twonn  # noqa: E402


def test_twonn_on_three_hand_computed_points():
    # unit vectors at angles 0, 60 and 180 degrees: chord lengths 1 (0-60), 2 (0-180), sqrt(3) (60-180)
    x = np.array([[1.0, 0.0], [0.5, math.sqrt(3) / 2], [-1.0, 0.0]], dtype=np.float32)
    # mu = r2 / r1: at 0 degrees 2 / 1, at 60 degrees sqrt(3) / 1, at 180 degrees 2 / sqrt(3)
    want = 3 / (math.log(2) + math.log(math.sqrt(3)) + math.log(2 / math.sqrt(3)))
    d, n = twonn(x, block=2)
    assert n == 3 and d == pytest.approx(want, rel=1e-5)


@pytest.mark.parametrize("dim", [4, 12])
def test_synthetic_vectors_have_the_asked_intrinsic_dimension(dim):
    x = synth(dim, 4000, seed=1, block=1000)
    assert x.shape == (4000, DIM) and x.dtype == np.float32
    assert np.allclose(np.linalg.norm(x, axis=1), 1, atol=1e-5)
    assert np.linalg.matrix_rank(x[:200].astype(np.float64), tol=1e-4) == dim  # on a dim-dimensional subspace
    d, _ = twonn(x)
    assert dim - 2.5 < d < dim + 1  # the sphere in dim dimensions has dimension dim - 1; TwoNN is noisy
    assert np.array_equal(synth(dim, 4000, seed=1, block=1000), x)  # deterministic
