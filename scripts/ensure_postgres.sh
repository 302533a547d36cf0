#!/usr/bin/env bash
# Make sure the PostgreSQL server the store tests use (127.0.0.1:5432, database "test") is up.
set -uo pipefail
if pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; then exit 0; fi
echo "PostgreSQL is not answering on 127.0.0.1:5432; starting it"
if [ -d /etc/postgresql ]; then
  for v in $(ls /etc/postgresql); do
    pg_ctlcluster --skip-systemctl-redirect "$v" main start || true
  done
fi
for _ in $(seq 1 30); do
  pg_isready -q -h 127.0.0.1 -p 5432 && exit 0
  sleep 1
done
echo "PostgreSQL did not come up on 127.0.0.1:5432" >&2
exit 1
