"""Retrieval metrics, one module per metric family; each a typed public function over a private
vectorized kernel working on ragged (list-of-lists) inputs, see :mod:`udfs.ragged`."""
