"""The stand-in cross-encoder: loads through the real reranker path, is the same for a seed, is labelled."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.standin_cross_encoder import build
from ingest.retrieval.rerank import resolve_reranker

PAIRS = [("who wrote hamlet", "Hamlet is a tragedy by William Shakespeare."), ("who wrote hamlet", "The cat sat.")]


def _scores(path):
    from sentence_transformers import CrossEncoder

    return CrossEncoder(str(path), device="cpu").predict(PAIRS)


def test_same_seed_same_scores_other_seed_other_scores(tmp_path):
    a = build(tmp_path / "standin-a", seed=0)
    b = build(tmp_path / "standin-b", seed=0)
    c = build(tmp_path / "standin-c", seed=1)
    assert np.array_equal(_scores(a), _scores(b)) and not np.allclose(_scores(a), _scores(c))
    assert "NOT A RERANKER" in (a / "README.md").read_text()
    spec = resolve_reranker(str(a))  # the run's reranker setting: the directory, recorded by its absolute path
    assert spec.name == str(a.resolve()) and "standin" in spec.name


def test_the_directory_name_must_say_standin(tmp_path, monkeypatch, capsys):
    import sys

    from benchmarks import standin_cross_encoder

    monkeypatch.setattr(sys, "argv", ["standin_cross_encoder.py", "--out", str(tmp_path / "my-reranker")])
    with pytest.raises(SystemExit):
        standin_cross_encoder.main()
    assert "keep 'standin' in the directory name" in capsys.readouterr().err
    with pytest.raises(ValueError, match="keep 'standin'"):
        standin_cross_encoder.build(tmp_path / "reranker")
    assert not (tmp_path / "reranker").exists() and not (tmp_path / "my-reranker").exists()
