"""The embedded model over a chain synced from a real node: `askchain ask --db <synced file>` answers what the
scenario did on the chain, and says how fresh the data is."""

from __future__ import annotations

import pytest

from askchain.config import get_settings
from askchain.domains.ethereum.sync.run import SyncRequest, sync

pytestmark = [pytest.mark.llm, pytest.mark.timeout(2400)]


def test_failed_transactions_counted_over_synced_data_with_the_embedded_model(chain, ask_over, tmp_path):
    out = tmp_path / "chain.duckdb"
    sync(SyncRequest(chain.url, out, from_block=0, progress=False), get_settings().eth_sync)
    result, _ = ask_over(out, "How many transactions failed?")
    assert result["error"] is None, result["sql"]
    assert result["rows"] == [[chain.expected["failed"]]], (result["sql"], result["rows"])
    assert result["freshness"].startswith(f"data through block {chain.expected['blocks'] - 1:,}, ")
