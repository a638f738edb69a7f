"""The local crypto_ethereum copy: build it (simulate with numpy, materialize with DuckDB SQL) and open it as an engine.

Default size: 365 days before today at scale 0.004 (0.4 % of mainnet's blocks, ~29 blocks a day, each with a realistic
~150 transactions): about 10k blocks and 1.6M transactions, built in about a minute on 2 cores. Every calendar day
and day of the year has data, and "last 30 days" questions have answers. `scale=0.1` gives ~40M transactions.
The data covers the `days` full UTC days before `end` (a snapshot taken at 00:00 UTC on `end`), so no timestamp
lies in the future.
"""

from __future__ import annotations

import json
import os
import sys
import time
from contextlib import contextmanager
from datetime import date
from pathlib import Path

import duckdb
import numpy as np

from askchain.domains.ethereum import simulate as sim
from askchain.domains.ethereum.freshness import build_record_path, utc_today
from askchain.domains.ethereum.tables import create_statements, tables
from askchain.errors import DatasetError

DEFAULT_DAYS = 365
DEFAULT_SCALE = 0.004
DEFAULT_SEED = 7
EMPTY_UNCLES = "0x1dcc4de8dec75d7aab85b567b6ccd41ad312451b948a7413f0a142fd40d49347"
TOTAL_DIFFICULTY = 58750003716598352816469  # frozen at the merge
SOLO_EXTRA = "geth/v1.14.12-stable/linux-amd64/go1.23.4"


def build_dataset(
    path: str | Path,
    *,
    days: int = DEFAULT_DAYS,
    end: date | None = None,
    scale: float = DEFAULT_SCALE,
    seed: int = DEFAULT_SEED,
    progress: bool = True,
) -> dict[str, int]:
    """Write a DuckDB file with the eight crypto_ethereum tables; returns row counts per table."""
    if days < 1:
        raise DatasetError("days must be at least 1")
    if not 0 < scale <= 1:
        raise DatasetError("scale must be in (0, 1]: the fraction of mainnet blocks to generate")
    end = end or utc_today()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.unlink(missing_ok=True)
    try:
        with _progress(progress) as step:
            step("simulating blocks and base fees", 0, 1)
            chain = sim.simulate(days=days, end=end, scale=scale, seed=seed)
            con = duckdb.connect(str(tmp))
            try:
                con.execute("SET enable_progress_bar = false")
                counts = _materialize(con, chain, seed, step)
                con.execute("CHECKPOINT")
            finally:
                con.close()
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
        tmp.with_name(tmp.name + ".wal").unlink(missing_ok=True)
    meta = {"end": end.isoformat(), "days": days, "scale": scale, "seed": seed, "rows": counts}
    build_record_path(path).write_text(json.dumps(meta, indent=1))
    return counts


@contextmanager
def _progress(enabled: bool):
    """A rich progress bar on stderr; `step(description, done, total)` advances it."""
    if not enabled:
        yield lambda *a: None
        return
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    started = time.perf_counter()
    with Progress(TextColumn("[bold]ethereum[/bold] {task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                  TimeElapsedColumn(), console=Console(stderr=True), transient=False) as bar:
        task = bar.add_task("starting", total=len(_STEPS) + 1)

        def step(description: str, done: int, total: int) -> None:
            bar.update(task, description=description, completed=done, total=total)

        yield step
        bar.update(task, description=f"done in {time.perf_counter() - started:.0f} s", completed=len(_STEPS) + 1)


def _register(con, name: str, columns: dict[str, np.ndarray]) -> None:
    con.register(name, {k: v for k, v in columns.items() if getattr(v, "ndim", 1) == 1})


def _addresses(con, chain: sim.Chain, seed: int) -> None:
    total = chain.n_eoa + len(chain.named) + chain.n_old_contracts + len(chain.contracts["aid"])
    named = {"aid": np.array(list(chain.named.values()), np.int64), "address": np.array(list(chain.named), dtype=object)}
    _register(con, "named_addresses", named)
    con.execute(f"""
        CREATE TEMP TABLE addr AS
        SELECT range AS aid, COALESCE(n.address, '0x' || substr(sha256('{seed}:a:' || range), 1, 40)) AS address
        FROM range({total}) LEFT JOIN named_addresses n ON n.aid = range""")


def _token_meta(con, chain: sim.Chain, seed: int) -> None:
    """Decimals, price and supply of every token: the well-known ones and those created in the window."""
    wk = sim.well_known()
    rng = np.random.default_rng([seed, 99])
    rows = {"aid": [], "decimals": [], "price": [], "supply": [], "name": [], "symbol": [], "is_nft": []}

    def add(aid, decimals, price, supply, name, symbol, is_nft):
        for key, value in zip(rows, (aid, decimals, price, supply, name, symbol, is_nft)):
            rows[key].append(value)

    for t in wk["erc20"]:
        add(chain.named[t["address"]], t["decimals"], t["price"], 10 ** 9 * 10 ** t["decimals"], t["name"], t["symbol"], False)
    for t in wk["erc721"]:
        add(chain.named[t["address"]], -1, 1.0, t["supply"], t["name"] or None, t["symbol"] or None, True)
    for aid, kind in zip(chain.contracts["aid"], chain.contracts["kind"]):
        if kind not in (sim.K["create_erc20"], sim.K["create_erc721"]):
            continue
        words = rng.choice(sim._WORDS, size=rng.integers(1, 3), replace=False)
        name = " ".join(words)
        symbol = "".join(w[0] for w in words).upper() + words[-1][:3].upper() if len(words) > 1 else words[0][:5].upper()
        nft = kind == sim.K["create_erc721"]
        decimals = -1 if nft else int(rng.choice([18, 9, 6], p=[0.86, 0.08, 0.06]))
        supply = int(rng.choice([1000, 5555, 10000])) if nft else int(10 ** rng.integers(6, 13)) * 10 ** decimals
        add(int(aid), decimals, float(np.exp(rng.uniform(np.log(1e-7), np.log(2.0)))), supply,
            None if rng.random() < 0.04 else name + (" NFT" if nft else ""), None if rng.random() < 0.03 else symbol, nft)
    cols = {k: np.array(v, dtype=object if k in ("name", "symbol", "supply") else None) for k, v in rows.items()}
    cols["supply"] = np.array([str(s) for s in rows["supply"]], dtype=object)
    _register(con, "token_meta_np", cols)
    con.execute("CREATE TEMP TABLE token_meta AS SELECT aid, decimals, price, CAST(supply AS HUGEINT) AS supply, name, symbol, is_nft FROM token_meta_np")


def _templates(con, name: str, templates: dict, kind: str) -> None:
    """Log or trace templates as a small table keyed by template id (the order `_expand` numbered them)."""
    rows = []
    for kind_name, entries in templates.items():
        for position, entry in enumerate(entries):
            if kind == "logs":
                event, _, topics, amount = entry
                token_slot = topics.index("token_id") + 1 if "token_id" in topics else 0
                rows.append((event, sim.TOPIC[event], len(topics), token_slot, amount, None, None, None, 0))
            else:
                address, trace_type, call_type, _, _, amount = entry
                children = sum(1 for e in entries if e[0].rsplit(",", 1)[0] == address and e[0] != address and e[0].count(",") == address.count(",") + 1)
                rows.append((None, None, 0, 0, amount, address, trace_type, call_type, children))
    keys = ("event", "topic0", "n_topics", "token_slot", "amount_role", "trace_address", "trace_type", "call_type", "children")
    cols = {k: np.array([r[i] for r in rows], dtype=object) for i, k in enumerate(keys)}
    cols["template"] = np.arange(len(rows))
    _register(con, f"{name}_np", cols)
    con.execute(f"CREATE TEMP TABLE {name} AS SELECT * FROM {name}_np")


def _seed_text(seed: int) -> str:
    """The seed as a SQL string literal: every synthetic hash is sha256 of it and the entity's key."""
    return f"'{seed}'"


def _stage(con, chain: sim.Chain, seed: int) -> None:
    """The temporary inputs every table reads: address texts, token metadata, the simulated arrays, templates and builders."""
    _addresses(con, chain, seed)
    _token_meta(con, chain, seed)
    _register(con, "b_np", chain.blocks)
    _register(con, "t_np", chain.txs)
    _register(con, "w_np", chain.withdrawals)
    _register(con, "l_np", {k: v for k, v in chain.logs.items() if k != "entries"})
    _register(con, "r_np", {k: v for k, v in chain.traces.items() if k != "entries"})
    _register(con, "c_np", chain.contracts)
    _templates(con, "log_templates", sim.LOGS, "logs")
    _templates(con, "trace_templates", sim.TRACES, "traces")
    wk = sim.well_known()
    builders = {"aid": np.array([chain.named[b["address"]] for b in wk["fee_recipients"]]),
                "tag": np.array([b["name"] for b in wk["fee_recipients"]], dtype=object)}
    _register(con, "builders", builders)


def _blocks(con, chain: sim.Chain, seed: int) -> None:
    """Blocks, with each block's hash kept in `blk` for the tables that point at their block."""
    s = _seed_text(seed)
    con.execute(f"""
        CREATE TEMP TABLE blk AS
        SELECT b.idx, b.number, make_timestamp(b.ts * 1000000) AS ts, '0x' || sha256({s} || ':b:' || b.number) AS hash
        FROM b_np b""")
    con.execute(f"""
        INSERT INTO blocks
        SELECT k.ts, b.number, k.hash, '0x' || sha256({s} || ':b:' || (b.number - 1)), '0x0000000000000000', '{EMPTY_UNCLES}',
               '0x' || repeat(sha256({s} || ':bloom:' || b.number), 8),
               '0x' || sha256({s} || ':tr:' || b.number), '0x' || sha256({s} || ':sr:' || b.number), '0x' || sha256({s} || ':rr:' || b.number),
               a.address, 0, {TOTAL_DIFFICULTY}, 0, '0x' || lower(hex(COALESCE(bl.tag, '{SOLO_EXTRA}'))),
               {sim.GAS_LIMIT}, b.gas_used, b.tx_count, b.base_fee, '0x' || sha256({s} || ':wr:' || b.number),
               w.withdrawals, b.blob_gas, b.excess_blob
        FROM b_np b JOIN blk k ON k.idx = b.idx JOIN addr a ON a.aid = b.miner LEFT JOIN builders bl ON bl.aid = b.miner
        LEFT JOIN (
            SELECT w.block, list({{'index': (SELECT min(number) FROM b_np) * 16 + w.block * 16 + w.slot - 300000000,
                                  'validator_index': (w.block * 16 + w.slot) * 7919 % 1100000,
                                  'address': a.address, 'amount': CAST(w.amount_gwei AS VARCHAR)}} ORDER BY w.slot) AS withdrawals
            FROM w_np w JOIN addr a ON a.aid = w.address GROUP BY w.block
        ) w ON w.block = b.idx
        ORDER BY b.number""")


def _transactions(con, chain: sim.Chain, seed: int) -> None:
    """Transactions, staged in `tx` with their hash and token amounts for the logs and traces that follow."""
    s = _seed_text(seed)
    selectors = np.array([k["selector"] for k in sim.KINDS.values()], dtype=object)
    _register(con, "kinds", {"kind": np.arange(len(selectors)), "selector": selectors,
                             "is_create": np.array([n in sim.CREATES for n in sim.KINDS])})
    con.execute(f"""
        CREATE TEMP TABLE tx AS
        SELECT t.*, '0x' || sha256({s} || ':tx:' || t.row) AS hash, k.selector, k.is_create,
               CAST(floor(t.token_usd / m1.price * 1e6) AS HUGEINT) * CAST(pow(10, greatest(m1.decimals - 6, 0)) AS HUGEINT)
                   + CAST(floor((t.row * 7919 % 1000003) / 1000003.0 * pow(10, greatest(m1.decimals - 6, 0))) AS HUGEINT) AS amt_tokens,
               CAST(floor(t.token_usd * 0.997 / m2.price * 1e6) AS HUGEINT) * CAST(pow(10, greatest(m2.decimals - 6, 0)) AS HUGEINT) AS amt_tokens_out
        FROM t_np t JOIN kinds k ON k.kind = t.kind
        LEFT JOIN token_meta m1 ON m1.aid = t.token LEFT JOIN token_meta m2 ON m2.aid = t.token_out""")
    con.execute(f"""
        INSERT INTO transactions
        SELECT t.hash,
               row_number() OVER (PARTITION BY t.sender ORDER BY t.row) - 1 + (hash({s} || t.sender) % 5000)::BIGINT,
               t.tx_index, fa.address, ta.address, CAST(t.value_gwei AS DECIMAL(38, 9)) * 1000000000, t.gas, t.effective,
               CASE WHEN t.kind = {sim.K['eth_transfer']} THEN '0x'
                    WHEN t.is_create THEN '0x60806040523480156100' || sha256({s} || ':code:' || t.row)
                    WHEN t.kind IN ({sim.K['erc20_transfer']}, {sim.K['approve']}) THEN t.selector || '000000000000000000000000'
                         || substr(CASE WHEN t.kind = {sim.K['approve']} THEN ro.address ELSE re.address END, 3) || lpad(lower(to_hex(t.amt_tokens)), 64, '0')
                    ELSE COALESCE(NULLIF(t.selector, ''), '0x') || sha256({s} || ':in:' || t.row) END,
               t.cumulative, t.gas_used, CASE WHEN t.is_create AND t.status = 1 THEN ca.address END, NULL, t.status,
               k.ts, b.number, k.hash,
               CASE WHEN t.tx_type >= 2 THEN t.max_fee END, CASE WHEN t.tx_type >= 2 THEN t.tip END, t.tx_type, t.effective,
               CASE WHEN t.tx_type = 3 THEN 1000000000 END,
               CASE WHEN t.tx_type = 3 THEN list_transform(range(t.blobs), lambda i: '0x01' || substr(sha256({s} || ':blob:' || t.row || ':' || i), 3)) END,
               CASE WHEN t.tx_type = 3 THEN greatest(1, floor(exp(least(b.excess_blob / 3338477.0, 40))))::BIGINT END,
               CASE WHEN t.tx_type = 3 THEN t.blobs * {sim.BLOB_GAS_PER_BLOB} END
        FROM tx t JOIN blk k ON k.idx = t.block JOIN b_np b ON b.idx = t.block
        JOIN addr fa ON fa.aid = t.sender LEFT JOIN addr ta ON ta.aid = t.to LEFT JOIN addr ca ON ca.aid = t.created
        LEFT JOIN addr re ON re.aid = t.recipient LEFT JOIN addr ro ON ro.aid = t.router
        ORDER BY t.row""")


def _logs(con, chain: sim.Chain, seed: int) -> None:
    """Logs, staged in `log_stage` (emitter, indexed addresses, amount) for token_transfers."""
    amount = """CASE tp.amount_role WHEN 'tokens' THEN t.amt_tokens WHEN 'tokens_out' THEN t.amt_tokens_out
                     WHEN 'wei' THEN CAST(t.value_gwei AS HUGEINT) * 1000000000 WHEN 'wei_out' THEN CAST(t.value_out_gwei AS HUGEINT) * 1000000000
                     WHEN 'supply' THEN (SELECT supply FROM token_meta m WHERE m.aid = l.a0) END"""
    pad = "'0x000000000000000000000000' || substr({}.address, 3)"
    con.execute(f"""
        CREATE TEMP TABLE log_stage AS
        SELECT l.row, l.position, t.hash AS transaction_hash, t.tx_index, t.block, tp.event, tp.token_slot, t.token_id,
               (row_number() OVER (PARTITION BY t.block ORDER BY t.tx_index, l.position) - 1) AS log_index,
               e.address AS emitter, x1.address AS addr1, x2.address AS addr2, {amount} AS amount,
               list_filter([tp.topic0,
                   CASE WHEN tp.n_topics >= 1 THEN {pad.format('x1')} END,
                   CASE WHEN tp.n_topics >= 2 THEN {pad.format('x2')} END,
                   CASE WHEN tp.token_slot = 3 THEN '0x' || lpad(lower(to_hex(t.token_id)), 64, '0') END], lambda v: v IS NOT NULL) AS topics
        FROM l_np l JOIN log_templates tp ON tp.template = l.template JOIN tx t ON t.row = l.row
        JOIN addr e ON e.aid = l.a0 LEFT JOIN addr x1 ON x1.aid = l.a1 LEFT JOIN addr x2 ON x2.aid = l.a2""")
    con.execute("""
        INSERT INTO logs
        SELECT l.log_index, l.transaction_hash, l.tx_index, l.emitter,
               CASE WHEN l.amount IS NULL THEN '0x' ELSE '0x' || lpad(lower(to_hex(l.amount)), 64, '0') END,
               l.topics, k.ts, k.number, k.hash
        FROM log_stage l JOIN blk k ON k.idx = l.block ORDER BY l.row, l.position""")


def _token_transfers(con, chain: sim.Chain, seed: int) -> None:
    """Token transfers: the Transfer logs of `log_stage`, with the token id for NFTs."""
    con.execute("""
        INSERT INTO token_transfers
        SELECT l.emitter, l.addr1, l.addr2, CAST(CASE WHEN l.token_slot > 0 THEN l.token_id ELSE l.amount END AS VARCHAR),
               l.transaction_hash, l.log_index, k.ts, k.number, k.hash
        FROM log_stage l JOIN blk k ON k.idx = l.block WHERE l.event = 'transfer' ORDER BY l.row, l.position""")


def _traces(con, chain: sim.Chain, seed: int) -> None:
    """Traces: each transaction's top-level call or creation, then its template's internal calls."""
    s = _seed_text(seed)
    value = """CASE tp.amount_role WHEN 'wei' THEN CAST(t.value_gwei AS HUGEINT) * 1000000000
                    WHEN 'wei_out' THEN CAST(t.value_out_gwei AS HUGEINT) * 1000000000
                    WHEN 'wei_seller' THEN CAST(t.value_gwei AS HUGEINT) * 975000000
                    WHEN 'wei_fee' THEN CAST(t.value_gwei AS HUGEINT) * 25000000 ELSE 0 END"""
    con.execute(f"""
        INSERT INTO traces
        SELECT r.hash, r.tx_index, r.from_address, r.to_address, r.value, r.input, r.output, r.trace_type, r.call_type, NULL,
               r.gas, r.gas_used, r.subtraces, r.trace_address, r.error, r.status,
               r.trace_type || '_' || r.hash || '_' || replace(COALESCE(r.trace_address, ''), ',', '_'), k.ts, k.number, k.hash
        FROM (
            SELECT t.row, -1 AS position, t.hash, t.tx_index, t.block, fa.address AS from_address,
                   CASE WHEN t.is_create THEN ca.address ELSE ta.address END AS to_address,
                   CAST(t.value_gwei AS DECIMAL(38, 9)) * 1000000000 AS value, x.input,
                   CASE WHEN t.status = 0 THEN NULL WHEN t.is_create THEN x.input ELSE '0x' END AS output,
                   CASE WHEN t.is_create THEN 'create' ELSE 'call' END AS trace_type,
                   CASE WHEN t.is_create THEN NULL ELSE 'call' END AS call_type,
                   greatest(t.gas - 21000, 0) AS gas, greatest(t.gas_used - 21000, 0) AS gas_used,
                   CASE WHEN t.status = 1 THEN COALESCE(c.n, 0) ELSE 0 END AS subtraces, NULL AS trace_address,
                   CASE WHEN t.status = 0 THEN 'Reverted' END AS error, t.status
            FROM tx t JOIN transactions x ON x.hash = t.hash JOIN addr fa ON fa.aid = t.sender
            LEFT JOIN addr ta ON ta.aid = t.to LEFT JOIN addr ca ON ca.aid = t.created
            LEFT JOIN (SELECT l.row, count(*) FILTER (WHERE NOT contains(tp.trace_address, ',')) AS n
                       FROM r_np l JOIN trace_templates tp ON tp.template = l.template GROUP BY l.row) c ON c.row = t.row
            UNION ALL
            SELECT l.row, l.position, t.hash, t.tx_index, t.block, fa.address, ta.address, CAST({value} AS DECIMAL(38, 9)),
                   CASE WHEN tp.trace_type = 'create' THEN '0x60806040523480156100' || sha256({s} || ':code:' || t.row || ':' || l.position)
                        ELSE '0x' || sha256({s} || ':call:' || t.row || ':' || l.position) END,
                   CASE WHEN tp.trace_type = 'create' THEN '0x6080604052' || sha256({s} || ':rt:' || t.row) ELSE '0x' END,
                   tp.trace_type, tp.call_type, (t.gas_used * 0.6)::BIGINT, (t.gas_used * 0.3)::BIGINT, tp.children,
                   tp.trace_address, NULL, 1
            FROM r_np l JOIN trace_templates tp ON tp.template = l.template JOIN tx t ON t.row = l.row
            JOIN addr fa ON fa.aid = l.a0 JOIN addr ta ON ta.aid = l.a1
        ) r JOIN blk k ON k.idx = r.block
        ORDER BY r.row, r.position""")


def _contracts(con, chain: sim.Chain, seed: int) -> None:
    """Contracts: those created by the window's successful create traces and the older ones the window calls."""
    s = _seed_text(seed)
    erc20_list = "['" + "','".join(sim.ERC20_SIGHASHES) + "']"
    erc721_list = "['" + "','".join(sim.ERC721_SIGHASHES) + "']"
    old = _old_contracts(chain, seed)
    _register(con, "old_contracts", old)
    con.execute(f"""
        INSERT INTO contracts
        SELECT r.to_address, r.output,
               CASE WHEN c.kind = {sim.K['create_erc20']} THEN {erc20_list} WHEN c.kind = {sim.K['create_erc721']} THEN {erc721_list}
                    ELSE ['0x' || substr(sha256(r.to_address), 1, 8), '0x' || substr(sha256(r.to_address), 9, 8)] END,
               c.kind = {sim.K['create_erc20']}, c.kind = {sim.K['create_erc721']}, r.block_timestamp, r.block_number, r.block_hash
        FROM traces r JOIN addr a ON a.address = r.to_address JOIN c_np c ON c.aid = a.aid
        WHERE r.trace_type = 'create' AND r.status = 1
        UNION ALL
        SELECT a.address, '0x6080604052' || sha256({s} || ':old:' || o.aid),
               CASE WHEN o.erc20 THEN {erc20_list} WHEN o.erc721 THEN {erc721_list} ELSE ['0x' || substr(sha256(a.address), 1, 8)] END,
               o.erc20, o.erc721, make_timestamp(o.ts * 1000000), o.number, '0x' || sha256({s} || ':b:' || o.number)
        FROM old_contracts o JOIN addr a ON a.aid = o.aid
        ORDER BY 7, 1""")


def _tokens(con, chain: sim.Chain, seed: int) -> None:
    """Tokens: the metadata of every token contract, at its creation block."""
    con.execute("""
        INSERT INTO tokens
        SELECT c.address, m.symbol, m.name, CASE WHEN m.decimals >= 0 THEN CAST(m.decimals AS VARCHAR) END,
               CAST(m.supply AS VARCHAR), c.block_timestamp, c.block_number, c.block_hash
        FROM token_meta m JOIN addr a ON a.aid = m.aid JOIN contracts c ON c.address = a.address
        ORDER BY c.block_number, c.address""")


def _balances(con, chain: sim.Chain, seed: int) -> None:
    """Balances: every address's net ether flow plus, for most addresses, an opening balance."""
    s = _seed_text(seed)
    con.execute(f"""
        INSERT INTO balances
        WITH flows AS (
            SELECT to_address AS address, value AS delta, 0 AS spent FROM traces
            WHERE status = 1 AND to_address IS NOT NULL AND (call_type = 'call' OR trace_type = 'create')
            UNION ALL
            SELECT from_address, -value, value FROM traces
            WHERE status = 1 AND from_address IS NOT NULL AND (call_type = 'call' OR trace_type = 'create')
            UNION ALL
            SELECT from_address, -fee, fee FROM (
                SELECT from_address, CAST(receipt_gas_used AS DECIMAL(38, 9)) * receipt_effective_gas_price
                       + COALESCE(CAST(receipt_blob_gas_used AS DECIMAL(38, 9)) * receipt_blob_gas_price, 0) AS fee FROM transactions)
            UNION ALL
            SELECT b.miner, CAST(t.receipt_gas_used AS DECIMAL(38, 9)) * (t.receipt_effective_gas_price - b.base_fee_per_gas), 0
            FROM transactions t JOIN blocks b ON b.number = t.block_number
            UNION ALL
            SELECT w.address, CAST(w.amount AS DECIMAL(38, 9)) * 1000000000, 0 FROM (SELECT unnest(withdrawals) AS w FROM blocks)
        )
        SELECT address,
               sum(delta) + sum(spent)
               + CASE WHEN hash({s} || address) % 10 < 3 THEN 0
                      ELSE CAST(pow(10, 14 + (hash({s} || ':bal:' || address) % 7000000) / 1000000.0) AS DECIMAL(38, 9)) END
        FROM flows GROUP BY address ORDER BY address""")


def _describe(con, chain: sim.Chain, seed: int) -> None:
    """The tables' remaining statements (descriptions), once every row is in."""
    for name in tables():
        for stmt in create_statements(name)[1:]:
            con.execute(stmt)


_STEPS = (
    ("addresses and tokens", _stage),
    ("blocks", _blocks),
    ("transactions", _transactions),
    ("logs", _logs),
    ("token transfers", _token_transfers),
    ("traces", _traces),
    ("contracts", _contracts),
    ("tokens", _tokens),
    ("balances", _balances),
    ("descriptions", _describe),
)


def _materialize(con, chain: sim.Chain, seed: int, step) -> dict[str, int]:
    """Create the tables, fill them one step per table in the order they read each other, then describe them."""
    for name in tables():
        for stmt in create_statements(name)[:1]:
            con.execute(stmt)
    for done, (label, fill) in enumerate(_STEPS, start=1):
        step(label, done, len(_STEPS) + 1)
        fill(con, chain, seed)
    return {name: con.execute(f"SELECT count(*) FROM {name}").fetchone()[0] for name in tables()}


def _old_contracts(chain: sim.Chain, seed: int) -> dict[str, np.ndarray]:
    """Contracts deployed before the window: the well-known ones at their real blocks, the rest (pools, dapps) spread over 2020-2025."""
    wk = sim.well_known()
    rng = np.random.default_rng([seed, 7])
    known = ([(t["address"], t["first_block"], True, False) for t in wk["erc20"]]
             + [(t["address"], t["first_block"], False, True) for t in wk["erc721"]]
             + [(r["address"], r["first_block"], False, False) for r in wk["routers"]]
             + [(wk["marketplace"]["address"], wk["marketplace"]["first_block"], False, False)])
    first_new = int(chain.blocks["number"][0]) if len(chain.blocks["number"]) else sim.MERGE_BLOCK
    start = np.arange(chain.n_old_contracts) + chain.n_eoa + len(chain.named)
    numbers = rng.integers(10_000_000, first_new - 1, chain.n_old_contracts)
    aid = np.concatenate((np.array([chain.named[a] for a, *_ in known]), start))
    number = np.concatenate((np.array([n for _, n, *_ in known]), numbers))
    return {"aid": aid, "number": number, "ts": np.array([sim.block_time(int(n)) for n in number]),
            "erc20": np.concatenate((np.array([e for *_, e, _ in known]), np.zeros(len(start), bool))),
            "erc721": np.concatenate((np.array([n for *_, n in known]), np.zeros(len(start), bool)))}


def dataset_path(settings) -> Path:
    return settings.paths.data("ethereum", "crypto_ethereum.duckdb")


def forget_build(path: Path) -> None:
    """Mark a dataset file as holding other data (e.g. loaded exports), so it is never rebuilt automatically."""
    build_record_path(Path(path)).unlink(missing_ok=True)


def default_engine(settings):
    """The local Ethereum engine. Builds the default dataset on first use (progress on stderr) and rebuilds a
    synthetic one when it no longer ends today, so "last N days" questions keep their answers."""
    from askchain.domains.ethereum.engine import EthereumEngine

    path = dataset_path(settings)
    meta_file = build_record_path(path)
    today = utc_today()
    reason = None
    if not path.is_file():
        reason = "building it (first use)"
    elif meta_file.is_file() and json.loads(meta_file.read_text()).get("end") != today.isoformat():
        reason = f"it ends on {json.loads(meta_file.read_text()).get('end')}; rebuilding it up to {today}"
    if reason:
        print(f"Local Ethereum dataset {path}: {reason}.", file=sys.stderr)
        build_dataset(path, end=today, progress=True)
    return EthereumEngine(str(path), settings.db)
