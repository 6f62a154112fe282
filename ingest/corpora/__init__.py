"""Corpus loaders: QASPER and Wikipedia (structured, gold heading trees), BEIR and HotpotQA (flat, judged by qrels)."""
