"""benchmarks/bench_hnsw_pages.py: both page settings build a graph from a .npy and save the same bytes."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]


def test_both_page_settings_build_the_same_graph(tmp_path):
    x = np.random.default_rng(0).standard_normal((2000, 16)).astype(np.float32)
    np.save(tmp_path / "v.npy", x / np.linalg.norm(x, axis=1, keepdims=True))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = []
    for pages in ("huge", "ordinary"):
        run = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_hnsw_pages.py"), "build", "--vectors",
                              str(tmp_path / "v.npy"), "--pages", pages, "--save", str(tmp_path / f"{pages}.bin")],
                             env=env, capture_output=True, text=True, check=True)
        out.append(run.stdout)
    assert out[0].startswith("huge: 2000 nodes, seed 42,") and out[1].startswith("ordinary: 2000 nodes, seed 42,")
    assert (tmp_path / "huge.bin").read_bytes() == (tmp_path / "ordinary.bin").read_bytes()
