"""Ethereum analytics over BigQuery's `crypto_ethereum` schema: a local DuckDB copy queried with GoogleSQL."""

#: The domain's id (askchain.domain.Domain.name), here so its modules can name it without importing the plugin.
DOMAIN_ID = "ethereum"
