#!/usr/bin/env bash
# Install Debian's PostgreSQL server binaries for the postgres tests (the tests start their own throwaway
# cluster on a loopback port). Idempotent and non-interactive; no default cluster is created or started.
set -euo pipefail

if compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null; then
    echo "PostgreSQL already installed: $(ls -d /usr/lib/postgresql/*/bin | tr '\n' ' ')"
    exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "setup_postgres: need root or sudo to apt-get install postgresql" >&2; exit 1; }
    SUDO="sudo"
fi

# postgresql-common reads this before creating the "main" cluster; the tests need none.
$SUDO mkdir -p /etc/postgresql-common
if [ ! -e /etc/postgresql-common/createcluster.conf ]; then
    echo "create_main_cluster = false" | $SUDO tee /etc/postgresql-common/createcluster.conf >/dev/null
fi

APT="$SUDO env DEBIAN_FRONTEND=noninteractive apt-get"
$APT update -qq
# force-confold keeps the createcluster.conf written above instead of asking.
$APT install -y -qq --no-install-recommends \
    -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold postgresql >/dev/null
echo "PostgreSQL installed: $(ls -d /usr/lib/postgresql/*/bin | tr '\n' ' ')"
