"""JSON-RPC answers as crypto_ethereum rows, the way ethereum-etl derives them (so synced, loaded and BigQuery data
read alike): hex quantities as integers, addresses in lower case, NUMERIC values as decimal strings, timestamps as
naive UTC; token transfers from ERC-20 and ERC-721 Transfer logs; traces flattened from trace_block or from the call
tracer's trees, a trace failed when it or a caller failed."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone

from askchain.domains.ethereum.sync.fetch import DEBUG_TRACE, Fetched

TRANSFER_TOPIC = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef"

Row = dict[str, object]


@dataclass
class Derived:
    """Rows per table for a run of blocks, and what the chain must still be asked about them."""

    rows: dict[str, list[Row]] = field(default_factory=lambda: {name: [] for name in (
        "blocks", "transactions", "logs", "token_transfers", "traces")})
    #: address -> (block_number, block_timestamp, block_hash) of its creation, for the contracts table
    created: dict[str, tuple[int, str, str]] = field(default_factory=dict)
    #: token contracts seen in transfers, for the tokens table
    token_addresses: set[str] = field(default_factory=set)
    #: addresses whose ether balance the blocks may have changed, for the balances table
    active: set[str] = field(default_factory=set)


def quantity(value) -> int | None:
    if value is None:
        return None
    return value if isinstance(value, int) else int(value, 16)


def utc(seconds: int) -> str:
    return datetime.fromtimestamp(seconds, timezone.utc).strftime("%Y-%m-%d %H:%M:%S")


def lower(value) -> str | None:
    return value.lower() if isinstance(value, str) else None


def derive(fetched: list[Fetched], trace_method: str | None) -> Derived:
    """The rows of `fetched` blocks, their traces read as `trace_method` answers them."""
    out = Derived()
    for item in fetched:
        block = item.block
        at = {"block_timestamp": utc(quantity(block["timestamp"])), "block_number": quantity(block["number"]),
              "block_hash": block["hash"]}
        out.rows["blocks"].append(block_row(block))
        out.active.add(lower(block["miner"]))
        out.active.update(lower(w["address"]) for w in block.get("withdrawals") or [])
        receipts = {r["transactionHash"]: r for r in item.receipts}
        for tx in block["transactions"]:
            receipt = receipts.get(tx["hash"]) or {}
            out.rows["transactions"].append(transaction_row(tx, receipt, at))
            out.active.update((lower(tx["from"]), lower(tx.get("to"))))
            if receipt.get("contractAddress") and quantity(receipt.get("status")) == 1:
                out.created.setdefault(lower(receipt["contractAddress"]), _origin(at))
            for log in receipt.get("logs") or []:
                if not log.get("removed"):
                    _log(out, log, at)
        if item.traces is not None:
            _traces(out, item.traces, trace_method, block, at)
    out.active.discard(None)
    return out


def _origin(at: dict) -> tuple[int, str, str]:
    return at["block_number"], at["block_timestamp"], at["block_hash"]


def block_row(block: dict) -> Row:
    withdrawals = block.get("withdrawals")
    return {
        "timestamp": utc(quantity(block["timestamp"])), "number": quantity(block["number"]), "hash": block["hash"],
        "parent_hash": block["parentHash"], "nonce": block.get("nonce"), "sha3_uncles": block.get("sha3Uncles"),
        "logs_bloom": block.get("logsBloom"), "transactions_root": block.get("transactionsRoot"),
        "state_root": block.get("stateRoot"), "receipts_root": block.get("receiptsRoot"), "miner": lower(block["miner"]),
        "difficulty": str(quantity(block.get("difficulty")) or 0),
        "total_difficulty": None if block.get("totalDifficulty") is None else str(quantity(block["totalDifficulty"])),
        "size": quantity(block.get("size")), "extra_data": block.get("extraData"),
        "gas_limit": quantity(block["gasLimit"]), "gas_used": quantity(block["gasUsed"]),
        "transaction_count": len(block["transactions"]), "base_fee_per_gas": quantity(block.get("baseFeePerGas")),
        "withdrawals_root": block.get("withdrawalsRoot"),
        "withdrawals": None if withdrawals is None else [
            {"index": quantity(w["index"]), "validator_index": quantity(w["validatorIndex"]),
             "address": lower(w["address"]), "amount": str(quantity(w["amount"]))} for w in withdrawals],
        "blob_gas_used": quantity(block.get("blobGasUsed")), "excess_blob_gas": quantity(block.get("excessBlobGas")),
    }


def transaction_row(tx: dict, receipt: dict, at: dict) -> Row:
    kind = quantity(tx.get("type")) or 0
    blob = kind == 3
    return {
        "hash": tx["hash"], "nonce": quantity(tx["nonce"]), "transaction_index": quantity(tx["transactionIndex"]),
        "from_address": lower(tx["from"]), "to_address": lower(tx.get("to")), "value": str(quantity(tx["value"])),
        "gas": quantity(tx["gas"]), "gas_price": quantity(tx.get("gasPrice")), "input": tx.get("input"),
        "receipt_cumulative_gas_used": quantity(receipt.get("cumulativeGasUsed")),
        "receipt_gas_used": quantity(receipt.get("gasUsed")),
        "receipt_contract_address": lower(receipt.get("contractAddress")), "receipt_root": receipt.get("root"),
        "receipt_status": quantity(receipt.get("status")), **at,
        "max_fee_per_gas": quantity(tx.get("maxFeePerGas")) if kind >= 2 else None,
        "max_priority_fee_per_gas": quantity(tx.get("maxPriorityFeePerGas")) if kind >= 2 else None,
        "transaction_type": kind, "receipt_effective_gas_price": quantity(receipt.get("effectiveGasPrice")),
        "max_fee_per_blob_gas": quantity(tx.get("maxFeePerBlobGas")) if blob else None,
        "blob_versioned_hashes": tx.get("blobVersionedHashes") if blob else None,
        "receipt_blob_gas_price": quantity(receipt.get("blobGasPrice")) if blob else None,
        "receipt_blob_gas_used": quantity(receipt.get("blobGasUsed")) if blob else None,
    }


def _log(out: Derived, log: dict, at: dict) -> None:
    topics = [t.lower() for t in log.get("topics") or []]
    row = {"log_index": quantity(log["logIndex"]), "transaction_hash": log["transactionHash"],
           "transaction_index": quantity(log.get("transactionIndex")), "address": lower(log["address"]),
           "data": log.get("data") or "0x", "topics": topics, **at}
    out.rows["logs"].append(row)
    transfer = transfer_row(row)
    if transfer:
        out.rows["token_transfers"].append(transfer)
        out.token_addresses.add(row["address"])


def transfer_row(log: Row) -> Row | None:
    """An ERC-20 (3 topics, value in data) or ERC-721 (4 topics, token id last) Transfer, as ethereum-etl reads one:
    topics and data words together are the event's four fields; anything else is not a transfer."""
    topics = log["topics"]
    if not topics or topics[0] != TRANSFER_TOPIC:
        return None
    data = str(log["data"])[2:]
    if len(data) % 64:
        return None
    words = topics[1:] + ["0x" + data[i:i + 64] for i in range(0, len(data), 64)]
    if len(words) != 3:
        return None
    return {"token_address": log["address"], "from_address": "0x" + words[0][-40:], "to_address": "0x" + words[1][-40:],
            "value": str(int(words[2], 16)), "transaction_hash": log["transaction_hash"], "log_index": log["log_index"],
            "block_timestamp": log["block_timestamp"], "block_number": log["block_number"], "block_hash": log["block_hash"]}


def _traces(out: Derived, traces: list[dict], method: str | None, block: dict, at: dict) -> None:
    if method == DEBUG_TRACE:  # one call tree per transaction, in block order
        hashes = [tx["hash"] for tx in block["transactions"]]
        rows = [row for index, item in enumerate(traces)
                for row in call_frames(item.get("result") or {}, item.get("txHash") or hashes[index], index, ())]
    else:
        rows = [parity_trace(trace) for trace in traces]
    _mark_failed(rows)
    for position, row in enumerate(rows):
        if row["trace_type"] == "reward":
            row["trace_id"] = f"reward_{at['block_number']}_{position}"
        else:
            row["trace_id"] = f"{row['trace_type']}_{row['transaction_hash']}_{(row['trace_address'] or '').replace(',', '_')}"
        row.update(at)
        out.rows["traces"].append(row)
        if row["status"] == 1:
            out.active.update((row["from_address"], row["to_address"]))
            if row["trace_type"] == "create" and row["to_address"]:
                out.created.setdefault(row["to_address"], _origin(at))


def parity_trace(trace: dict) -> Row:
    """One trace_block entry (OpenEthereum's format, which erigon, reth, nethermind and anvil answer)."""
    action, result, kind = trace.get("action") or {}, trace.get("result") or {}, trace["type"]
    source, target, value = action.get("from"), action.get("to"), action.get("value")
    if kind == "create":
        target = result.get("address")
    elif kind == "suicide":
        source, target, value = action.get("address"), action.get("refundAddress"), action.get("balance")
    elif kind == "reward":
        source, target = None, action.get("author")
    address = trace.get("traceAddress") or []
    return {"transaction_hash": trace.get("transactionHash"), "transaction_index": trace.get("transactionPosition"),
            "from_address": lower(source), "to_address": lower(target), "value": str(quantity(value) or 0),
            "input": action.get("input", action.get("init")), "output": result.get("output", result.get("code")),
            "trace_type": kind, "call_type": action.get("callType"), "reward_type": action.get("rewardType"),
            "gas": quantity(action.get("gas")), "gas_used": quantity(result.get("gasUsed")),
            "subtraces": trace.get("subtraces", 0), "trace_address": ",".join(map(str, address)) or None,
            "error": trace.get("error")}


def call_frames(frame: dict, tx_hash: str, tx_index: int, address: tuple[int, ...]) -> list[Row]:
    """A call tracer's tree for one transaction, depth first, as trace_block's flat rows."""
    kind = str(frame.get("type", "CALL")).lower()
    trace_type = "create" if kind.startswith("create") else "suicide" if kind == "selfdestruct" else "call"
    children = frame.get("calls") or []
    row = {"transaction_hash": tx_hash, "transaction_index": tx_index, "from_address": lower(frame.get("from")),
           "to_address": lower(frame.get("to")), "value": str(quantity(frame.get("value")) or 0),
           "input": frame.get("input"), "output": frame.get("output"), "trace_type": trace_type,
           "call_type": kind if trace_type == "call" else None, "reward_type": None, "gas": quantity(frame.get("gas")),
           "gas_used": quantity(frame.get("gasUsed")), "subtraces": len(children),
           "trace_address": ",".join(map(str, address)) or None, "error": frame.get("error")}
    rows = [row]
    for position, child in enumerate(children):
        rows += call_frames(child, tx_hash, tx_index, (*address, position))
    return rows


def _mark_failed(rows: list[Row]) -> None:
    """status 0 for a trace with an error and for every trace below it in its transaction, else 1."""
    failed = {(r["transaction_hash"], r["trace_address"] or "") for r in rows if r["error"]}
    for row in rows:
        path = (row["trace_address"] or "").split(",") if row["trace_address"] else []
        prefixes = {",".join(path[:n]) for n in range(len(path) + 1)}
        row["status"] = 0 if any((row["transaction_hash"], p) in failed for p in prefixes) else 1

