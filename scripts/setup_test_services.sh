#!/usr/bin/env bash
# Everything the test suite needs beside the Python packages: PostgreSQL binaries, the BigQuery emulator in its
# own venv, Debian's Chromium for the browser test, and Foundry's anvil for the chain sync tests. Idempotent; each
# step is skipped when already done.
set -euo pipefail
cd "$(dirname "$0")"
bash ./setup_postgres.sh
bash ./setup_bqemulator.sh
bash ./setup_chromium.sh
bash ./setup_anvil.sh
