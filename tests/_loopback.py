"""An HTTP server of a test's own on loopback, serving in a thread while in a ``with`` block."""

from __future__ import annotations

import threading
from http.server import ThreadingHTTPServer


class Loopback:
    """Subclasses build a request handler class and call :meth:`serve` with it (port 0: a free one)."""

    def serve(self, handler: type) -> None:
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join()
