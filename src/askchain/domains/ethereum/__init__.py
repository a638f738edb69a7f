"""Ethereum analytics over BigQuery's `crypto_ethereum` schema: a local DuckDB copy queried with GoogleSQL."""
