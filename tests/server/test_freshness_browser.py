"""The web UI's footer says how fresh local Ethereum data is (headless Chromium, scripted model): the simulated copy's
freshness line, and over a synced file an answer reading balances that were not fetched says so beside it."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import httpx
import pytest

from askchain.config import get_settings
from askchain.domains.ethereum.dataset import build_dataset, utc_today
from askchain.domains.ethereum.engine import EthereumEngine
from askchain.domains.ethereum.sync.run import SyncRequest, sync
from askchain.llm.fake import ScriptedModel
from askchain.server.app import create_app

pytestmark = pytest.mark.browser

BLOCKS = "SELECT COUNT(*) AS blocks FROM `bigquery-public-data.crypto_ethereum.blocks`"
BALANCES = "SELECT COUNT(*) AS holders FROM `bigquery-public-data.crypto_ethereum.balances` WHERE eth_balance > 0"


def ethereum_ui(open_ui, live_server, settings, path):
    """The web UI over the Ethereum file at `path`, its model writing BLOCKS or BALANCES as the question asks."""
    def generate(request, i: int) -> str:
        return f"```sql\n{BALANCES if 'ether' in request.values['question'] else BLOCKS}\n```"

    model = ScriptedModel({"direct": generate, "summarize": "The count is in the table."})
    served = settings.with_overrides(server={"databases": {"eth": str(path)}, "default_db": "eth"},
                                     pipeline={"examples_k": 0, "value_retrieval": False})
    return open_ui(live_server(create_app(served, model)))


def footer_of(page, question: str) -> list[str]:
    """Ask `question` in a new thread; the parts of its answer's footer."""
    page.click("#new-thread")
    page.fill("#question", question)
    page.press("#question", "Enter")
    turn = page.locator(".turn").nth(0)
    turn.locator(".turn-footer").wait_for()
    assert not turn.locator(".error").is_visible(), turn.inner_text()
    return turn.locator(".turn-footer").inner_text().split(" · ")


def test_the_footer_says_how_fresh_the_simulated_data_is(open_ui, live_server, settings, tmp_path):
    path = tmp_path / "crypto_ethereum.duckdb"
    build_dataset(path, days=2, scale=0.001, seed=3, end=utc_today(), progress=False)
    engine = EthereumEngine(str(path), get_settings().db)
    expected = engine.freshness()
    engine.close()
    page, errors = ethereum_ui(open_ui, live_server, settings, path)
    parts = footer_of(page, "How many blocks are there?")
    assert expected.startswith("data through block ") and parts[0] == expected
    assert not errors, errors


def test_synced_balances_not_fetched_are_said_beside_the_freshness(open_ui, live_server, settings, start_anvil,
                                                                   tmp_path):
    _, url = start_anvil(datetime.now(timezone.utc).replace(microsecond=0) - timedelta(hours=1))
    httpx.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "anvil_mine", "params": [3]}).raise_for_status()
    path = tmp_path / "synced.duckdb"
    sync(SyncRequest(url, path, from_block=0, progress=False), get_settings().eth_sync)
    page, errors = ethereum_ui(open_ui, live_server, settings, path)
    held = footer_of(page, "How many addresses hold ether?")
    assert held[0].startswith("data through block 3, ") and held[0].endswith(" UTC")
    assert held[1].startswith("balances were not fetched by this sync, so the balances table is empty")
    counted = footer_of(page, "How many blocks are there?")
    assert counted[0] == held[0] and not any("balances" in part for part in counted)
    assert not errors, errors
