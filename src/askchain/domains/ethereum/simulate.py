"""The synthetic chain as numpy arrays: slots, EIP-1559 base fees, transactions by kind, and the logs and traces each kind emits.

The chain is thinned: `scale` is the fraction of real (non-missed) slots that get a block, so a year of days stays small
while every block looks like a mainnet block (12-second slots, 30M gas limit, ~150 transactions). Consecutive generated
blocks follow the EIP-1559 base-fee rule as if they were adjacent; demand (daily and weekly cycles, a mean-reverting
trend, occasional frenzies) pushes gas use above or below the 15M target and so moves the base fee.
Everything is drawn from one numpy Generator, so a seed and an end date give the same chain.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import date, datetime, timezone
from functools import lru_cache

import numpy as np

from askchain.domains.ethereum.tables import HERE

GENESIS_TS = 1606824023  # beacon chain genesis: slot 0
MERGE_SLOT, MERGE_BLOCK = 4700013, 15537394
MERGE_TS = GENESIS_TS + 12 * MERGE_SLOT
MISSED_SLOTS = 0.008
GAS_LIMIT, GAS_TARGET = 30_000_000, 15_000_000
BLOB_GAS_PER_BLOB, BLOB_TARGET = 131072, 393216
GWEI = 10**9

# Event signatures (keccak-256 of the canonical signature).
TOPIC = {
    "transfer": "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef",
    "approval": "0x8c5be1e5ebec7d5bd14f71427d1e84f3dd0314c0f7b2291e5b200ac8c7c3b925",
    "swap": "0xd78ad95fa46c994b6551d0da85fc275fe613ce37657fb8d5e3d130840159d822",
    "deposit": "0xe1fffcc4923d04b559f4d29a8bfc6cda04eb5b0d3c460751c2402c5c5cc9109c",
    "withdrawal": "0x7fcf532c15f0a6db0bd6d0e038bea71d30d808c7d98cb3bf7268a95bf5081b65",
    "order_fulfilled": "0x9d9af8e38d66c62e2c12f0225249fd9d721c54b83f48d9352c97c6cacdcb6f31",
    "ownership": "0x8be0079c531659141344cd1fd0a4f28419497f9722a3daafe3b4186f6b6457e0",
    "pair_created": "0x0d3648bd0f6ba80134a33ba9275ac585d9d315f0ad8355cddefde31afa28d0e9",
    "staked": "0x9e71bc8eea02a63969f509818f2dafb9254532904319f9dbda79b67bd34a5f3d",
    "claimed": "0xd8138f8a3f377c5259ca548e70e4c2de94f129f5a11036a15b69513cba2b426a",
}
EVENTS = list(TOPIC)

# Transaction kinds as data: share of transactions, gas used range, failure rate, method selector of the input.
# Logs and traces of each kind are templates below; roles name the addresses a kind touches.
KINDS = {
    "eth_transfer":   dict(share=0.310, gas=(21000, 21000), fail=0.002, selector=""),
    "erc20_transfer": dict(share=0.280, gas=(34000, 65000), fail=0.01, selector="0xa9059cbb"),
    "swap_eth_in":    dict(share=0.060, gas=(110000, 320000), fail=0.04, selector="0x3593564c"),
    "swap_eth_out":   dict(share=0.045, gas=(120000, 340000), fail=0.04, selector="0x3593564c"),
    "swap_tokens":    dict(share=0.065, gas=(120000, 360000), fail=0.04, selector="0x38ed1739"),
    "nft_mint":       dict(share=0.020, gas=(70000, 220000), fail=0.03, selector="0xa0712d68"),
    "nft_transfer":   dict(share=0.015, gas=(55000, 90000), fail=0.01, selector="0x42842e0e"),
    "nft_sale":       dict(share=0.015, gas=(140000, 260000), fail=0.02, selector="0x00000000"),
    "approve":        dict(share=0.060, gas=(44000, 56000), fail=0.005, selector="0x095ea7b3"),
    "factory_create": dict(share=0.012, gas=(250000, 2500000), fail=0.02, selector="0xc9c65396"),
    "contract_call":  dict(share=0.070, gas=(45000, 300000), fail=0.03, selector="0x4e71d92d"),
    "proxy_call":     dict(share=0.030, gas=(60000, 250000), fail=0.03, selector="0xa694fc3a"),
    "create_erc20":   dict(share=0.0012, gas=(600000, 2200000), fail=0.01, selector=""),
    "create_erc721":  dict(share=0.0005, gas=(1500000, 4500000), fail=0.01, selector=""),
    "create_other":   dict(share=0.0063, gas=(200000, 3000000), fail=0.02, selector=""),
    "blob_batch":     dict(share=0.004, gas=(21000, 60000), fail=0.0, selector=""),
}
KIND_NAMES = list(KINDS)
K = {name: i for i, name in enumerate(KIND_NAMES)}
CREATES = ("create_erc20", "create_erc721", "create_other")

# Logs per kind: (event, emitter role, topic roles, amount role). Amount roles: "tokens" (ERC-20 amount in base
# units), "token_id", "wei" (tx value), "wei_out", "supply"; "" means no data word.
LOGS = {
    "erc20_transfer": [("transfer", "token", ("sender", "recipient"), "tokens")],
    "swap_eth_in": [("deposit", "weth", ("to",), "wei"), ("transfer", "weth", ("to", "pool"), "wei"),
                    ("transfer", "token_out", ("pool", "sender"), "tokens_out"), ("swap", "pool", ("to", "sender"), "tokens")],
    "swap_eth_out": [("transfer", "token", ("sender", "pool"), "tokens"), ("transfer", "weth", ("pool", "to"), "wei_out"),
                     ("swap", "pool", ("to", "to"), "tokens"), ("withdrawal", "weth", ("to",), "wei_out")],
    "swap_tokens": [("transfer", "token", ("sender", "pool"), "tokens"), ("transfer", "token_out", ("pool", "sender"), "tokens_out"),
                    ("swap", "pool", ("to", "sender"), "tokens")],
    "nft_mint": [("transfer", "nft", ("zero", "sender", "token_id"), "")],
    "nft_transfer": [("transfer", "nft", ("sender", "recipient", "token_id"), "")],
    "nft_sale": [("transfer", "nft", ("seller", "sender", "token_id"), ""), ("order_fulfilled", "to", ("seller", "zero"), "wei")],
    "approve": [("approval", "token", ("sender", "router"), "tokens")],
    "factory_create": [("pair_created", "to", ("token", "token_out"), "")],
    "contract_call": [("claimed", "to", ("sender",), "tokens")],
    "proxy_call": [("staked", "to", ("sender",), "tokens")],
    "create_erc20": [("ownership", "created", ("zero", "sender"), ""), ("transfer", "created", ("zero", "sender"), "supply")],
    "create_erc721": [("ownership", "created", ("zero", "sender"), "")],
}

# Internal traces per kind: (trace_address, trace_type, call_type, from role, to role, value role).
TRACES = {
    "swap_eth_in": [("0", "call", "call", "to", "weth", "wei"), ("1", "call", "call", "to", "pool", ""),
                    ("1,0", "call", "call", "pool", "token_out", ""), ("2", "call", "staticcall", "to", "token_out", "")],
    "swap_eth_out": [("0", "call", "call", "to", "pool", ""), ("0,0", "call", "call", "pool", "weth", ""),
                     ("1", "call", "call", "to", "weth", ""), ("1,0", "call", "call", "weth", "to", "wei_out"),
                     ("2", "call", "call", "to", "sender", "wei_out")],
    "swap_tokens": [("0", "call", "call", "to", "token", ""), ("1", "call", "call", "to", "pool", ""),
                    ("1,0", "call", "call", "pool", "token_out", ""), ("2", "call", "staticcall", "to", "token_out", "")],
    "nft_sale": [("0", "call", "call", "to", "nft", ""), ("1", "call", "call", "to", "seller", "wei_seller"),
                 ("2", "call", "call", "to", "market_fee", "wei_fee")],
    "factory_create": [("0", "create", None, "to", "created", "")],
    "proxy_call": [("0", "call", "delegatecall", "to", "implementation", "")],
}

ERC20_SIGHASHES = ["0x06fdde03", "0x095ea7b3", "0x18160ddd", "0x23b872dd", "0x313ce567", "0x70a08231", "0x95d89b41",
                   "0xa9059cbb", "0xdd62ed3e"]
ERC721_SIGHASHES = ["0x01ffc9a7", "0x06fdde03", "0x081812fc", "0x095ea7b3", "0x23b872dd", "0x42842e0e", "0x6352211e",
                    "0x70a08231", "0x95d89b41", "0xa22cb465", "0xb88d4fde", "0xc87b56dd", "0xe985e9c5"]

_WORDS = ("Moon Pepe Doge Shiba Based Turbo Giga Chad Frog Cat Neko Mega Ultra Hyper Quantum Meta Degen Alpha Sigma "
          "Rocket Lambo Diamond Laser Wojak Bobo Kek Honk Yield Stable Liquid Restaked Points Agent Neural Pixel Punk "
          "Ape Bear Bull Ether Gas Blob Layer Rollup Nova Orbit Solar Lunar Astro Cyber Vault Prime Zen Koi").split()

#: Smaller block builders behind the named ones: the first takes this share of blocks, each next one this fraction less.
SMALL_BUILDERS = 8
SMALL_BUILDER_SHARE = 0.015
SMALL_BUILDER_DECAY = 0.8


@lru_cache(maxsize=1)
def well_known() -> dict:
    return json.loads((HERE / "well_known.json").read_text())


@dataclass
class Chain:
    """Column arrays of every generated entity; `addresses` maps address ids (aid) to their text."""

    blocks: dict[str, np.ndarray]
    txs: dict[str, np.ndarray]
    logs: dict[str, np.ndarray]
    traces: dict[str, np.ndarray]
    withdrawals: dict[str, np.ndarray]
    contracts: dict[str, np.ndarray]  # created in the window (aid, tx row, kind)
    n_eoa: int
    n_old_contracts: int
    named: dict[str, int] = field(default_factory=dict)  # fixed address text -> aid
    tokens_new: dict[str, np.ndarray] = field(default_factory=dict)


def block_time(number: int) -> int:
    """Approximate timestamp of a historical block (pre-merge blocks averaged ~13.3 s)."""
    if number >= MERGE_BLOCK:
        return int(MERGE_TS + (number - MERGE_BLOCK) * 12 / (1 - MISSED_SLOTS))
    return int(MERGE_TS - (MERGE_BLOCK - number) * 13.3)


def epoch(day: date) -> int:
    return int(datetime(day.year, day.month, day.day, tzinfo=timezone.utc).timestamp())


def _loguniform(rng, lo, hi, size):
    return np.exp(rng.uniform(np.log(lo), np.log(hi), size))


def _power_law(rng, n: int, size: int, exponent: float = 1.1) -> np.ndarray:
    """Ranks 0..n-1 drawn with Zipf-like weights (a few addresses do most of the activity)."""
    weights = 1.0 / np.arange(1, n + 1) ** exponent
    cdf = np.cumsum(weights)
    return np.minimum(np.searchsorted(cdf, rng.random(size) * cdf[-1]), n - 1)


def _demand(rng, ts: np.ndarray, start_ts: int, days: int) -> np.ndarray:
    """Gas demand multiplier per block: daily cycle (peak ~15:00 UTC), quieter weekends, trend and frenzies."""
    trend = np.zeros(days + 1)
    for d in range(1, days + 1):
        trend[d] = 0.93 * trend[d - 1] + rng.normal(0, 0.12)
    frenzy = (rng.random(days + 1) < 0.03) * rng.uniform(0.5, 1.2, days + 1)
    day = (ts - start_ts) // 86400
    hour = (ts % 86400) / 3600
    weekday = ((ts // 86400) + 4) % 7  # 0 = Sunday
    log_d = trend[day] + frenzy[day] + 0.3 * np.sin(2 * np.pi * (hour - 9) / 24) - 0.18 * np.isin(weekday, (0, 6))
    return np.exp(log_d)


def _slots(rng, start_ts: int, end_ts: int, scale: float):
    first = -(-(start_ts - GENESIS_TS) // 12)
    last = -(-(end_ts - GENESIS_TS) // 12)
    slots = np.arange(first, last, dtype=np.int64)
    present = rng.random(len(slots)) >= MISSED_SLOTS
    numbers = MERGE_BLOCK + round((first - MERGE_SLOT) * (1 - MISSED_SLOTS)) + np.cumsum(present) - 1
    chosen = present & (rng.random(len(slots)) < scale)
    return GENESIS_TS + 12 * slots[chosen], numbers[chosen]


def _kind_pool(rng, size: int):
    """Transactions waiting to be included: kind, gas actually used (failed ones stop early), blobs, failure flag."""
    shares = np.array([k["share"] for k in KINDS.values()])
    kind = rng.choice(len(KINDS), size=size, p=shares / shares.sum()).astype(np.int8)
    lo = np.array([k["gas"][0] for k in KINDS.values()])[kind]
    hi = np.array([k["gas"][1] for k in KINDS.values()])[kind]
    gas = np.exp(rng.uniform(np.log(lo), np.log(hi)))
    fail = rng.random(size) < np.array([k["fail"] for k in KINDS.values()])[kind]
    gas = np.round(np.where(fail & (kind != K["eth_transfer"]), np.maximum(21000, gas * rng.uniform(0.3, 0.95, size)), gas))
    blobs = np.where(kind == K["blob_batch"], rng.integers(1, 7, size), 0).astype(np.int64)
    return kind, gas.astype(np.int64), blobs, fail


def _fill_blocks(rng, demand: np.ndarray, progress_step):
    """Sequential EIP-1559 loop: each block takes as many pooled transactions as its demand buys at the current base fee."""
    n_blocks = len(demand)
    expected = int(n_blocks * GAS_TARGET / 95000 * 1.6) + 4096
    kind, gas, blobs, fail = _kind_pool(rng, expected)
    cum_gas = np.concatenate(([0], np.cumsum(gas)))
    cum_blobs = np.concatenate(([0], np.cumsum(blobs)))
    noise = rng.lognormal(0, 0.45, n_blocks)
    reference = 1.2 * GWEI
    base_fee = int(reference * demand[0])
    excess_blob = 0
    counts = np.zeros(n_blocks, np.int64)
    out_fee, out_gas = np.zeros(n_blocks, np.int64), np.zeros(n_blocks, np.int64)
    out_blob_gas, out_excess = np.zeros(n_blocks, np.int64), np.zeros(n_blocks, np.int64)
    pos = 0
    for i in range(n_blocks):
        want = min(GAS_TARGET * demand[i] * reference / base_fee * noise[i], GAS_LIMIT)
        while cum_gas[-1] - cum_gas[pos] < GAS_LIMIT:  # pool running out: draw more
            k2, g2, b2, f2 = _kind_pool(rng, expected // 2 + 4096)
            kind, gas, blobs, fail = (np.concatenate(pair) for pair in ((kind, k2), (gas, g2), (blobs, b2), (fail, f2)))
            cum_gas = np.concatenate((cum_gas, cum_gas[-1] + np.cumsum(g2)))
            cum_blobs = np.concatenate((cum_blobs, cum_blobs[-1] + np.cumsum(b2)))
        end = pos + int(np.searchsorted(cum_gas[pos:pos + 1500], cum_gas[pos] + int(want), side="right")) - 1
        used = int(cum_gas[end] - cum_gas[pos])
        blob_gas = int(cum_blobs[end] - cum_blobs[pos]) * BLOB_GAS_PER_BLOB
        counts[i], out_fee[i], out_gas[i] = end - pos, base_fee, used
        out_blob_gas[i], out_excess[i] = blob_gas, excess_blob
        pos = end
        # EIP-1559 (integer arithmetic as in the spec) and EIP-4844 excess blob gas.
        if used > GAS_TARGET:
            base_fee += max(base_fee * (used - GAS_TARGET) // GAS_TARGET // 8, 1)
        else:
            base_fee -= base_fee * (GAS_TARGET - used) // GAS_TARGET // 8
        base_fee = max(base_fee, 7)
        excess_blob = max(0, excess_blob + blob_gas - BLOB_TARGET)
        if i % 2048 == 0:
            progress_step(i)
    return counts, out_fee, out_gas, out_blob_gas, out_excess, kind[:pos], gas[:pos], blobs[:pos], fail[:pos]


ZERO_ADDRESS = "0x0000000000000000000000000000000000000000"
WETH = "0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2"


@dataclass(frozen=True)
class _AddressIds:
    """Address ids (aid) in ranges: EOAs, then named addresses, then older contracts, then contracts created here."""

    n_eoa: int
    named: dict[str, int]  # fixed address text -> aid
    n_old: int

    @property
    def old0(self) -> int:
        return self.n_eoa + len(self.named)

    @property
    def new0(self) -> int:
        return self.old0 + self.n_old


def simulate(*, days: int, end: date, scale: float, seed: int, progress_step=lambda i: None) -> Chain:
    """The chain of the `days` full UTC days before `end`.

    Every part is drawn from one Generator in a fixed order (slots, demand, the blocks' transaction pool, miners,
    transactions, withdrawals, logs, traces): the helpers below must keep their order for a seed to give the same chain.
    """
    rng = np.random.default_rng([seed, end.toordinal(), days, int(round(scale * 1e9))])
    wk = well_known()
    end_ts = epoch(end)
    start_ts = end_ts - days * 86400
    ts, numbers = _slots(rng, start_ts, end_ts, scale)
    demand = _demand(rng, ts, start_ts, days)
    counts, base_fee, gas_used, blob_gas, excess, kind, tx_gas, blobs, fail = _fill_blocks(rng, demand, progress_step)
    n_blocks = len(ts)
    ids = _address_ids(wk, len(kind))
    miner, solo = _miners(rng, wk, ids, n_blocks)
    blocks = dict(idx=np.arange(n_blocks), number=numbers, ts=ts, base_fee=base_fee, gas_used=gas_used, tx_count=counts,
                  miner=miner, solo=solo.astype(np.int8), blob_gas=blob_gas, excess_blob=excess)
    txs, contracts = _transactions(rng, wk, ids, counts, base_fee, kind, tx_gas, blobs, fail)
    withdrawals = _withdrawals(rng, wk, ids, n_blocks)
    named, weth = ids.named, ids.named[WETH]
    logs = _expand(LOGS, txs, rng, {"weth": weth, "zero": named[ZERO_ADDRESS],
                                    "market_fee": named[wk["marketplace"]["fee_recipient"]]})
    traces = _expand(TRACES, txs, rng, {"weth": weth, "market_fee": named[wk["marketplace"]["fee_recipient"]]})
    return Chain(blocks, txs, logs, traces, withdrawals, contracts, ids.n_eoa, ids.n_old, named)


def _address_ids(wk: dict, n_tx: int) -> _AddressIds:
    """How many EOAs and older contracts a chain of `n_tx` transactions has, and the named addresses' ids between them."""
    n_eoa = max(2000, n_tx // 6)
    named_list = (
        [b["address"] for b in wk["fee_recipients"]] + [t["address"] for t in wk["erc20"]] + [t["address"] for t in wk["erc721"]]
        + [r["address"] for r in wk["routers"]] + [wk["marketplace"]["address"], wk["marketplace"]["fee_recipient"],
                                                    wk["staking"]["lido_withdrawal_vault"], ZERO_ADDRESS]
    )
    named = {a: n_eoa + i for i, a in enumerate(named_list)}
    return _AddressIds(n_eoa=n_eoa, named=named, n_old=max(300, n_tx // 400))


def _miners(rng, wk: dict, ids: _AddressIds, n_blocks: int) -> tuple[np.ndarray, np.ndarray]:
    """Each block's fee recipient and whether a solo staker proposed it.

    The named builders, then a geometric tail of smaller builders (so a top-10 has no ties), then solo stakers.
    """
    named_shares = [b["share"] for b in wk["fee_recipients"]]
    tail_shares = [SMALL_BUILDER_SHARE * SMALL_BUILDER_DECAY**k for k in range(SMALL_BUILDERS)]
    shares = np.array(named_shares + tail_shares)
    recipients = np.array([ids.named[b["address"]] for b in wk["fee_recipients"]]
                          + list(rng.choice(ids.n_eoa, SMALL_BUILDERS, replace=False)))
    solo = rng.random(n_blocks) < 1 - shares.sum()
    miner = np.where(solo, rng.integers(0, ids.n_eoa, n_blocks), recipients[rng.choice(len(shares), n_blocks, p=shares / shares.sum())])
    return miner, solo


def _transactions(rng, wk: dict, ids: _AddressIds, counts, base_fee, kind, tx_gas, blobs, fail) -> tuple[dict, dict]:
    """The transactions as columns (one row each, grouped by block), and the contracts they created."""
    n_tx, n_eoa = len(kind), ids.n_eoa
    block_of = np.repeat(np.arange(len(counts)), counts)
    kind, tx_gas, blobs, fail, tip, tx_type, effective, max_fee = _fees_in_block_order(
        rng, base_fee[block_of], block_of, kind, tx_gas, blobs, fail)
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    tx_index = np.arange(n_tx) - np.repeat(starts, counts)
    gas_limit = np.where(kind == K["eth_transfer"], 21000, (tx_gas * rng.uniform(1.05, 1.6, n_tx)).astype(np.int64))
    sender = _power_law(rng, n_eoa, n_tx)
    sender_perm = rng.permutation(n_eoa)
    sender = sender_perm[sender]
    recipient = rng.permutation(n_eoa)[_power_law(rng, n_eoa, n_tx, 1.0)]
    tx_blk = block_of  # rows are still grouped by block after the within-block sort
    created, ok_create = _created(ids, kind, fail)
    parties = _counterparties(rng, wk, ids, kind, tx_blk, created, ok_create, recipient)
    sender = np.where(kind == K["blob_batch"], rng.integers(0, 3, n_tx), sender)
    value, value_out, token_usd, token_id = _values(rng, kind)
    txs = dict(
        row=np.arange(n_tx), block=tx_blk, tx_index=tx_index, kind=kind.astype(np.int64), gas_used=tx_gas,
        gas=gas_limit, tip=tip, tx_type=tx_type, effective=effective, max_fee=max_fee, blobs=blobs, status=(~fail).astype(np.int64),
        sender=sender, to=parties["to"], recipient=recipient, token=parties["token"], token_out=parties["token_out"],
        nft=parties["nft"], router=parties["router"], pool=parties["pool"], implementation=parties["implementation"],
        seller=recipient[::-1].copy(), created=created, value_gwei=value,
        value_out_gwei=value_out, token_usd=token_usd, token_id=token_id,
    )
    csum = np.cumsum(tx_gas)
    txs["cumulative"] = csum - np.repeat(np.concatenate(([0], csum))[starts], counts)
    contracts = dict(aid=created[ok_create], row=np.flatnonzero(ok_create), kind=kind[ok_create].astype(np.int64))
    return txs, contracts


def _fees_in_block_order(rng, fee, block_of, kind, tx_gas, blobs, fail) -> tuple[np.ndarray, ...]:
    """Tips, transaction types and fees; then each block's transactions sorted best-paying first, as builders order them.

    Returns kind, gas used, blobs, failure, tip, type, effective gas price and max fee, all in that order.
    """
    n_tx = len(kind)
    tip = np.where(rng.random(n_tx) < 0.06, 0, _loguniform(rng, 0.002 * GWEI, 3 * GWEI, n_tx))
    hot = np.isin(kind, [K["swap_eth_in"], K["swap_eth_out"], K["swap_tokens"], K["nft_mint"]])
    tip = np.where(hot & (rng.random(n_tx) < 0.2), tip * rng.uniform(3, 40, n_tx), tip).astype(np.int64)
    r = rng.random(n_tx)
    tx_type = np.where(kind == K["blob_batch"], 3, np.where(r < 0.09, 0, np.where(r < 0.11, 1, 2)))
    legacy = tx_type < 2
    tip = np.where(legacy, tip + GWEI // 2, tip)
    effective = fee + tip
    max_fee = np.where(legacy, 0, (fee * rng.uniform(1.15, 2.5, n_tx)).astype(np.int64) + tip)
    order = np.lexsort((-tip, block_of))  # builders put the best-paying transactions first
    return tuple(a[order] for a in (kind, tx_gas, blobs, fail, tip, tx_type, effective, max_fee))


def _created(ids: _AddressIds, kind, fail) -> tuple[np.ndarray, np.ndarray]:
    """The aid each transaction created (-1 if none) and which did: top-level creations and factory children,
    numbered in chain order after the older contracts."""
    is_create = np.isin(kind, [K[c] for c in CREATES]) | (kind == K["factory_create"])
    created = np.full(len(kind), -1, np.int64)
    ok_create = is_create & ~fail
    created[ok_create] = ids.new0 + np.arange(ok_create.sum())
    return created, ok_create


def _pick_new(rng, new_aid, new_kind, new_blk, tx_blk, pool_kind: str, share: float) -> np.ndarray:
    """Per transaction, a token created earlier in the window (recent ones busier) for about `share` of them, or -1."""
    n_tx = len(tx_blk)
    mask = new_kind == K[pool_kind]
    aids, blks = new_aid[mask], new_blk[mask]
    available = np.searchsorted(blks, tx_blk, side="left")
    use = (rng.random(n_tx) < share) & (available > 0)
    back = np.floor(available * rng.random(n_tx) ** 3).astype(np.int64)
    return np.where(use, aids[np.clip(available - 1 - back, 0, max(len(aids) - 1, 0))] if len(aids) else -1, -1)


def _counterparties(rng, wk: dict, ids: _AddressIds, kind, tx_blk, created, ok_create, recipient) -> dict[str, np.ndarray]:
    """What each transaction touches: its tokens, NFT collection, router, pool, proxy implementation and `to` address."""
    n_tx, named, old0, n_old = len(kind), ids.named, ids.old0, ids.n_old
    new_aid, new_kind, new_blk = created[ok_create], kind[ok_create], tx_blk[ok_create]

    def pick_new(pool_kind: str, share: float) -> np.ndarray:
        return _pick_new(rng, new_aid, new_kind, new_blk, tx_blk, pool_kind, share)

    erc20 = wk["erc20"]
    erc20_aid = np.array([named[t["address"]] for t in erc20])
    erc20_w = np.array([t["weight"] for t in erc20], float)
    nft_aid = np.array([named[t["address"]] for t in wk["erc721"]])
    nft_w = np.array([t["weight"] for t in wk["erc721"]], float)
    weth = named[WETH]
    token = np.where((new := pick_new("create_erc20", 0.15)) >= 0, new, erc20_aid[rng.choice(len(erc20), n_tx, p=erc20_w / erc20_w.sum())])
    token_out = np.where((new := pick_new("create_erc20", 0.25)) >= 0, new, erc20_aid[rng.choice(len(erc20), n_tx, p=erc20_w / erc20_w.sum())])
    token_out = np.where(token_out == token, weth, token_out)
    nft_new = pick_new("create_erc721", 0.35)
    nft = np.where(nft_new >= 0, nft_new, nft_aid[rng.choice(len(nft_aid), n_tx, p=nft_w / nft_w.sum())])
    nft = np.where((kind == K["nft_mint"]) & (nft_new >= 0), nft_new, nft)
    router_aid = np.array([named[x["address"]] for x in wk["routers"]])
    router_w = np.array([x["weight"] for x in wk["routers"]], float)
    router = router_aid[rng.choice(len(router_aid), n_tx, p=router_w / router_w.sum())]
    old_contract = old0 + _power_law(rng, n_old, n_tx, 1.2)
    pool = old0 + rng.integers(0, max(n_old // 5, 1), n_tx)
    implementation = old0 + n_old - 1 - rng.integers(0, max(n_old // 10, 1), n_tx)
    market = named[wk["marketplace"]["address"]]
    to = np.select(
        [kind == K["eth_transfer"], np.isin(kind, [K["erc20_transfer"], K["approve"]]),
         np.isin(kind, [K["swap_eth_in"], K["swap_eth_out"], K["swap_tokens"]]),
         np.isin(kind, [K["nft_mint"], K["nft_transfer"]]), kind == K["nft_sale"],
         np.isin(kind, [K["factory_create"], K["contract_call"], K["proxy_call"]]), kind == K["blob_batch"]],
        [recipient, token, router, nft, np.full(n_tx, market), old_contract, old0 + rng.integers(0, 3, n_tx)],
        default=-1,
    )
    # factory calls go to a handful of factories among the older contracts
    to = np.where(kind == K["factory_create"], old0 + rng.integers(0, 5, n_tx), to)
    return dict(token=token, token_out=token_out, nft=nft, router=router, pool=pool, implementation=implementation, to=to)


def _values(rng, kind) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Ether moved in and out, in gwei (wei = gwei * 1e9 keeps values within int64); token amounts in USD; token ids."""
    n_tx = len(kind)
    eth_gwei = np.round(rng.lognormal(np.log(0.05), 2.0, n_tx) * GWEI).astype(np.int64)
    value = np.select(
        [kind == K["eth_transfer"], kind == K["swap_eth_in"], kind == K["nft_sale"], kind == K["nft_mint"]],
        [eth_gwei, eth_gwei, (eth_gwei * 4).clip(max=200 * GWEI), np.where(rng.random(n_tx) < 0.5, eth_gwei // 20, 0)],
        default=np.where((kind == K["contract_call"]) & (rng.random(n_tx) < 0.1), eth_gwei, 0),
    )
    value_out = np.where(kind == K["swap_eth_out"], eth_gwei, 0)
    token_usd = rng.lognormal(np.log(300), 2.0, n_tx)
    token_id = rng.integers(1, 10000, n_tx)
    return value, value_out, token_usd, token_id


def _withdrawals(rng, wk: dict, ids: _AddressIds, n_blocks: int) -> dict[str, np.ndarray]:
    """Sixteen validator withdrawals a block, about 30 % of them to Lido's vault; a few are full 32-ether exits."""
    n_w = n_blocks * 16
    lido = ids.named[wk["staking"]["lido_withdrawal_vault"]]
    return dict(
        block=np.repeat(np.arange(n_blocks), 16), slot=np.tile(np.arange(16), n_blocks),
        address=np.where(rng.random(n_w) < 0.3, lido, rng.integers(0, ids.n_eoa, n_w)),
        amount_gwei=np.where(rng.random(n_w) < 0.01, 32 * GWEI + rng.integers(0, GWEI // 50, n_w), rng.integers(14_000_000, 20_000_000, n_w)),
    )


def _expand(templates: dict, txs: dict, rng, constants: dict[str, int]) -> dict[str, np.ndarray]:
    """One row per (successful transaction, template entry): roles become address ids, amounts stay as numbers."""
    ok = txs["status"] == 1
    parts = []
    for kind_name, entries in templates.items():
        rows = np.flatnonzero(ok & (txs["kind"] == K[kind_name]))
        for position, entry in enumerate(entries):
            parts.append((kind_name, position, entry, rows))
    out: dict[str, list] = {k: [] for k in ("row", "position", "template", "a0", "a1", "a2", "a3", "amount_role")}
    for template_id, (kind_name, position, entry, rows) in enumerate(parts):
        roles = _entry_roles(entry)
        out["row"].append(rows)
        out["position"].append(np.full(len(rows), position))
        out["template"].append(np.full(len(rows), template_id))
        for slot in range(4):
            role = roles[slot] if slot < len(roles) else None
            out[f"a{slot}"].append(_role(role, rows, txs, constants))
    if not parts:
        return {k: np.zeros(0, np.int64) for k in ("row", "position", "template", "a0", "a1", "a2", "a3")}
    result = {k: np.concatenate(v) for k, v in out.items() if v}
    order = np.lexsort((result["position"], result["row"]))
    result = {k: v[order] for k, v in result.items()}
    result["entries"] = np.array([json.dumps([kind_name, position, list(entry)]) for kind_name, position, entry, _ in parts], dtype=object)
    return result


def _entry_roles(entry: tuple) -> list:
    if len(entry) == 4:  # log: (event, emitter, topics, amount)
        return [entry[1], *entry[2]]
    return [entry[3], entry[4]]  # trace: (address, type, call type, from, to, value)


def _role(role, rows, txs, constants) -> np.ndarray:
    if role is None or role == "token_id":
        return np.full(len(rows), -1, np.int64)
    if role in constants:
        return np.full(len(rows), constants[role], np.int64)
    return txs[role][rows].astype(np.int64)
