"""Saved KV states of earlier prompts, so a prompt can start from any of them, not only from the last one.

llama.cpp reuses the KV cache of the previous call for a shared prefix; one question's calls alternate between
prompts with different prefixes (schema linking over the light schema, generation over the linked schema, the
next question's linking again), and each switch re-evaluates a prefix that was already computed. Saving sequence
0's KV cells after a call and restoring the entry with the longest shared prefix before the next one makes every
earlier prefix nearly free (a 2k-token prompt of the 1.5B model is ~57 MB of KV cells and ~25 s of evaluation here).

States of long prompts also go to disk (StateFiles), for the next process: a new `askchain ask` on a schema seen
before reads the instructions + schema + notes prefix (~4.4k tokens of the Ethereum schema, ~70 s of evaluation on
two cores) from a file in about a second instead of evaluating it again; `askchain prepare` (`make install`) writes
it before the first question.
"""

from __future__ import annotations

import ctypes
import hashlib
import json
import os
import struct
import threading
import time
import zlib
from collections import OrderedDict
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

MIN_TOKENS = 64  # shorter prompts cost less to evaluate than to save
#: A call's state goes to disk when it evaluated this many prompt tokens that no saved state held, and a file is
#: read only when it spares this many more than memory does: ~15 s of evaluation on two cores against ~1 s of reading.
DISK_MIN_TOKENS = 1024


@dataclass
class _State:
    tokens: tuple[int, ...]
    cells: bytearray
    path: Path | None = None  # the file it was read from


def shared_prefix(a, b) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def _context_tokens(llama) -> list[int]:
    return llama.input_ids[: llama.n_tokens].tolist()


class PromptStates:
    """A least-recently-used store of sequence-0 KV states keyed by their tokens, bounded in bytes, backed by files
    that outlive the process when `files` is given."""

    def __init__(self, capacity_bytes: int, files: StateFiles | None = None):
        self.capacity_bytes = capacity_bytes
        self.files = files
        self._states: OrderedDict[tuple[int, ...], _State] = OrderedDict()
        self.restored_tokens = 0  # prompt tokens served from saved states rather than re-evaluated

    @property
    def size_bytes(self) -> int:
        return sum(len(s.cells) for s in self._states.values())

    def __len__(self) -> int:
        return len(self._states)

    def restore_best(self, llama, tokens: list[int]) -> int:
        """Load the saved state (in memory, else on disk) sharing the longest prefix with `tokens` when it beats
        what the context holds.

        Returns the prefix length now in the context (what the next evaluation can skip)."""
        current = shared_prefix(_context_tokens(llama), tokens)
        best, best_len = None, current
        for state in self._states.values():
            length = shared_prefix(state.tokens, tokens)
            if length > best_len:
                best, best_len = state, length
        candidates = [best] if best else []
        if self.files and len(tokens) >= best_len + DISK_MIN_TOKENS:
            found = self.files.best(tokens, min_length=best_len + DISK_MIN_TOKENS)
            state = self.files.read(found) if found else None
            if state:
                candidates.insert(0, state)
        for state in candidates:
            if _restore(llama, state):
                length = shared_prefix(state.tokens, tokens)
                if state.path is None:
                    self._states.move_to_end(state.tokens)
                self.restored_tokens += length - current
                return length
            current = 0  # the context refused the state and was emptied
            if state.path is not None:
                self.files.discard(state.path)
        return current

    def save(self, llama, prompt: list[int], reused: int) -> None:
        """Keep the context's state of `prompt`, of which `reused` tokens were restored before the call: in memory,
        and on disk when the call evaluated DISK_MIN_TOKENS tokens that no saved state held. Tokens decoded after the
        prompt are dropped first: no later prompt continues a sample."""
        held = shared_prefix(_context_tokens(llama), prompt)
        if held < llama.n_tokens:
            llama._ctx.kv_cache_seq_rm(-1, held, -1)
            llama.n_tokens = held
            llama._requires_eval = True  # the last logits are a sample's, not the prompt's
        tokens = tuple(prompt[:held])
        to_disk = self.files is not None and held - reused >= DISK_MIN_TOKENS
        to_memory = len(tokens) >= MIN_TOKENS and self.capacity_bytes > 0 and tokens not in self._states
        if tokens in self._states:
            self._states.move_to_end(tokens)
        if not (to_disk or to_memory):
            return
        cells = _state_cells(llama)
        if not cells:
            return
        if to_disk:
            self.files.write(tokens, cells)
        if to_memory and len(cells) <= self.capacity_bytes:
            # a saved state that is a prefix of this one is superseded by it
            for key in [k for k in self._states if tokens[: len(k)] == k]:
                del self._states[key]
            self._states[tokens] = _State(tokens, cells)
            while self.size_bytes > self.capacity_bytes:
                self._states.popitem(last=False)


def _state_cells(llama) -> bytearray:
    """Sequence 0's KV cells as llama.cpp serialises them."""
    import llama_cpp

    ctx = llama._ctx.ctx
    cells = bytearray(llama_cpp.llama_state_seq_get_size(ctx, 0))
    written = llama_cpp.llama_state_seq_get_data(ctx, (ctypes.c_uint8 * len(cells)).from_buffer(cells), len(cells), 0)
    del cells[written:]
    return cells


def _restore(llama, state: _State) -> bool:
    """Replace the context's cells by `state`'s; False (and an empty context) if llama.cpp refuses them."""
    import llama_cpp

    llama._ctx.kv_cache_seq_rm(-1, -1, -1)
    buffer = (ctypes.c_uint8 * len(state.cells)).from_buffer(state.cells)
    if llama_cpp.llama_state_seq_set_data(llama._ctx.ctx, buffer, len(state.cells), 0) == 0:
        llama.n_tokens = 0
        return False
    llama.input_ids[: len(state.tokens)] = state.tokens
    llama.n_tokens = len(state.tokens)
    llama._requires_eval = True  # the logits are not the state's: the next call decodes at least one token
    return True


class StateFiles:
    """KV states in files under one directory that processes share, bounded in bytes (least recently used go first).

    A file is named by `key` (model, llama.cpp build, context parameters: what makes cells loadable) and its tokens'
    hash. It holds the tokens before the cells, so finding the longest shared prefix reads only the beginnings of
    the files, and a CRC, so a damaged file is removed instead of loaded. Files appear by rename, whole or not at all.
    """

    SUFFIX = ".kvstate"
    _HEADER = struct.Struct("<8sIQI")  # magic, token count, cell bytes, CRC-32 of tokens and cells
    _MAGIC = b"askchKV1"
    _STALE_TEMP_S = 3600  # a temporary file this old was left by a writer that died

    def __init__(self, directory: Path, capacity_bytes: int, key: str):
        self.directory = directory
        self.capacity_bytes = capacity_bytes
        self.key = key
        directory.mkdir(parents=True, exist_ok=True)

    def _files(self) -> list[Path]:
        return sorted(self.directory.glob(f"{self.key}-*{self.SUFFIX}"))

    def best(self, tokens: list[int], min_length: int) -> Path | None:
        """The file sharing the longest prefix (at least `min_length` tokens) with `tokens`."""
        found, found_len = None, min_length - 1
        for path in self._files():
            try:
                with open(path, "rb") as file:
                    magic, n_tokens, _, _ = self._HEADER.unpack(file.read(self._HEADER.size))
                    if magic != self._MAGIC:
                        raise ValueError("not a state file")
                    saved = np.frombuffer(file.read(4 * n_tokens), dtype="<i4").tolist()
            except OSError:
                continue  # removed by another process meanwhile
            except (struct.error, ValueError):
                self.discard(path)  # files appear whole (by rename): a bad header is damage
                continue
            length = shared_prefix(saved, tokens)
            if length > found_len:
                found, found_len = path, length
        return found

    def read(self, path: Path) -> _State | None:
        """The state in `path`, or None (and the file removed) if it is damaged."""
        try:
            with open(path, "rb") as file:
                data = bytearray(os.fstat(file.fileno()).st_size)
                file.readinto(data)
        except OSError:
            return None  # evicted by another process meanwhile, or unreadable: evaluated instead
        try:
            magic, n_tokens, n_cells, crc = self._HEADER.unpack_from(data)
            start = self._HEADER.size + 4 * n_tokens
            if magic != self._MAGIC or len(data) != start + n_cells or zlib.crc32(memoryview(data)[self._HEADER.size :]) != crc:
                raise ValueError("damaged")
        except (struct.error, ValueError):
            self.discard(path)
            return None
        tokens = tuple(np.frombuffer(data, dtype="<i4", count=n_tokens, offset=self._HEADER.size).tolist())
        del data[:start]
        _touch(path)
        return _State(tokens, data, path)

    def write(self, tokens: tuple[int, ...], cells: bytearray) -> None:
        token_bytes = np.asarray(tokens, dtype="<i4").tobytes()
        target = self.directory / f"{self.key}-{hashlib.sha256(token_bytes).hexdigest()[:32]}{self.SUFFIX}"
        if self._HEADER.size + len(token_bytes) + len(cells) > self.capacity_bytes:
            return
        if target.exists():
            _touch(target)
            return
        crc = zlib.crc32(cells, zlib.crc32(token_bytes))
        temp = self.directory / f".{target.name}.{os.getpid()}.{threading.get_ident()}.tmp"
        try:
            with open(temp, "wb") as file:
                file.write(self._HEADER.pack(self._MAGIC, len(tokens), len(cells), crc))
                file.write(token_bytes)
                file.write(cells)
            os.replace(temp, target)
        except OSError:  # a full or read-only disk costs the next process the evaluation, nothing more
            temp.unlink(missing_ok=True)
            return
        self._evict()

    def discard(self, path: Path) -> None:
        try:
            path.unlink(missing_ok=True)
        except OSError:
            pass  # still open elsewhere (Windows): a later eviction removes it

    def _evict(self) -> None:
        """Remove the least recently used files (of every key) until the directory fits its bound."""
        files, now = [], time.time()
        for entry in os.scandir(self.directory):
            try:
                stat = entry.stat()
            except FileNotFoundError:
                continue
            if entry.name.endswith(self.SUFFIX):
                files.append((stat.st_mtime, stat.st_size, Path(entry.path)))
            elif entry.name.endswith(".tmp") and now - stat.st_mtime > self._STALE_TEMP_S:
                self.discard(Path(entry.path))
        total = sum(size for _, size, _ in files)
        for _, size, path in sorted(files, key=lambda f: f[0]):
            if total <= self.capacity_bytes:
                break
            self.discard(path)
            total -= size


def _touch(path: Path) -> None:
    """Mark a file as just used, for least-recently-used eviction."""
    try:
        os.utime(path)
    except OSError:
        pass


#: Context parameters that do not change what the cells hold.
_KEY_EXCLUDED = {"n_threads", "n_threads_batch"}


def state_key(model_sha256: str, context_params) -> str:
    """What a state's cells depend on: the model's weights, the llama.cpp build that computed them (library files,
    version, the CPU features it uses) and the context parameters (size, cache types, RoPE, sequences...)."""
    params = {
        name: getattr(context_params, name)
        for name, kind in context_params._fields_
        if name not in _KEY_EXCLUDED and kind in (ctypes.c_int, ctypes.c_uint, ctypes.c_float, ctypes.c_bool)
    }
    payload = json.dumps([model_sha256, _llama_build(), params], sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


@lru_cache(maxsize=1)
def _llama_build() -> list[str]:
    import llama_cpp
    from llama_cpp import llama_cpp as bindings

    libraries = Path(bindings._lib._name).parent
    digest = hashlib.sha256()
    for path in sorted({*libraries.glob("*llama*"), *libraries.glob("*ggml*")}):
        if path.is_file():
            digest.update(path.name.encode() + path.read_bytes())
    return [llama_cpp.__version__, llama_cpp.llama_print_system_info().decode(errors="replace"), digest.hexdigest()]


def file_sha256(path: Path, directory: Path) -> str:
    """The SHA-256 of a model file, computed once and remembered in `directory` by path, size and modification time."""
    stat = path.stat()
    stamp = f"{stat.st_size} {stat.st_mtime_ns}"
    record = directory / "model_hashes" / f"{hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:32]}.txt"
    try:
        saved_stamp, digest = record.read_text().rsplit(" ", 1)
        if saved_stamp == stamp:
            return digest
    except (OSError, ValueError):
        pass
    sha256 = hashlib.sha256()
    with open(path, "rb") as file:
        while block := file.read(16 << 20):
            sha256.update(block)
    digest = sha256.hexdigest()
    record.parent.mkdir(parents=True, exist_ok=True)
    temp = record.with_suffix(f".{os.getpid()}.tmp")
    temp.write_text(f"{stamp} {digest}")
    os.replace(temp, record)
    return digest
