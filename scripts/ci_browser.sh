#!/usr/bin/env bash
# Install (if needed) Debian's Chromium for the browser tests (tests/browser), and export
# EVAL_TEST_CHROMIUM with its path (printed too, last line). Playwright drives it as it is:
# nothing is downloaded. The tests also need util-linux's unshare and nsenter (root).
# Usage: `source scripts/ci_browser.sh` (as .ci/run does), or
#        export EVAL_TEST_CHROMIUM="$(scripts/ci_browser.sh | tail -n 1)"
set -euo pipefail

log() { echo "ci_browser: $*" >&2; }

if ! command -v chromium >/dev/null 2>&1; then
    log "installing Debian's chromium package"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update >&2
    apt-get install -y --no-install-recommends chromium >&2
fi
for tool in unshare nsenter; do
    command -v "${tool}" >/dev/null 2>&1 || { log "missing ${tool} (util-linux)"; exit 1; }
done
log "$(chromium --version 2>/dev/null)"

EVAL_TEST_CHROMIUM="$(command -v chromium)"
export EVAL_TEST_CHROMIUM
echo "${EVAL_TEST_CHROMIUM}"
