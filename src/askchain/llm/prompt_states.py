"""Saved KV states of earlier prompts, so a prompt can start from any of them, not only from the last one.

llama.cpp reuses the KV cache of the previous call for a shared prefix; one question's calls alternate between
prompts with different prefixes (schema linking over the light schema, generation over the linked schema, the
next question's linking again), and each switch re-evaluates a prefix that was already computed. Saving sequence
0's KV cells after a call and restoring the entry with the longest shared prefix before the next one makes every
earlier prefix nearly free (a 2k-token prompt of the 1.5B model is ~57 MB of KV cells and ~25 s of evaluation here).
"""

from __future__ import annotations

import ctypes
from collections import OrderedDict
from dataclasses import dataclass

MIN_TOKENS = 64  # shorter prompts cost less to evaluate than to save


@dataclass
class _State:
    tokens: tuple[int, ...]
    cells: bytes


def shared_prefix(a, b) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


class PromptStates:
    """A least-recently-used store of sequence-0 KV states keyed by their tokens, bounded in bytes."""

    def __init__(self, capacity_bytes: int):
        self.capacity_bytes = capacity_bytes
        self._states: OrderedDict[tuple[int, ...], _State] = OrderedDict()
        self.restored_tokens = 0  # prompt tokens served from saved states rather than re-evaluated

    @property
    def size_bytes(self) -> int:
        return sum(len(s.cells) for s in self._states.values())

    def __len__(self) -> int:
        return len(self._states)

    def restore_best(self, llama, tokens: list[int]) -> int:
        """Load the saved state sharing the longest prefix with `tokens` when it beats what the context holds.

        Returns the prefix length now in the context (what the next evaluation can skip)."""
        current = shared_prefix(llama.input_ids[: llama.n_tokens], tokens)
        best, best_len = None, current
        for state in self._states.values():
            length = shared_prefix(state.tokens, tokens)
            if length > best_len:
                best, best_len = state, length
        if best is None:
            return current
        import llama_cpp

        ctx = llama._ctx.ctx
        llama._ctx.kv_cache_seq_rm(-1, -1, -1)
        buffer = (ctypes.c_uint8 * len(best.cells)).from_buffer_copy(best.cells)
        if llama_cpp.llama_state_seq_set_data(ctx, buffer, len(best.cells), 0) == 0:
            llama.n_tokens = 0  # the context refused the state: start from an empty cache
            return 0
        llama.input_ids[: len(best.tokens)] = best.tokens
        llama.n_tokens = len(best.tokens)
        llama._requires_eval = True  # the logits are not the state's: the next call decodes at least one token
        self._states.move_to_end(best.tokens)
        self.restored_tokens += best_len - current
        return best_len

    def save(self, llama) -> None:
        """Keep the context's sequence 0 (the prompt and whatever was decoded after it) for later prompts."""
        import llama_cpp

        tokens = tuple(int(t) for t in llama.input_ids[: llama.n_tokens])
        if len(tokens) < MIN_TOKENS or self.capacity_bytes <= 0:
            return
        if tokens in self._states:
            self._states.move_to_end(tokens)
            return
        # a saved state that is a prefix of this one is superseded by it
        for key in [k for k in self._states if tokens[: len(k)] == k]:
            del self._states[key]
        ctx = llama._ctx.ctx
        size = llama_cpp.llama_state_seq_get_size(ctx, 0)
        buffer = (ctypes.c_uint8 * size)()
        written = llama_cpp.llama_state_seq_get_data(ctx, buffer, size, 0)
        if not written or written > self.capacity_bytes:
            return
        self._states[tokens] = _State(tokens, ctypes.string_at(buffer, written))
        while self.size_bytes > self.capacity_bytes:
            self._states.popitem(last=False)
