"""How each SQL dialect is named in prompts: behaviour as data, one row per sqlglot dialect."""

DIALECT_LABELS = {
    "sqlite": "SQLite",
    "duckdb": "DuckDB SQL",
    "postgres": "PostgreSQL",
    "bigquery": "BigQuery GoogleSQL",
}


def dialect_label(dialect: str) -> str:
    return DIALECT_LABELS.get(dialect, dialect)
