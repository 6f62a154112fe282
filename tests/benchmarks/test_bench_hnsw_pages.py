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
        run = subprocess.run(
            [
                sys.executable,
                str(ROOT / "benchmarks" / "bench_hnsw_pages.py"),
                "build",
                "--vectors",
                str(tmp_path / "v.npy"),
                "--pages",
                pages,
                "--save",
                str(tmp_path / f"{pages}.bin"),
            ],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        out.append(run.stdout)
    assert out[0].startswith("huge: 2000 nodes, seed 42,") and out[1].startswith("ordinary: 2000 nodes, seed 42,")
    assert (tmp_path / "huge.bin").read_bytes() == (tmp_path / "ordinary.bin").read_bytes()


def test_rows_builds_a_graph_of_a_sample(tmp_path):
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from bench_hnsw_pages import sample_rows

    pick = sample_rows(2000, 500)
    assert len(pick) == 500 and len(set(pick.tolist())) == 500 and (np.diff(pick) > 0).all() and pick[-1] < 2000
    assert pick.tolist() == sample_rows(2000, 500).tolist()  # the same sample each time
    assert pick.tolist() != list(range(500))  # not a prefix
    assert sample_rows(2000, None) is None and sample_rows(2000, 2000) is None
    x = np.random.default_rng(0).standard_normal((2000, 16)).astype(np.float32)
    np.save(tmp_path / "v.npy", x / np.linalg.norm(x, axis=1, keepdims=True))
    run = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "bench_hnsw_pages.py"),
            "build",
            "--vectors",
            str(tmp_path / "v.npy"),
            "--pages",
            "huge",
            "--rows",
            "500",
        ],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        check=True,
    )
    assert run.stdout.startswith("huge: 500 nodes, seed 42,")
