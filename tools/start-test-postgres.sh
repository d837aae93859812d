#!/usr/bin/env bash
# A local PostgreSQL for the history store's tests (tests/reliability/test_history_writers.py):
# installs Debian's postgresql package if missing (needs root), starts its cluster, creates a
# role and a database of their own, and prints the line to export:
#   eval "$(bash tools/start-test-postgres.sh)"
#   python -m pytest tests/reliability/test_history_writers.py -rs
set -euo pipefail
if ! command -v pg_lsclusters >/dev/null 2>&1; then
    apt-get update -q >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q postgresql >&2
fi
read -r version cluster _ < <(pg_lsclusters --no-header | head -1)
pg_ctlcluster "$version" "$cluster" start >&2 2>/dev/null || true
port=$(pg_lsclusters --no-header | awk 'NR==1 {print $3}')
su postgres -c "psql -qtAc \"SELECT 1 FROM pg_roles WHERE rolname='specperf'\"" | grep -q 1 ||
    su postgres -c "psql -qc \"CREATE ROLE specperf LOGIN PASSWORD 'specperf'\"" >&2
su postgres -c "psql -qtAc \"SELECT 1 FROM pg_database WHERE datname='specperf_test'\"" | grep -q 1 ||
    su postgres -c "createdb -O specperf specperf_test" >&2
echo "export SPECPERF_TEST_POSTGRES_URL=postgresql://specperf:specperf@127.0.0.1:${port}/specperf_test"
