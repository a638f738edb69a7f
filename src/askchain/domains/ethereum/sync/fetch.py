"""What a block range costs in JSON-RPC: each block with its transactions, its receipts (one call a block where the
node has eth_getBlockReceipts, else one a transaction) and its traces (trace_block, else debug_traceBlockByNumber's
call tracer, else none: the fallback is stated, not silent)."""

from __future__ import annotations

from dataclasses import dataclass

from askchain.domains.ethereum.sync.rpc import RpcClient, RpcError
from askchain.errors import DatasetError

BLOCK_RECEIPTS = "eth_getBlockReceipts"
TX_RECEIPT = "eth_getTransactionReceipt"
TRACE_BLOCK = "trace_block"
DEBUG_TRACE = "debug_traceBlockByNumber"
CALL_TRACER = {"tracer": "callTracer"}


@dataclass(frozen=True)
class Sources:
    """How this node is read: the receipts method, the trace method (None: no traces) and what that leaves out."""

    receipts: str
    traces: str | None
    note: str | None = None


@dataclass
class Fetched:
    block: dict
    receipts: list[dict]
    traces: list[dict] | None  # as the trace method answered: trace_block's flat list or the call tracer's trees


def _trace_call(method: str, number: int) -> tuple[str, list]:
    return (method, [hex(number), CALL_TRACER]) if method == DEBUG_TRACE else (method, [hex(number)])


def probe_sources(client: RpcClient, number: int, traces: str) -> Sources:
    """Which receipt and trace methods the node answers, tried on block `number`. A trace method asked for by name
    that the node lacks is an error; `auto` falls back to the next one, and to none with a note."""
    wanted = [] if traces == "none" else [TRACE_BLOCK, DEBUG_TRACE] if traces == "auto" else [traces]
    answers = client.batch([(BLOCK_RECEIPTS, [hex(number)]), *(_trace_call(m, number) for m in wanted)], tolerate=True)
    receipts = TX_RECEIPT if isinstance(answers[0], RpcError) else BLOCK_RECEIPTS
    for method, answer in zip(wanted, answers[1:]):
        if not isinstance(answer, RpcError):
            return Sources(receipts, method)
    if traces == "none":
        return Sources(receipts, None, "traces not fetched (--traces none): traces stay empty, contracts come from receipts")
    if traces != "auto":
        raise DatasetError(f"{client.label} does not answer {traces} ({answers[1].message}); use --traces auto or none")
    reasons = "; ".join(f"{m}: {a.message}" for m, a in zip(wanted, answers[1:]))
    return Sources(receipts, None, f"{client.label} offers no traces ({reasons}): the traces table stays empty and "
                                   "contracts come from receipts only (those created by other contracts are missed)")


def fetch_blocks(client: RpcClient, numbers: list[int], sources: Sources) -> list[Fetched]:
    """Blocks `numbers` with their receipts and traces, in order; a block the node no longer has is an error."""
    calls = []
    for number in numbers:
        calls.append(("eth_getBlockByNumber", [hex(number), True]))
        if sources.receipts == BLOCK_RECEIPTS:
            calls.append((BLOCK_RECEIPTS, [hex(number)]))
        if sources.traces:
            calls.append(_trace_call(sources.traces, number))
    answers = iter(client.batch(calls))
    fetched = []
    for number in numbers:
        block = next(answers)
        if block is None:
            raise DatasetError(f"{client.label} has no block {number} any more (a reorganization under way?); sync again")
        receipts = next(answers) if sources.receipts == BLOCK_RECEIPTS else []
        traces = next(answers) if sources.traces else None
        fetched.append(Fetched(block, receipts or [], traces))
    if sources.receipts == TX_RECEIPT:
        _receipts_by_transaction(client, fetched)
    return fetched


def _receipts_by_transaction(client: RpcClient, fetched: list[Fetched]) -> None:
    hashes = [tx["hash"] for item in fetched for tx in item.block["transactions"]]
    receipts = iter(client.batch([(TX_RECEIPT, [h]) for h in hashes]))
    for item in fetched:
        item.receipts = [next(receipts) for _ in item.block["transactions"]]
