#!/usr/bin/env bash
# CI: make Debian's PostgreSQL server binaries available for the @phasekit/store-postgres tests and bench.
# The tests start their own throwaway clusters (packages/store-postgres/scripts/pg-cluster.sh) on 127.0.0.1 at
# a free port and stop them; this script only installs the package. CI runs as root on a fresh Debian machine.
set -euo pipefail
if ls -d /usr/lib/postgresql/*/bin >/dev/null 2>&1; then
  echo "setup-postgres: $(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1) present"
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  echo "setup-postgres: PostgreSQL missing and not root; install it with: sudo apt-get install -y postgresql" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends postgresql >/dev/null
# The package may start a default cluster on 5432: the tests never use it.
if command -v pg_lsclusters >/dev/null; then
  pg_lsclusters --no-header 2>/dev/null | while read -r ver name _; do pg_ctlcluster "$ver" "$name" stop 2>/dev/null || true; done
fi
echo "setup-postgres: installed $(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)"
