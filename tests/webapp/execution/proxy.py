"""A TCP proxy the test controls: ``drop()`` closes every connection through it, ``down()`` also
refuses new ones until ``up()`` (a database that vanishes and comes back, without touching the
shared server). ``make bench-scale`` uses it too."""

from __future__ import annotations

import socket
import threading
from contextlib import suppress


class TcpProxy:
    """Forwards ``127.0.0.1:<port>`` to ``target_port``."""

    def __init__(self, target_port: int) -> None:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = int(probe.getsockname()[1])
        self.target = ("127.0.0.1", target_port)
        self._open: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._listener: socket.socket | None = None
        self.up()

    def up(self) -> None:
        """Accept connections again (if not already)."""
        if self._listener is not None:
            return
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def down(self) -> None:
        """Close every forwarded connection and stop listening (new ones are refused)."""
        if self._listener is not None:
            with suppress(OSError):  # wakes the accepting thread (close alone does not)
                self._listener.shutdown(socket.SHUT_RDWR)
            self._listener.close()
            self._listener = None
        self.drop()

    def drop(self) -> None:
        """Close every forwarded connection (new ones are accepted)."""
        with self._lock:
            sockets, self._open = list(self._open), set()
        for sock in sockets:
            with suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:  # closed by down()
                return
            try:
                server = socket.create_connection(self.target)
            except OSError:
                client.close()
                continue
            with self._lock:
                self._open.update((client, server))
            for source, sink in ((client, server), (server, client)):
                threading.Thread(target=self._pump, args=(source, sink), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        with suppress(OSError):
            while data := source.recv(65536):
                sink.sendall(data)
        for sock in (source, sink):
            with suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
