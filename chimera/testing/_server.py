"""The lifecycle shared by Chimera's local test servers (the OpenAI stub, the GitHub fake).

A :class:`LocalServer` binds ``127.0.0.1`` on an ephemeral port, serves in a background
thread with non-daemon handler threads, and on :meth:`~LocalServer.stop` wakes delayed
handlers, closes the socket and joins every thread, so a stopped server leaves nothing
running (``filterwarnings = error`` would turn a leak into a failure).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, ClassVar, Self


class OneShotHandler(BaseHTTPRequestHandler):
    """A request handler that serves one request per connection and logs nothing.

    Every answer says ``Connection: close``, so a handler thread never lingers on a kept-alive
    socket; tests read the servers' request records, not stderr.
    """

    protocol_version = "HTTP/1.1"
    timeout = 10  # a client that connects and sends nothing cannot pin a thread forever

    def handle(self) -> None:
        self.close_connection = True
        self.handle_one_request()

    def log_message(self, format: str, *args: Any) -> None:
        return

    def reply(
        self, status: int, data: bytes, content_type: str, headers: Mapping[str, str]
    ) -> None:
        """Send one complete answer; a client that already gave up (a timeout test) is fine."""
        try:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Connection", "close")
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass


class _Server(ThreadingHTTPServer):
    # Non-daemon handler threads, joined by server_close(): a stopped server leaves none.
    daemon_threads = False
    block_on_close = True
    allow_reuse_address = True

    def __init__(self, owner: Any, handler: type[BaseHTTPRequestHandler]) -> None:
        self.owner = owner
        super().__init__(("127.0.0.1", 0), handler)


class LocalServer:
    """Base of a threaded HTTP server on ``127.0.0.1``; subclasses set ``handler``.

    Handlers reach the server object as ``self.server.owner``. Use as a context manager, or
    call :meth:`start` and :meth:`stop`.
    """

    handler: ClassVar[type[BaseHTTPRequestHandler]]
    thread_name: ClassVar[str] = "chimera-test-server"

    def __init__(self) -> None:
        self._stopping = threading.Event()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> Self:
        """Bind and serve in a background thread; returns ``self``."""
        if self._server is not None:
            return self
        self._stopping.clear()
        self._server = _Server(self, self.handler)
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"{self.thread_name}-{self.port}",
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, wake delayed handlers, close the socket and join every thread."""
        server, thread = self._server, self._thread
        if server is None:
            return
        self._stopping.set()
        server.shutdown()
        server.server_close()  # joins the handler threads (block_on_close)
        if thread is not None:
            thread.join()
        self._server = None
        self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError(f"{type(self).__name__} is not running")
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT`` (no trailing slash)."""
        return f"http://127.0.0.1:{self.port}"
