"""Prompt states on disk: the file store on its own, then a second process restoring what the first one saved."""

import json
import os
import subprocess
import sys
import time

import pytest

from askchain.llm.prompt_states import StateFiles, file_sha256, state_key

KEY = "0123456789abcdef"


def _cells(n: int, seed: int = 1) -> bytearray:
    return bytearray((seed * 31 + i * 7) % 256 for i in range(n))


@pytest.fixture
def files(tmp_path):
    return StateFiles(tmp_path / "states", 1 << 20, KEY)


def test_the_file_sharing_the_longest_prefix_is_found_and_read_back(files):
    files.write(tuple(range(100)), _cells(1000, 1))
    files.write(tuple(range(50)) + (999,) * 100, _cells(1000, 2))
    files.write((7,) * 300, _cells(1000, 3))
    prompt = list(range(120))
    found = files.best(prompt, min_length=10)
    state = files.read(found)
    assert state.tokens == tuple(range(100)) and state.cells == _cells(1000, 1)
    assert files.best(prompt, min_length=101) is None  # no file spares that many tokens
    assert files.best([5, 6, 7], min_length=1) is None


def test_other_keys_are_not_matched(files):
    StateFiles(files.directory, 1 << 20, "fedcba9876543210").write(tuple(range(100)), _cells(1000))
    assert files.best(list(range(100)), min_length=1) is None


@pytest.mark.parametrize("damage", ["truncate", "flip_cell", "flip_token", "garbage"])
def test_a_damaged_file_is_removed_not_loaded(files, damage):
    files.write(tuple(range(100)), _cells(1000))
    (path,) = files.directory.glob(f"*{StateFiles.SUFFIX}")
    data = bytearray(path.read_bytes())
    if damage == "truncate":
        data = data[: len(data) // 2]
    elif damage == "flip_cell":
        data[-10] ^= 0xFF
    elif damage == "flip_token":
        data[StateFiles._HEADER.size + 8] ^= 0x01
    else:
        data = bytearray(b"not a state file")
    path.write_bytes(data)
    found = files.best(list(range(100)), min_length=1)  # a damaged header is removed at once, a damaged body on reading
    if found:
        assert files.read(found) is None
    assert not path.exists()


def test_a_temporary_file_is_never_matched_and_a_stale_one_is_cleaned_up(files):
    temp = files.directory / f".{KEY}-abc{StateFiles.SUFFIX}.123.456.tmp"
    temp.write_bytes(b"half written")
    assert files.best([1, 2, 3], min_length=1) is None
    files.write(tuple(range(100)), _cells(100))
    assert temp.exists()  # a writer may still be at work on it
    old = time.time() - 2 * StateFiles._STALE_TEMP_S
    os.utime(temp, (old, old))
    files.write(tuple(range(200)), _cells(100))
    assert not temp.exists()


def test_the_size_bound_removes_the_least_recently_used_files(tmp_path):
    files = StateFiles(tmp_path, 10_000, KEY)
    prompts = [tuple([p] * 10) for p in range(4)]
    for age, prompt in zip((40, 30, 20, 10), prompts):
        files.write(prompt, _cells(3000))
        path = files.best(list(prompt), min_length=10)
        os.utime(path, (time.time() - age, time.time() - age))
    # four files do not fit: writing the fourth removed the oldest one, the first
    assert [files.best(list(p), min_length=10) is not None for p in prompts] == [False, True, True, True]
    files.read(files.best(list(prompts[1]), min_length=10))  # reading makes the second the most recently used
    files.write(tuple([9] * 10), _cells(3000))
    assert [files.best(list(p), min_length=10) is not None for p in prompts] == [False, True, False, True]
    assert sum(p.stat().st_size for p in tmp_path.glob(f"*{StateFiles.SUFFIX}")) <= 10_000


def test_a_state_larger_than_the_bound_is_not_written(tmp_path):
    files = StateFiles(tmp_path, 1000, KEY)
    files.write(tuple(range(10)), _cells(2000))
    assert not list(tmp_path.iterdir())


def test_the_key_changes_with_the_model_and_the_context_not_the_threads():
    import llama_cpp

    params = llama_cpp.llama_context_default_params()
    params.n_ctx = 4096
    base = state_key("a" * 64, params)
    assert state_key("a" * 64, params) == base
    assert state_key("b" * 64, params) != base
    params.n_threads = 7
    assert state_key("a" * 64, params) == base
    for field, value in (("n_ctx", 8192), ("type_k", 8), ("rope_freq_base", 5e5)):
        changed = llama_cpp.llama_context_default_params()
        changed.n_ctx = 4096
        setattr(changed, field, value)
        assert state_key("a" * 64, changed) != base, field


def test_a_model_file_is_hashed_once_and_again_when_it_changes(tmp_path):
    model = tmp_path / "model.gguf"
    model.write_bytes(b"weights one")
    first = file_sha256(model, tmp_path / "states")
    (record,) = (tmp_path / "states" / "model_hashes").iterdir()
    stamp = record.read_text().rsplit(" ", 1)[0]
    record.write_text(f"{stamp} {'c' * 64}")  # a remembered digest is used without reading the file
    assert file_sha256(model, tmp_path / "states") == "c" * 64
    model.write_bytes(b"weights two")
    assert file_sha256(model, tmp_path / "states") not in (first, "c" * 64)


# ---------------------------------------------------------------------------------------------------------------------
# The real 0.5B model in separate processes: what one saves, the next restores.

#: ~2.3k tokens of DDL, so that the shared prefix is well over DISK_MIN_TOKENS.
SCHEMA = "\n".join(
    f"CREATE TABLE {table} (id INTEGER PRIMARY KEY, {table}_name TEXT, created_at TIMESTAMP, amount NUMERIC, "
    f"owner_address TEXT, status TEXT, block_number INTEGER, fee NUMERIC);"
    for table in [f"{kind}_{n}" for kind in ("blocks", "transactions", "logs", "traces", "tokens") for n in range(12)]
)

ASK = """
import json, sys
from askchain.config import get_settings
from askchain.llm.registry import get_model

settings = get_settings().with_overrides(llm={"cache": False, "context_tokens": 4096, "prompt_states_mb": 0})
messages = [{"role": "system", "content": sys.argv[1]}, {"role": "user", "content": "Write SQLite SQL: " + sys.argv[2]}]
reply = get_model("qwen2.5-coder-0.5b", settings).complete(messages, max_tokens=40)
print(json.dumps({"text": reply.text, "prompt": reply.usage.prompt_tokens, "restored": reply.usage.restored_tokens}))
"""


def _ask_in_a_new_process(cache_dir, question: str, disk_mb: int = 2048) -> dict:
    env = {**os.environ, "ASKCHAIN_PATHS__CACHE_DIR": str(cache_dir), "ASKCHAIN_LLM__PROMPT_STATES_DISK_MB": str(disk_mb)}
    done = subprocess.run([sys.executable, "-c", ASK, SCHEMA, question], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def _state_files(cache_dir):
    return sorted((cache_dir / "prompt_states").glob(f"*{StateFiles.SUFFIX}"))


@pytest.mark.llm
def test_a_second_process_restores_the_prefix_the_first_saved(tmp_path):
    first = _ask_in_a_new_process(tmp_path, "the 10 owners with the most blocks")
    assert first["restored"] == 0 and first["prompt"] > 2000
    assert len(_state_files(tmp_path)) == 1
    # another question over the same schema: everything before the question comes from the file
    second = _ask_in_a_new_process(tmp_path, "how many transactions failed?")
    assert second["restored"] > 2000 and second["prompt"] - second["restored"] < 30
    cold = _ask_in_a_new_process(tmp_path / "cold", "how many transactions failed?", disk_mb=0)
    assert cold["restored"] == 0 and not _state_files(tmp_path / "cold")
    assert second["text"] == cold["text"]  # greedy: the restored cells are the ones evaluation computes


@pytest.mark.llm
def test_a_truncated_state_file_is_evaluated_again_and_replaced(tmp_path):
    question = "the 10 owners with the most blocks"
    first = _ask_in_a_new_process(tmp_path, question)
    (path,) = _state_files(tmp_path)
    whole = path.stat().st_size
    with open(path, "r+b") as file:
        file.truncate(whole // 2)
    again = _ask_in_a_new_process(tmp_path, question)
    assert again["restored"] == 0 and again["text"] == first["text"]
    assert _state_files(tmp_path) == [path] and path.stat().st_size == whole  # removed, then saved whole again
