#!/usr/bin/env bash
# Install (if needed) bubblewrap, the program sandbox (app/sandbox): code graders, workspace
# hooks and /v1 python graders run only inside it, so their tests need it. prlimit and
# setpriv come with util-linux. Checks that a sandbox starts here (user namespaces allowed).
# Usage: `source scripts/ci_sandbox.sh` (as .ci/run does).
set -euo pipefail

log() { echo "ci_sandbox: $*" >&2; }

if ! command -v bwrap >/dev/null 2>&1; then
    log "installing Debian's bubblewrap package"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update >&2
    apt-get install -y --no-install-recommends bubblewrap >&2
fi
for tool in prlimit setpriv; do
    command -v "${tool}" >/dev/null 2>&1 || { log "missing ${tool} (util-linux)"; exit 1; }
done
if ! bwrap --unshare-pid --unshare-net --die-with-parent --ro-bind /usr /usr \
    --symlink usr/bin /bin --symlink usr/lib /lib --symlink usr/lib64 /lib64 \
    --proc /proc --dev /dev -- /usr/bin/true; then
    log "bwrap cannot start a sandbox here (are user namespaces allowed?)"
    exit 1
fi
log "$(bwrap --version)"
