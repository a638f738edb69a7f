"""A real Ethereum node for the sync tests: anvil on a loopback port, with an ERC-20, an ERC-721 and an MKR-style
token (bytes32 name, no decimals()) deployed, ether and tokens moved on back-dated days, and one transaction failed on
purpose. `chain.expected` holds what was done, for the synced tables to match."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from datetime import datetime, time as day_start, timedelta, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Callable

import pytest

HERE = Path(__file__).parent
CONTRACTS = json.loads((HERE / "fixtures" / "contracts.json").read_text())["contracts"]


@dataclass
class Chain:
    url: str
    w3: object
    accounts: list[str]
    days: list  # the UTC days the scenario used, oldest first
    expected: dict = field(default_factory=dict)

    def at(self, day, seconds: int) -> None:
        """The next block's time: `seconds` after 00:00 UTC of `day`."""
        when = datetime.combine(day, day_start(), timezone.utc) + timedelta(seconds=seconds)
        self.w3.provider.make_request("evm_setNextBlockTimestamp", [int(when.timestamp())])

    def send(self, day, seconds: int, **tx) -> dict:
        self.at(day, seconds)
        return self.w3.eth.wait_for_transaction_receipt(self.w3.eth.send_transaction(tx))

    def deploy(self, day, seconds: int, name: str, *args):
        spec = CONTRACTS[name]
        factory = self.w3.eth.contract(abi=spec["abi"], bytecode=spec["bytecode"])
        self.at(day, seconds)
        receipt = self.w3.eth.wait_for_transaction_receipt(factory.constructor(*args).transact({"from": self.accounts[0]}))
        return self.w3.eth.contract(address=receipt.contractAddress, abi=spec["abi"])

    def call(self, contract, day, seconds: int, function: str, *args, **tx) -> dict:
        self.at(day, seconds)
        sent = getattr(contract.functions, function)(*args).transact({"from": self.accounts[0], **tx})
        return self.w3.eth.wait_for_transaction_receipt(sent)


@pytest.fixture(scope="module")
def anvil_node(start_anvil):
    """A fresh anvil whose genesis is 00:00 UTC five days ago; stopped after the module."""
    web3 = pytest.importorskip("web3")
    today = datetime.now(timezone.utc).date()
    genesis = datetime.combine(today - timedelta(days=5), day_start(), timezone.utc)
    node, url = start_anvil(genesis)
    w3 = web3.Web3(web3.HTTPProvider(url))
    yield Chain(url, w3, w3.eth.accounts, [today - timedelta(days=n) for n in (4, 3, 2)])
    node.kill()
    node.wait()


@pytest.fixture(scope="module")
def chain(anvil_node) -> Chain:
    """The scenario: day 1 deploys and ether transfers, day 2 token transfers, NFT mints and a failed transfer, day 3
    (the data's last, partial day) one more ether transfer."""
    c = anvil_node
    a = c.accounts
    day1, day2, day3 = c.days
    dollar = c.deploy(day1, 3600, "TestToken", "Test Dollar", "TUSD", 6, 1_000_000 * 10**6)
    kittens = c.deploy(day1, 3612, "TestNFT")
    legacy = c.deploy(day1, 3624, "LegacyToken")
    for seconds, (sender, to, ether) in enumerate([(0, 1, 1), (0, 2, 2), (1, 3, 0.5)]):
        c.send(day1, 7200 + 12 * seconds, **{"from": a[sender], "to": a[to], "value": int(ether * 10**18)})
    c.call(dollar, day2, 3600, "transfer", a[1], 100 * 10**6)
    c.call(dollar, day2, 3612, "transfer", a[2], 250 * 10**6)
    c.call(kittens, day2, 3624, "mint", a[0], 1)
    c.call(kittens, day2, 3636, "mint", a[0], 2)
    c.call(kittens, day2, 3648, "transferFrom", a[0], a[1], 1)
    c.call(legacy, day2, 3660, "transfer", a[1], 10)
    failed = c.call(dollar, day2, 3672, "transfer", a[3], 10**15, gas=100_000)  # more than the sender holds
    assert failed.status == 0
    c.send(day3, 36000, **{"from": a[2], "to": a[4], "value": 3 * 10**17})
    c.expected = {
        "blocks": 14 + 1, "transactions": 14, "failed": 1, "ether_wei": int(3.8 * 10**18), "contracts": 3,
        "token_transfers": 7, "tusd_moved": 1_000_000 * 10**6 + 350 * 10**6,
        "tokens": {dollar.address.lower(): ("TUSD", "Test Dollar", "6", str(1_000_000 * 10**6)),
                   kittens.address.lower(): ("KIT", "Test Kittens", None, "2"),
                   legacy.address.lower(): ("LGC", "Legacy Maker", None, "1000")},
        "erc20": {dollar.address.lower(), legacy.address.lower()}, "erc721": {kittens.address.lower()},
    }
    return c


class Proxy:
    """An HTTP front for a node that changes its answers: `rule(body)` returns (status, payload) to answer instead,
    or None to pass the request on."""

    def __init__(self, upstream: str, rule: Callable[[list | dict], tuple[int, object] | None]):
        import requests

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                override = rule(json.loads(body))
                if override is None:
                    answer = requests.post(upstream, data=body, headers={"Content-Type": "application/json"}, timeout=30)
                    status, payload = answer.status_code, answer.content
                else:
                    status, payload = override[0], json.dumps(override[1]).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def proxy(chain):
    """Proxy(rule) in front of the scenario's node, closed after the test."""
    made = []

    def make(rule):
        made.append(Proxy(chain.url, rule))
        return made[-1]
    yield make
    for p in made:
        p.close()


def answer_without(upstream: str, prefixes: tuple[str, ...]) -> Callable[[list | dict], tuple[int, object] | None]:
    """A Proxy rule for a node that lacks some methods: a call whose method starts with one of `prefixes` is answered
    -32601 Method not found, as geth answers an unknown method; the other calls of its batch go to `upstream`."""
    import requests

    def rule(body):
        calls = body if isinstance(body, list) else [body]
        missing = [c for c in calls if c["method"].startswith(prefixes)]
        if not missing:
            return None
        passed = [c for c in calls if not c["method"].startswith(prefixes)]
        answers = {a["id"]: a for a in (requests.post(upstream, json=passed, timeout=30).json() if passed else [])}
        answers |= {c["id"]: {"jsonrpc": "2.0", "id": c["id"], "error": {"code": -32601, "message": "Method not found"}}
                    for c in missing}
        ordered = [answers[c["id"]] for c in calls]
        return 200, ordered if isinstance(body, list) else ordered[0]
    return rule


@pytest.fixture
def node_without(chain, proxy):
    """node_without(*prefixes): a Proxy in front of the scenario's node that has no method starting with them."""
    return lambda *prefixes: proxy(answer_without(chain.url, prefixes))
