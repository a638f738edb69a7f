"""Date parts taken with functions the dialect lacks are written as its EXTRACT, where they are written."""

from __future__ import annotations

import pytest

from askchain.rules.repairs.date_parts import extract_date_parts


@pytest.mark.parametrize("sql, dialect, expected, notes", [
    ("SELECT DAYOFWEEK(timestamp) AS d, AVG(gas_used) FROM blocks GROUP BY d", "bigquery",
     "SELECT EXTRACT(DAYOFWEEK FROM timestamp) AS d, AVG(gas_used) FROM blocks GROUP BY d",
     ["DAYOFWEEK(timestamp) written as EXTRACT(DAYOFWEEK FROM timestamp)"]),
    ("SELECT year(DATE(ts)), HOUR(ts) FROM t", "bigquery",
     "SELECT EXTRACT(YEAR FROM DATE(ts)), EXTRACT(HOUR FROM ts) FROM t",
     ["year(DATE(ts)) written as EXTRACT(YEAR FROM DATE(ts))", "HOUR(ts) written as EXTRACT(HOUR FROM ts)"]),
    ("SELECT DAYOFMONTH(ts) FROM t", "bigquery", "SELECT EXTRACT(DAY FROM ts) FROM t",
     ["DAYOFMONTH(ts) written as EXTRACT(DAY FROM ts)"]),
    # GoogleSQL's own spellings, a column named like a part, a part as an argument or a string: as written
    ("SELECT EXTRACT(DAY FROM ts), t.year, DATE_TRUNC(ts, MONTH), 'YEAR(x)' FROM t "
     "WHERE ts > TIMESTAMP_SUB(CURRENT_TIMESTAMP(), INTERVAL 1 DAY)", "bigquery", None, []),
    ("SELECT DAY(a, b) FROM t", "bigquery", None, []),  # not a date part's one argument
    ("SELECT YEAR(x) FROM t", "duckdb", None, []),  # a dialect that has the function
    ("SELECT DAYOFWEEK(", "bigquery", None, []),  # unclosed
])
def test_date_part_functions_the_dialect_lacks_are_written_as_extract(sql, dialect, expected, notes):
    assert extract_date_parts(sql, dialect) == (expected or sql, notes)
