"""The chat interface: usage metering, the response cache, structured output."""

from pydantic import BaseModel

from askchain.llm.base import parse_json_reply, track_usage
from askchain.llm.cache import ResponseCache
from askchain.llm.fake import ScriptedModel


class Tables(BaseModel):
    tables: list[str]


def test_usage_is_metered_per_context():
    model = ScriptedModel(lambda request, i: f"reply {i}")
    with track_usage() as outer:
        model.complete([{"role": "user", "content": "one two three"}], n=3, temperature=0.7)
        with track_usage() as inner:
            model.complete([{"role": "user", "content": "four"}])
    assert outer.calls == 2 and inner.calls == 1
    assert outer.prompt_tokens == 3 * 3 + 1
    assert outer.completion_tokens == 3 * 2 + 2


def test_cache_answers_identical_requests_without_the_model(tmp_path):
    cache = ResponseCache(tmp_path / "cache.sqlite")
    model = ScriptedModel(lambda request, i: "SELECT 1", cache=cache)
    messages = [{"role": "user", "content": "q"}]
    first = model.complete(messages, seed=1)
    with track_usage() as usage:
        again = model.complete(messages, seed=1)
        model.complete(messages, seed=2)
    assert first.texts == again.texts
    assert len(model.requests) == 2  # the repeated request never reached the model
    assert usage.cached_calls == 1


def test_structured_output_is_validated():
    model = ScriptedModel(lambda request, i: ['```json\n{"tables": ["singer"]}\n```', "no json"][i])
    completion = model.complete([{"role": "user", "content": "which tables?"}], n=2, response_model=Tables)
    assert completion.parsed[0] == Tables(tables=["singer"])
    assert completion.parsed[1] is None
    # providers without constrained decoding get the schema in the prompt
    assert '"tables"' in model.requests[0].messages[-1][1]


def test_parse_json_reply_tolerates_prose():
    assert parse_json_reply('Sure! {"tables": []} hope this helps', Tables) == Tables(tables=[])
    assert parse_json_reply('{"tables": 3}', Tables) is None
    assert parse_json_reply('{"tables": ["a", "b', Tables) is None  # cut off by max_tokens
