"""`askchain eth sync`: any Ethereum JSON-RPC node into the local crypto_ethereum copy (rpc: batched calls under a
rate limit; fetch: blocks, receipts, traces; derive: rows as ethereum-etl writes them; chain: contracts, tokens and
balances asked of the node; store: the DuckDB file, one transaction per batch; run: ranges, reorganizations)."""
