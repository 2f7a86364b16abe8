# eval-execution: uvicorn on port 8000, state under /data, JSON logs on stderr.
#   docker build -t eval-execution .
#   docker run --rm -p 8000:8000 -v eval-data:/data eval-execution
# Settings are EVAL_* environment variables (see .env.example and docs/operations.md).

# Build stage: a virtual environment holding exactly the pinned runtime dependencies.
FROM python:3.11.14-slim-bookworm AS build
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONDONTWRITEBYTECODE=1
RUN python -m venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH
# Dependencies get their own layer: it is rebuilt only when the lock changes.
COPY requirements.lock /tmp/requirements.lock
RUN pip install --no-cache-dir --no-deps -r /tmp/requirements.lock \
    && pip check

# Runtime stage: the venv and the application code, run by an unprivileged user.
FROM python:3.11.14-slim-bookworm AS runtime
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    EVAL_DATA_DIR=/data
# git clones a workspace's repositories (EVAL_GIT_MIRRORS, EVAL_GIT_REMOTES); bubblewrap is
# the sandbox every program a suite names runs in (code graders, hooks, /v1 python graders;
# docs/operations.md, "Security model"; prlimit and setpriv are util-linux's); nodejs runs
# promptfoo's `javascript` asserts that name a file, and ruby its `ruby` asserts, in that
# sandbox. Not pinned to
# a Debian revision: the archive replaces them with each security fix, and a pin would then
# break the build instead of taking the fix.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install --yes --no-install-recommends git bubblewrap nodejs ruby \
    && rm -rf /var/lib/apt/lists/*
RUN groupadd --system --gid 10001 eval \
    && useradd --system --uid 10001 --gid eval --no-create-home --home-dir /nonexistent \
        --shell /usr/sbin/nologin eval \
    && mkdir /data \
    && chown eval:eval /data
COPY --from=build /opt/venv /opt/venv
WORKDIR /srv/eval-execution
COPY app ./app
USER 10001:10001
VOLUME ["/data"]
EXPOSE 8000
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=4)"]
# uvicorn is PID 1 (exec form): on SIGTERM it stops accepting connections, lets requests in
# progress finish for up to 30 s, then runs the lifespan shutdown (runs are checkpointed).
STOPSIGNAL SIGTERM
CMD ["uvicorn", "app.main:app", "--host", "0.0.0.0", "--port", "8000", "--timeout-graceful-shutdown", "30", "--no-access-log"]
