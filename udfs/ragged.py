"""Ragged (list-of-lists) arrays as flat numpy values + offsets, the shape every kernel works on.

A DuckDB ``LIST`` column arrives in a UDF as an Arrow ``ListArray``: one flat ``values`` buffer and
``offsets`` such that row ``g`` holds ``values[offsets[g]:offsets[g+1]]``. Kernels never loop over
rows in Python; they work on the flat buffers with group ids (``np.repeat``) instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence, Union

import numpy as np
import pyarrow as pa


@dataclass(frozen=True)
class Ragged:
    """``values[offsets[g]:offsets[g+1]]`` is row ``g``; ``len(offsets) == n_rows + 1``."""

    values: np.ndarray
    offsets: np.ndarray

    @property
    def n_rows(self) -> int:
        return len(self.offsets) - 1

    @property
    def lengths(self) -> np.ndarray:
        return np.diff(self.offsets)

    @property
    def row_ids(self) -> np.ndarray:
        """Row index of every flat value."""
        return np.repeat(np.arange(self.n_rows, dtype=np.int64), self.lengths)

    @property
    def positions(self) -> np.ndarray:
        """0-based position of every flat value inside its row (rank - 1 for a ranking)."""
        return np.arange(len(self.values), dtype=np.int64) - np.repeat(self.offsets[:-1], self.lengths)


RaggedLike = Union[Ragged, pa.Array, pa.ChunkedArray, Sequence[Sequence[float]]]


def as_ragged(data: RaggedLike, dtype: type = np.float64, name: str = "list") -> Ragged:
    """Convert an Arrow list array (chunked or not) or a Python sequence of sequences to :class:`Ragged`.

    A NULL list or a NULL element is an error (metrics never guess what a missing value meant)."""
    if isinstance(data, Ragged):
        return Ragged(np.asarray(data.values, dtype=dtype), np.asarray(data.offsets, dtype=np.int64))
    if isinstance(data, pa.ChunkedArray):
        data = data.combine_chunks() if data.num_chunks != 1 else data.chunk(0)
    if not isinstance(data, pa.Array):
        data = pa.array([list(row) for row in data], type=pa.list_(pa.float64()))
    if data.null_count:
        raise ValueError(f"{name}: {data.null_count} NULL list(s); every row needs a (possibly empty) list")
    if isinstance(data, pa.LargeListArray):
        data = data.cast(pa.list_(data.type.value_type))
    offsets = np.asarray(data.offsets, dtype=np.int64)
    flat = data.values.slice(int(offsets[0]), int(offsets[-1] - offsets[0]))
    if flat.null_count:
        raise ValueError(f"{name}: {flat.null_count} NULL element(s) inside lists")
    values = flat.to_numpy(zero_copy_only=False).astype(dtype, copy=False)
    return Ragged(values, offsets - offsets[0])


def as_vector(data, n_rows: int, dtype: type = np.float64, name: str = "value") -> np.ndarray:
    """A per-row scalar argument (Arrow array, sequence or scalar) as a length-``n_rows`` array."""
    if isinstance(data, pa.ChunkedArray):
        data = data.combine_chunks() if data.num_chunks != 1 else data.chunk(0)
    if isinstance(data, pa.Array):
        if data.null_count:
            raise ValueError(f"{name}: {data.null_count} NULL value(s)")
        data = data.to_numpy(zero_copy_only=False)
    out = np.asarray(data, dtype=dtype)
    if out.ndim == 0:
        return np.full(n_rows, out, dtype=dtype)
    if len(out) != n_rows:
        raise ValueError(f"{name}: {len(out)} values for {n_rows} rows")
    return out


def ragged_arange(lengths: np.ndarray) -> np.ndarray:
    """``concatenate([arange(n) for n in lengths])`` without a Python loop."""
    lengths = np.asarray(lengths, dtype=np.int64)
    total = int(lengths.sum())
    starts = np.repeat(np.cumsum(lengths) - lengths, lengths)
    return np.arange(total, dtype=np.int64) - starts


def truncate(r: Ragged, k: np.ndarray | int) -> Ragged:
    """Keep the first ``k`` values of every row (``k`` scalar or per row)."""
    keep = np.minimum(r.lengths, np.broadcast_to(np.asarray(k, dtype=np.int64), (r.n_rows,)))
    mask = r.positions < np.repeat(keep, r.lengths)
    return Ragged(r.values[mask], np.concatenate([[0], np.cumsum(keep)]).astype(np.int64))


def check_same_shape(a: Ragged, b: Ragged, what: str) -> None:
    """Raise unless two ragged arrays have identical row lengths (e.g. starts and ends)."""
    if a.n_rows != b.n_rows or not np.array_equal(a.offsets, b.offsets):
        raise ValueError(f"{what}: the two lists differ in row count or row lengths")
