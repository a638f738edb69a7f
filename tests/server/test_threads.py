from askchain.answer.followup import Turn
from askchain.server.threads import STORED_ROWS, ThreadStore, TurnRecord


def record(question, sql="SELECT 1", rows=None, error=None):
    return TurnRecord(question=question, asked=question.upper(), db="d", sql=sql, answer=f"answer to {question}",
                      rows=rows or [], error=error)


def test_turns_are_numbered_per_thread_and_persist(tmp_path):
    path = tmp_path / "threads.sqlite"
    store = ThreadStore(path)
    assert store.append("a", record("one")).turn == 1
    assert store.append("b", record("other")).turn == 1
    assert store.append("a", record("two", rows=[[i] for i in range(STORED_ROWS + 10)])).turn == 2
    reopened = ThreadStore(path)
    turns = reopened.turns("a")
    assert [t.question for t in turns] == ["one", "two"]
    assert len(turns[1].rows) == STORED_ROWS
    assert reopened.turns("missing") == []


def test_history_keeps_turns_that_produced_sql(tmp_path):
    store = ThreadStore(tmp_path / "threads.sqlite")
    store.append("t", record("one"))
    store.append("t", record("failed", sql=None, error="model gave no SQL"))
    store.append("t", record("two", sql="SELECT 2", error="no such column"))
    assert store.history("t") == [Turn("ONE", "SELECT 1", "answer to one"), Turn("TWO", "SELECT 2", "answer to two")]
