"""The batched sampling loop of the transformers backend: per-row sampling, a shared prompt prefix.

Rows of one batch are decoded together, but nothing random is shared between them: each row has its
own ``torch.Generator`` seeded with its request's seed, and draws exactly one number per generated
token from it, so a sampled answer depends on its own prompt, sampling parameters and seed only, not
on which rows share its batch.

Per step and row, with logits ``z`` (float32):

* ``temperature == 0``: greedy, ``argmax z`` (first maximum);
* otherwise ``p = softmax(z / temperature)``; with ``top_p < 1`` only the nucleus is kept (tokens
  sorted by ``p`` descending, a token is kept while the mass before it is ``< top_p``, so at least
  one), renormalized; one token is drawn with ``torch.multinomial(p, 1, generator=row's generator)``.

A row stops at an end-of-answer token (finish ``stop``, the token counted but not returned) or after
``max_new`` tokens (finish ``length``).

Structured output: a row may carry a :class:`Constraint` (a grammar matcher, see
:mod:`ingest.llm.grammar`). Before each choice the constraint sets the logits of every token its grammar
forbids to ``-inf`` (end-of-answer tokens are allowed only where the grammar is complete), and after it
the constraint follows the chosen token; the rule above then picks among the allowed tokens only. A
constraint that allows no token at all ends the row (finish ``stop``; it does not happen with a grammar
that always has a way to finish).

Prompt prefix: the longest token prefix common to all rows of the batch (at least
``MIN_SHARED`` tokens, leaving every row one token of its own) is run once at batch size 1 and its
key/value cache copied to every row; then each row's own suffix (left-padded to the longest suffix,
pad positions masked, position ids continuing from the prefix) and the decode steps run batched. The
prefix's cache is also kept for the next batch (:class:`Prefix`): when the next batch's common prefix
starts with it, only the new part is read. A1 prompts repeat the whole document before each chunk, so
the document is read once instead of once per chunk. Key/value caches are preallocated (no copy per
step); when a quarter of the rows have finished they are dropped from the batch.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, Sequence

import torch
from transformers.cache_utils import Cache, DynamicLayer

MIN_SHARED = 32


class Constraint(Protocol):
    """One row's grammar state (module doc)."""

    def mask(self, logits: torch.Tensor) -> bool:
        """Set the forbidden tokens of ``logits`` (1-D, float32, CPU) to ``-inf`` in place; False when
        the grammar allows no token at all."""

    def accept(self, token: int) -> None:
        """Advance past ``token`` (always one the last :meth:`mask` allowed)."""


@dataclass(frozen=True)
class Row:
    ids: Sequence[int]  # prompt token ids (chat template applied)
    temperature: float
    top_p: float
    max_new: int
    seed: int
    constraint: Constraint | None = None  # structured output: the row's grammar matcher


class _Layer(DynamicLayer):
    """A key/value cache layer preallocated to ``capacity`` positions: ``update`` writes in place and
    returns views of the filled part (DynamicLayer concatenates, copying the whole cache every step)."""

    def __init__(self, capacity: int):
        super().__init__()
        self.capacity = capacity
        self.length = 0

    def lazy_initialization(self, key_states: torch.Tensor, value_states: torch.Tensor) -> None:
        b, h, _, d = key_states.shape
        self.device = key_states.device
        self._k = torch.empty((b, h, self.capacity, d), dtype=key_states.dtype, device=self.device)
        self._v = torch.empty(
            (b, h, self.capacity, value_states.shape[-1]), dtype=value_states.dtype, device=self.device
        )
        self.is_initialized = True

    def update(self, key_states: torch.Tensor, value_states: torch.Tensor, *args, **kwargs):
        if not self.is_initialized:
            self.lazy_initialization(key_states, value_states)
        n = key_states.shape[-2]
        self._k[:, :, self.length : self.length + n] = key_states
        self._v[:, :, self.length : self.length + n] = value_states
        self.length += n
        self.keys, self.values = self._k[:, :, : self.length], self._v[:, :, : self.length]
        return self.keys, self.values

    def get_seq_length(self) -> int:
        return self.length

    def preload(self, keys: torch.Tensor, values: torch.Tensor) -> None:
        """Start from a prefix read earlier (batch 1)."""
        self.lazy_initialization(keys, values)
        n = keys.shape[-2]
        self._k[:, :, :n], self._v[:, :, :n] = keys, values
        self.length = n
        self.keys, self.values = self._k[:, :, :n], self._v[:, :, :n]

    def broadcast(self, batch: int) -> None:
        """Copy the single row held so far to ``batch`` rows."""
        self._k = self._k.expand(batch, -1, -1, -1).contiguous()
        self._v = self._v.expand(batch, -1, -1, -1).contiguous()
        self.keys, self.values = self._k[:, :, : self.length], self._v[:, :, : self.length]

    def select(self, rows: torch.Tensor) -> None:
        self._k, self._v = self._k[rows], self._v[rows]
        self.keys, self.values = self._k[:, :, : self.length], self._v[:, :, : self.length]


@dataclass
class Prefix:
    """A prompt prefix already read: its token ids and per-layer keys and values (batch 1)."""

    ids: tuple[int, ...]
    layers: list[tuple[torch.Tensor, torch.Tensor]]


def common_prefix(sequences: Sequence[Sequence[int]]) -> int:
    """Length of the longest prefix shared by every sequence."""
    first, n = sequences[0], min(len(s) for s in sequences)
    for i in range(n):
        t = first[i]
        if any(s[i] != t for s in sequences):
            return i
    return n


def choose(logits: torch.Tensor, temperature: float, top_p: float, generator: torch.Generator) -> int:
    """The next token of one row (module doc); ``logits`` is a float32 vector on the CPU."""
    if temperature <= 0:
        return int(torch.argmax(logits))
    probs = torch.softmax(logits / temperature, dim=-1)
    if top_p < 1.0:
        sorted_p, order = torch.sort(probs, descending=True)
        keep = (torch.cumsum(sorted_p, dim=-1) - sorted_p) < top_p
        sorted_p = torch.where(keep, sorted_p, torch.zeros_like(sorted_p))
        return int(order[torch.multinomial(sorted_p / sorted_p.sum(), 1, generator=generator)])
    return int(torch.multinomial(probs, 1, generator=generator))


@torch.inference_mode()
def decode(
    lm: Any, rows: Sequence[Row], *, eos: set[int], pad: int, prefix: Prefix | None = None
) -> tuple[list[tuple[list[int], str]], Prefix | None]:
    """Generated token ids (without the end token) and finish reason (``stop`` | ``length``) per row, and
    the prefix read for this batch (to pass to the next call; ``prefix`` is the previous call's)."""
    device = lm.device
    n = len(rows)
    shared = common_prefix([r.ids for r in rows]) if n > 1 else 0
    shared = min(shared, min(len(r.ids) for r in rows) - 1)
    shared = shared if shared >= MIN_SHARED else 0
    suffixes = [list(r.ids[shared:]) for r in rows]
    width = max(len(s) for s in suffixes)
    capacity = shared + width + max(r.max_new for r in rows)
    cache = Cache(layers=[_Layer(capacity) for _ in range(lm.config.num_hidden_layers)])
    kept = None
    if shared:
        head = tuple(rows[0].ids[:shared])
        done = 0
        if prefix is not None and len(prefix.ids) <= shared and head[: len(prefix.ids)] == prefix.ids:
            for layer, (k, v) in zip(cache.layers, prefix.layers):
                layer.preload(k, v)
            done = len(prefix.ids)
        if done < shared:
            lm(
                input_ids=torch.tensor([list(head[done:])], device=device),
                cache=cache,
                position_ids=torch.arange(done, shared, device=device)[None],
                use_cache=True,
                logits_to_keep=1,
            )
        kept = Prefix(head, [(layer.keys.clone(), layer.values.clone()) for layer in cache.layers])
        for layer in cache.layers:
            layer.broadcast(n)

    input_ids = torch.full((n, width), pad, dtype=torch.long)
    own = torch.zeros((n, width), dtype=torch.long)
    for i, s in enumerate(suffixes):
        input_ids[i, width - len(s) :] = torch.tensor(s)
        own[i, width - len(s) :] = 1
    mask = torch.cat([torch.ones((n, shared), dtype=torch.long), own], dim=1)
    positions = (shared + torch.cumsum(own, dim=1) - 1).clamp(min=0)
    out = lm(
        input_ids=input_ids.to(device),
        attention_mask=mask.to(device),
        position_ids=positions.to(device),
        cache=cache,
        use_cache=True,
        logits_to_keep=1,
    )
    logits = out.logits[:, -1].float().cpu()
    next_pos = positions[:, -1] + 1

    generators = [torch.Generator().manual_seed(r.seed) for r in rows]
    tokens: list[list[int]] = [[] for _ in rows]
    finish: list[str | None] = [None] * n
    active = list(range(n))  # row index of each batch position
    while True:
        step = torch.full((len(active),), pad, dtype=torch.long)
        for b, i in enumerate(active):
            if finish[i] is not None:
                continue
            r = rows[i]
            if r.constraint is not None and not r.constraint.mask(logits[b]):
                finish[i] = "stop"
                continue
            token = choose(logits[b], r.temperature, r.top_p, generators[i])
            if token in eos:
                finish[i] = "stop"
                continue
            if r.constraint is not None:
                r.constraint.accept(token)
            tokens[i].append(token)
            step[b] = token
            if len(tokens[i]) >= r.max_new:
                finish[i] = "length"
        alive = [b for b, i in enumerate(active) if finish[i] is None]
        if not alive:
            break
        if len(active) - len(alive) >= max(1, len(active) // 4):  # drop finished rows
            keep = torch.tensor(alive)
            for layer in cache.layers:
                layer.select(keep.to(device))
            mask, next_pos, step = mask[keep], next_pos[keep], step[keep]
            active = [active[b] for b in alive]
        mask = torch.cat([mask, torch.ones((len(active), 1), dtype=torch.long)], dim=1)
        out = lm(
            input_ids=step[:, None].to(device),
            attention_mask=mask.to(device),
            position_ids=next_pos[:, None].to(device),
            cache=cache,
            use_cache=True,
        )
        logits = out.logits[:, -1].float().cpu()
        next_pos = next_pos + 1
    return [(t, f) for t, f in zip(tokens, finish)], kept if kept is not None else prefix
