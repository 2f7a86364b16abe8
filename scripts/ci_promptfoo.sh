#!/usr/bin/env bash
# Install (if needed) Debian's Node.js and npm, then promptfoo 0.123.1 and the Node.js 22 it
# needs from npm into ~/.cache/eval-execution/conformance (once per machine), for the
# promptfoo conformance test (tests/conformance/test_promptfoo.py). It also needs util-linux's
# unshare (root): the harness runs in a loopback-only network namespace. Also bun (npm) and
# uv (PyPI) into the checkout's git-ignored .conformance/agentv/tools, which the AgentV harness
# and the TypeScript program tests (tests/evaluators/test_typescript_programs.py) run under.
# Usage: `source scripts/ci_promptfoo.sh` (as .ci/run does).
set -euo pipefail

log() { echo "ci_promptfoo: $*" >&2; }

if ! command -v npm >/dev/null 2>&1; then
    log "installing Debian's nodejs and npm packages"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update >&2
    apt-get install -y --no-install-recommends nodejs npm >&2
fi
log "$(.venv/bin/python -m scripts.conformance.promptfoo.install | tail -n 1)"
log "bun and uv: $(.venv/bin/python -c 'from scripts.conformance.agentv.install import ensure_tools; print(ensure_tools())' | tail -n 1)"
