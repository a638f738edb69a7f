#!/usr/bin/env bash
# Create the BigQuery emulator's own venv (kept apart from the project's: it pins its own DuckDB) and put the
# spatial extension where DuckDB looks for it, since the emulator loads it at start and cannot download it.
# Idempotent: re-running only checks. Usage: scripts/setup_bqemulator.sh [VENV_DIR] (default .venv-bqemu beside scripts/).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${1:-${ASKCHAIN_BQEMU_VENV:-$ROOT/.venv-bqemu}}"
DUCKDB_VERSION=1.5.5
PYTHON="${PYTHON:-python3.11}"
command -v "$PYTHON" >/dev/null || PYTHON=python3

if [ ! -x "$VENV/bin/python" ]; then
    "$PYTHON" -m venv "$VENV"
fi
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check \
    "bqemulator==1.4.0" "duckdb==$DUCKDB_VERSION" "duckdb-extension-spatial==$DUCKDB_VERSION" numpy

# DuckDB looks in ~/.duckdb/extensions/v<version>/<platform>/; take the platform from DuckDB itself.
PLATFORM="$("$VENV/bin/python" -c 'import duckdb; print(duckdb.execute("PRAGMA platform").fetchone()[0])')"
SOURCE="$("$VENV/bin/python" - <<'PY'
import pathlib, importlib.metadata as md
files = md.distribution("duckdb-extension-spatial").files or []
hit = [f for f in files if str(f).endswith("spatial.duckdb_extension")]
print(pathlib.Path(hit[0].locate()).resolve() if hit else "")
PY
)"
if [ -z "$SOURCE" ]; then
    echo "setup_bqemulator: spatial.duckdb_extension not found in duckdb-extension-spatial" >&2
    exit 1
fi
TARGET="$HOME/.duckdb/extensions/v$DUCKDB_VERSION/$PLATFORM"
mkdir -p "$TARGET"
cmp -s "$SOURCE" "$TARGET/spatial.duckdb_extension" || cp "$SOURCE" "$TARGET/spatial.duckdb_extension"
echo "bqemulator ready in $VENV (spatial extension in $TARGET)"
