"""The real embedded model, in-process and behind llama-cpp-python's OpenAI-compatible server."""

import socket
import subprocess
import sys
import time

import httpx
import pytest
from pydantic import BaseModel

from askchain.config import get_settings
from askchain.llm.registry import get_model

pytestmark = pytest.mark.llm


class Answer(BaseModel):
    table: str
    count_rows: bool


@pytest.fixture(scope="module")
def settings():
    return get_settings().with_overrides(llm={"cache": False, "context_tokens": 2048})


def test_embedded_model_answers_with_sql(settings):
    model = get_model("qwen2.5-coder-0.5b", settings)
    reply = model.complete([{"role": "user", "content": "Write SQLite SQL counting the rows of table singer. Only SQL."}], max_tokens=40)
    assert "count" in reply.text.lower() and "singer" in reply.text.lower()
    assert reply.usage.completion_tokens > 0 and reply.usage.prompt_tokens > 10


def test_embedded_model_structured_output_is_schema_constrained(settings):
    model = get_model("qwen2.5-coder-0.5b", settings)
    reply = model.complete(
        [{"role": "user", "content": "Which table holds singers, and does 'how many singers' count rows?"}],
        max_tokens=60, response_model=Answer,
    )
    assert isinstance(reply.parsed[0], Answer)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _answers(url: str) -> bool:
    try:
        return httpx.get(url, timeout=1).status_code == 200
    except httpx.HTTPError:
        return False


@pytest.fixture(scope="module")
def openai_server(settings, tmp_path_factory):
    path = get_model("qwen2.5-coder-0.5b", settings).path
    port = _free_port()
    log_path = tmp_path_factory.mktemp("openai-server") / "server.log"
    log = open(log_path, "w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "llama_cpp.server", "--model", str(path), "--host", "127.0.0.1", "--port", str(port),
         "--n_ctx", "2048", "--model_alias", "qwen-0.5b"],
        stdout=log, stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 120
        while not _answers(f"{base}/models"):
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail("llama_cpp.server did not start:\n" + log_path.read_text()[-2000:])
            time.sleep(0.5)
        yield base
    finally:
        proc.terminate()
        proc.wait(timeout=20)
        log.close()


def test_openai_provider_against_a_local_compatible_server(openai_server, settings, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", openai_server)
    model = get_model("openai:qwen-0.5b", settings)
    reply = model.complete([{"role": "user", "content": "Write SQLite SQL counting the rows of table singer. Only SQL."}], max_tokens=40, n=2, temperature=0.7)
    assert len(reply.texts) == 2 and all("singer" in t.lower() for t in reply.texts)
    assert reply.usage.completion_tokens > 0
    structured = model.complete([{"role": "user", "content": "Which table holds singers?"}], max_tokens=60, response_model=Answer)
    assert isinstance(structured.parsed[0], Answer)


def test_a_prompt_longer_than_the_context_is_a_one_line_error():
    from askchain.errors import ConfigError

    small = get_settings().with_overrides(llm={"cache": False, "context_tokens": 256})
    model = get_model("qwen2.5-coder-0.5b", small)
    with pytest.raises(ConfigError, match="does not fit the 256-token context"):
        model.complete([{"role": "user", "content": "SELECT 1; " * 300}], max_tokens=8)


SINGERS = [{"role": "user", "content": "Write SQLite SQL listing the names of singers older than 30 from table singer(name, age)."}]


def test_samples_decoded_together_match_sequential_decoding(settings):
    model = get_model("qwen2.5-coder-0.5b", settings)
    alone = model.complete(SINGERS, max_tokens=30).text
    together = model.complete(SINGERS, max_tokens=30, n=3)
    assert together.texts == [alone] * 3  # greedy: the same logits whether decoded alone or side by side
    assert together.usage.prompt_tokens == model.complete(SINGERS, max_tokens=30).usage.prompt_tokens  # evaluated once
    assert model.complete(SINGERS, max_tokens=30).text == alone  # the KV cache is left holding just the prompt


def test_sampled_batches_are_diverse_and_stop_at_stop_strings(settings):
    model = get_model("qwen2.5-coder-0.5b", settings)
    reply = model.complete(SINGERS, temperature=1.0, top_p=0.95, max_tokens=40, n=5, stop=[";"], seed=3)
    assert len(reply.texts) == 5 and len(set(reply.texts)) > 1
    assert all(";" not in text for text in reply.texts)
    assert reply.usage.completion_tokens > 5


@pytest.mark.parametrize("n", [1, 3])
def test_a_reply_stops_at_the_end_of_its_sql_block(settings, n):
    from askchain.generation.sql_text import END_OF_SQL_BLOCK, extract_sql

    ask = [{"role": "user", "content": "Write SQLite SQL counting the rows of table singer in a ```sql block, then explain it in detail."}]
    model = get_model("qwen2.5-coder-0.5b", settings)
    reply = model.complete(ask, temperature=0.5, max_tokens=200, n=n, stop=END_OF_SQL_BLOCK)
    for text in reply.texts:
        assert "```sql" in text and text.rstrip().rstrip(";").endswith(extract_sql(text)), text  # nothing after the query
        assert "count" in extract_sql(text).lower()


SCHEMA_A = "CREATE TABLE singer(singer_id INT PRIMARY KEY, name TEXT, country TEXT, age INT, song_name TEXT);\n" * 12
SCHEMA_B = "CREATE TABLE concert(concert_id INT PRIMARY KEY, concert_name TEXT, theme TEXT, stadium_id INT, year INT);\n" * 12


@pytest.mark.parametrize("n", [1, 3])
def test_a_prompt_resumes_from_an_earlier_saved_state_not_only_the_last(settings, n):
    """A, then B, then A again with another question: the third call starts from A's saved KV cells and answers
    exactly as it does from a cold cache (greedy)."""
    from askchain.llm.llamacpp import LlamaCppModel

    def ask(schema: str, question: str):
        return [{"role": "system", "content": schema}, {"role": "user", "content": f"Write SQLite SQL: {question}"}]

    model = get_model("qwen2.5-coder-0.5b", settings)
    assert isinstance(model, LlamaCppModel)
    states = model.loaded.states
    model.complete(ask(SCHEMA_A, "names of singers"), max_tokens=20, n=n)
    model.complete(ask(SCHEMA_B, "concerts in 2014"), max_tokens=20, n=n)
    before = states.restored_tokens
    warm = model.complete(ask(SCHEMA_A, "how many singers are older than 40?"), max_tokens=30, n=n)
    assert states.restored_tokens - before > 200  # most of A's system prompt came back from its saved state

    cold = get_model("qwen2.5-coder-0.5b", settings.with_overrides(llm={"prompt_states_mb": 0, "context_tokens": 2304}))
    assert cold.complete(ask(SCHEMA_A, "how many singers are older than 40?"), max_tokens=30, n=n).texts == warm.texts


def test_different_prompts_decoded_together_match_one_by_one(settings):
    """Revisions of several queries: prompts sharing a prefix, decoded side by side, answer as they do alone."""
    model = get_model("qwen2.5-coder-0.5b", settings)
    prompts = [
        [{"role": "system", "content": SCHEMA_A}, {"role": "user", "content": f"Write SQLite SQL: {question}"}]
        for question in ("names of singers from France", "how many singers are there?", "the oldest singer's song")
    ]
    together = model.complete_many(prompts, max_tokens=30)
    alone = [model.complete(p, max_tokens=30).text for p in prompts]
    assert [c.text for c in together] == alone
    assert all(c.usage.prompt_tokens == len_ for c, len_ in zip(together, [model.complete(p, max_tokens=1).usage.prompt_tokens for p in prompts]))


ADDRESS = [{"role": "user", "content": "Write BigQuery SQL returning eth_balance from table balances for address "
                                       "0xb9d7934878b5fb9610b3fe8a5e441e8fad7e293f. Only SQL."}]


@pytest.mark.parametrize("temperature, n", [(0.0, 1), (0.0, 3), (0.7, 3)])
def test_prompt_lookup_drafts_change_no_sample_and_save_steps(settings, monkeypatch, temperature, n):
    """Drafted tokens are kept only where the sampler draws them, so greedy samples are the same, in fewer decoding
    steps when the reply copies from the prompt (the address). Sampled ones are drawn from the same distributions,
    but a batch of several tokens per sequence computes logits in another order (last bits differ), so a seeded
    sample may take another turn: they are checked for the copy only."""
    from llama_cpp import _internals

    model = get_model("qwen2.5-coder-0.5b", settings)
    steps = []
    decode = _internals.LlamaContext.decode
    monkeypatch.setattr(_internals.LlamaContext, "decode", lambda self, batch: (steps.append(1), decode(self, batch))[1])

    def sample(drafts: int):
        monkeypatch.setattr(model, "lookup_draft_tokens", drafts)
        steps.clear()
        texts = model.complete(ADDRESS, temperature=temperature, max_tokens=80, n=n, seed=5).texts
        return texts, len(steps)

    plain, plain_steps = sample(0)
    drafted, drafted_steps = sample(10)
    assert len(drafted) == n and all("0xb9d7934878b5fb9610b3fe8a5e441e8fad7e293f" in text for text in plain + drafted)
    assert drafted == plain or temperature > 0
    assert drafted_steps < plain_steps - 10, (drafted_steps, plain_steps)


ZERO_ADDRESS = "0x" + "0" * 40
PADDED_USDC = "0x" + "0" * 24 + "a0b86991c6218b36c1d19d4a2e9eb0ce3606eb48"  # an address as a log topic


@pytest.mark.parametrize("literal", [ZERO_ADDRESS, PADDED_USDC])
@pytest.mark.parametrize("n", [1, 3])
def test_a_zero_padded_hex_literal_is_copied_whole_not_cut_as_a_loop(settings, literal, n):
    """One token per hex digit: the zero address is 40 zeros in a row, a padded topic 24. The sampler must not take
    such a run for a sample stuck repeating itself (it cut them after 18 zeros, and every mint query failed to
    parse)."""
    ask = [{"role": "user", "content": "Write exactly this SQL in a ```sql block and nothing else:\n"
                                       f"SELECT COUNT(*) FROM token_transfers WHERE from_address = '{literal}'"}]
    model = get_model("qwen2.5-coder-0.5b", settings)
    reply = model.complete(ask, max_tokens=120, n=n)
    assert all(f"'{literal}'" in text for text in reply.texts), reply.texts
