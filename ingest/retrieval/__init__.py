"""Retrieval: embedder specs, the embedding job, exact top-k, flat and two-stage runs, cross-encoder reranking."""
