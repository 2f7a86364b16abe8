#!/usr/bin/env bash
# Container checks that need no Docker engine: hadolint on the Dockerfile, the pinned
# requirements matching the venv, and (when the compose plugin exists) the compose file.
# Usage: scripts/ci_lint_container.sh
set -euo pipefail
cd "$(dirname "$0")/.."

echo "hadolint Dockerfile"
.venv/bin/hadolint Dockerfile

echo "requirements.lock is current"
.venv/bin/python scripts/lock_requirements.py --check

if docker compose version >/dev/null 2>&1; then
    echo "docker compose config"
    docker compose config --quiet
    docker compose --profile replicas config --quiet
else
    echo "docker compose: plugin not installed, compose file checked by tests/ops only"
fi
