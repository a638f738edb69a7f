import datetime as dt
from decimal import Decimal

import pytest

from askchain.answer.chart import MAX_BARS, ChartChoice, chart_spec, choose_chart, save_chart
from askchain.errors import AskchainError


@pytest.mark.parametrize(
    "columns, rows, expected",
    [
        (["count"], [[6]], None),  # single value
        (["name", "age"], [["Joe", 52]], None),  # single row
        (["day", "tx_count"], [[dt.date(2021, 1, 1), 5], [dt.date(2021, 1, 2), 7]], ChartChoice("line", 0, (1,))),
        (["day", "n"], [["2021-01-01", 5], ["2021-01-02 10:00:00", 7]], ChartChoice("line", 0, (1,))),
        (["year", "n", "total"], [[2019, 5, 1.5], [2020, 7, Decimal("2.5")]], ChartChoice("line", 0, (1, 2))),
        (["block_timestamp", "gas"], [[dt.datetime(2021, 1, 1, 1), 5], [dt.datetime(2021, 1, 1, 2), None]], ChartChoice("line", 0, (1,))),
        (["day", "label"], [["2021-01-01", "a"], ["2021-01-02", "b"]], None),  # time but nothing numeric
        (["country", "n"], [["France", 4], ["USA", 2]], ChartChoice("bar", 0, (1,))),
        (["n", "country"], [[4, "France"], [2, "USA"]], ChartChoice("bar", 1, (0,))),
        (["singer_id", "name", "age"], [[1, "Joe", 52], [2, "Ann", 41]], ChartChoice("bar", 1, (2,))),
        (["name", "song"], [["Joe", "Hey"], ["Ann", "Ho"]], None),  # non-numeric
        (["a", "b"], [[1, 2], [3, 4]], None),  # numbers only: no category axis
        (["flag", "n"], [[True, 1], [False, 2]], ChartChoice("bar", 0, (1,))),  # booleans are categories
        (["country", "n"], [[f"c{i}", i] for i in range(MAX_BARS + 1)], None),  # too many bars
        (["id", "name"], [[1, "Joe"], [2, "Ann"]], None),  # ids are not measures
    ],
)
def test_choose_chart(columns, rows, expected):
    assert choose_chart(columns, rows) == expected


def test_line_figure_is_sorted_by_time_and_json_ready():
    spec = chart_spec(["day", "n"], [[dt.date(2021, 1, 2), 7], [dt.date(2021, 1, 1), Decimal("5")]])
    assert spec["kind"] == "line"
    trace = spec["figure"]["data"][0]
    assert trace["type"] == "scatter"
    assert trace["x"] == ["2021-01-01", "2021-01-02"]
    assert trace["y"] == [5.0, 7]
    assert spec["figure"]["layout"]["xaxis"]["title"]["text"] == "day"


def test_bar_figure_uses_categories():
    spec = chart_spec(["country", "n", "avg_age"], [["France", 4, 30.5], ["USA", 2, 40.0]])
    assert spec["kind"] == "bar"
    assert [t["type"] for t in spec["figure"]["data"]] == ["bar", "bar"]
    assert spec["figure"]["data"][1]["name"] == "avg_age"
    assert spec["figure"]["layout"]["xaxis"]["type"] == "category"
    assert spec["figure"]["layout"]["showlegend"] is True


def test_no_chart_spec_for_a_single_value():
    assert chart_spec(["n"], [[1]]) is None


@pytest.mark.parametrize(
    "name, columns, rows, magic",
    [
        ("blocks.png", ["day", "blocks"], [["2021-01-02", 7], ["2021-01-01", 5], ["2021-01-03", None]], b"\x89PNG"),
        ("miners.svg", ["miner", "blocks", "uncles"], [["0xea674fdde714fd979de3edf0f56aa9716b898ec8", 9, 1], ["b", 4, 0]], b"<?xml"),
        ("hours.PNG", ["hour", "tx"], [[h, h * 2] for h in range(24)], b"\x89PNG"),
    ],
)
def test_save_chart_writes_the_file_its_suffix_names(tmp_path, name, columns, rows, magic):
    path = tmp_path / "charts" / name
    assert save_chart(columns, rows, path) is True
    assert path.read_bytes().startswith(magic) and path.stat().st_size > 2000


def test_save_chart_writes_nothing_when_no_chart_fits(tmp_path):
    assert save_chart(["n"], [[1]], tmp_path / "one.png") is False
    assert not (tmp_path / "one.png").exists()


def test_save_chart_refuses_other_formats(tmp_path):
    with pytest.raises(AskchainError, match=r"use a \.png or \.svg file name"):
        save_chart(["day", "n"], [["2021-01-01", 1], ["2021-01-02", 2]], tmp_path / "chart.jpg")
