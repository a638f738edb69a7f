"""The chat interface: usage metering, the response cache, structured output."""

import pytest
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


def test_scripted_replies_by_prompt_template_name():
    from askchain.prompts import load_prompt

    model = ScriptedModel({"keywords": '{"keywords": []}', "rewrite": lambda request, i: request.values["question"] + "?"})
    rewrite = load_prompt("askchain.answer", "rewrite").render(history="Q1: How many singers?", question="and France")
    assert model.complete(rewrite).text == "and France?"
    assert model.complete(load_prompt("askchain.retrieval", "keywords").render(question="q")).text == '{"keywords": []}'
    assert [r.template for r in model.requests] == ["rewrite", "keywords"]
    with pytest.raises(KeyError, match="no scripted reply for prompt template 'summarize'"):
        model.complete(load_prompt("askchain.answer", "summarize").render(
            question="q", sql="SELECT 1", row_count=1, shown_note="", table="1\n1"))


def test_the_template_name_is_neither_sent_nor_part_of_the_cache_key(tmp_path):
    """The cache key depends on what the model sees: a rendered prompt and the same messages typed out share it
    (so the keys of responses cached before templates were named still hold)."""
    from askchain.prompts import load_prompt

    rendered = load_prompt("askchain.retrieval", "keywords").render(question="Which heroes wear blue?")
    typed_out = [dict(message) for message in rendered]
    model = ScriptedModel(lambda request, i: "{}", cache=ResponseCache(tmp_path / "cache.sqlite"))
    with track_usage() as usage:
        model.complete(rendered)
        model.complete(typed_out)
    assert usage.cached_calls == 1 and len(model.requests) == 1
    assert model.requests[0].message_dicts == typed_out and model.requests[0].template == "keywords"
