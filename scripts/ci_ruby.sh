#!/usr/bin/env bash
# Install (if needed) Debian's ruby package: promptfoo's `ruby` asserts run with it in the
# program sandbox (app/evaluators/code/ruby.py), and promptfoo itself runs them with it in
# the conformance harness. It lives under /usr, which the sandbox shows read-only.
# Usage: `source scripts/ci_ruby.sh` (as .ci/run does).
set -euo pipefail

log() { echo "ci_ruby: $*" >&2; }

if ! command -v ruby >/dev/null 2>&1; then
    log "installing Debian's ruby package"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update >&2
    apt-get install -y --no-install-recommends ruby >&2
fi
log "$(ruby --version)"
