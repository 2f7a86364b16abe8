"""Run inside the sandbox: forward TCP connections on its own loopback to a Unix socket.

A sandbox has its own network namespace with nothing but a loopback interface, so a program
that calls the service's target proxy over HTTP (``http://127.0.0.1:PORT``, as AgentV's SDK
does) reaches this forwarder, which passes every byte on to the proxy's Unix socket, bound
into the sandbox. The host's loopback and every other address stay out of reach.

``python3 -I -S forwarder.py SOCKET PORT -- PROGRAM [ARGS...]`` listens, starts the program
(stdin, stdout and stderr inherited) and exits with its exit status. Standard library only:
it runs under the sandbox's own interpreter, without this application.
"""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import threading

_CHUNK = 65536


def _pipe(source: socket.socket, sink: socket.socket) -> None:
    with contextlib.suppress(OSError):
        while data := source.recv(_CHUNK):
            sink.sendall(data)
    with contextlib.suppress(OSError):
        sink.shutdown(socket.SHUT_WR)


def _serve(server: socket.socket, path: str) -> None:
    while True:
        client, _ = server.accept()
        upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            upstream.connect(path)
        except OSError:
            client.close()
            upstream.close()
            continue
        for source, sink in ((client, upstream), (upstream, client)):
            threading.Thread(target=_pipe, args=(source, sink), daemon=True).start()


def main(argv: list[str]) -> int:
    """Listen on ``127.0.0.1:PORT``, run the program, return its exit status."""
    path, port, separator, *program = argv
    if separator != "--" or not program:
        sys.stderr.write("usage: forwarder.py SOCKET PORT -- PROGRAM [ARGS...]\n")
        return 2
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", int(port)))
    server.listen(64)
    threading.Thread(target=_serve, args=(server, path), daemon=True).start()
    try:
        code = subprocess.call(program)
    except OSError as exc:
        sys.stderr.write(f"{program[0]}: {exc}\n")
        return 127
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
