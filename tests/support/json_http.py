"""A real local HTTP server (the standard library's, in a thread) answering GETs with JSON."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Routes = dict[str, tuple[int, bytes]]


@contextlib.contextmanager
def json_server(routes: Routes, otherwise: tuple[int, bytes] = (404, b"{}")) -> Iterator[int]:
    """Serves ``routes`` (path -> status and JSON body; read at each request, so a test may
    fill them in later) and ``otherwise`` for any other path on a loopback port it yields."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            status, body = routes.get(self.path, otherwise)
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            return

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield int(httpd.server_address[1])
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()
