#!/usr/bin/env bash
# Foundry's anvil (a local Ethereum node) for the `askchain eth sync` tests: the prebuilt binary ships inside the npm
# package @foundry-rs/anvil-linux-amd64 (package/bin/anvil). Installed under .tools/ beside scripts/, where the tests
# look for it (ASKCHAIN_ANVIL overrides). Idempotent: an installed binary of the pinned version is kept.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VERSION=1.7.1
PREFIX="$ROOT/.tools/anvil"
ANVIL="$PREFIX/node_modules/@foundry-rs/anvil-linux-amd64/bin/anvil"

if [ -x "$ANVIL" ] && "$ANVIL" --version 2>/dev/null | grep -q "$VERSION"; then
    echo "anvil already installed: $ANVIL"
    exit 0
fi
if ! command -v npm >/dev/null; then
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends npm >/dev/null
fi
mkdir -p "$PREFIX"
npm install --silent --no-audit --no-fund --prefix "$PREFIX" "@foundry-rs/anvil-linux-amd64@$VERSION" >/dev/null
chmod +x "$ANVIL"
echo "anvil installed: $("$ANVIL" --version | head -1) at $ANVIL"
