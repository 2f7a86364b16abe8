#!/usr/bin/env bash
# Container checks (CI runs them after the test suite): the image built from the Dockerfile,
# one container on SQLite, and docker-compose.yml's default and scale profiles on PostgreSQL,
# PostgreSQL restarted under the scale profile and a new run required to complete afterwards.
# They run with Podman and the Docker Compose binary, without a Docker engine or a registry:
# ../shared/tools/containers/run-container-checks.sh (its README says how), unchanged.
#
# Fails when a check fails, and also when it only warns: a container restarted during
# start-up (the compose file's `restart: unless-stopped` would hide a crash) counts as a
# failure here. Needs root; the first run takes ~5-15 minutes (stand-in base images are
# built), later ones a few. Usage, from anywhere in the repository:
#   bash scripts/ci_containers.sh
#   SHARED_DIR=/path/to/shared bash scripts/ci_containers.sh   # elsewhere than ../shared
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"

checks=""
for dir in "${SHARED_DIR:-}" "$ROOT/../shared" "$ROOT/../../shared"; do
    if [ -n "$dir" ] && [ -f "$dir/tools/containers/run-container-checks.sh" ]; then
        checks="$dir/tools/containers/run-container-checks.sh"
        break
    fi
done
if [ -z "$checks" ]; then
    echo "ci_containers: run-container-checks.sh not found (set SHARED_DIR to the shared folder)" >&2
    exit 2
fi

log="${TMPDIR:-/tmp}/eval-container-checks.log"
started=$(date +%s)
set +e
WITH_DB_RESTART=1 SCRIPT_TIMEOUT="${SCRIPT_TIMEOUT:-2400}" bash "$checks" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e
echo "ci_containers: $(( $(date +%s) - started )) s, exit status $status (output in $log)"
if [ "$status" != 0 ]; then
    exit "$status"
fi
if grep -q '^WARN' "$log"; then
    echo "ci_containers: a check warned (above): counted as a failure" >&2
    exit 1
fi
if ! grep -q '^0 failed\|, 0 failed$' "$log"; then
    echo "ci_containers: no closing '0 failed' line" >&2
    exit 1
fi

# Then a code grader inside the image just built, run with the compose file's options for the
# eval service: it must run confined (scripts/container_sandbox_check.py says what is checked).
sandbox_log="${TMPDIR:-/tmp}/eval-container-sandbox.log"
set +e
.venv/bin/python -m scripts.container_sandbox_check 2>&1 | tee "$sandbox_log"
status=${PIPESTATUS[0]}
set -e
if [ "$status" != 0 ] || ! grep -q '^[0-9]* passed, 0 failed$' "$sandbox_log"; then
    echo "ci_containers: the code grader in the image failed a check (output in $sandbox_log)" >&2
    exit 1
fi
