"""``minimodel docs serve``: check the port, build, and serve the site on this machine."""

from __future__ import annotations

import errno
import functools
import http.server
import os
import socket
import sys
from pathlib import Path

from minimodel.site.build import build

HOST = "127.0.0.1"


def check_port_free(port: int, host: str = HOST) -> None:
    """ValueError naming the port when something already listens on it (checked before the
    build, which takes a while, so the learner is told at once)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        try:
            probe.bind((host, port))
        except OSError as exc:
            if exc.errno in (errno.EADDRINUSE, errno.EACCES):
                reason = "is already in use" if exc.errno == errno.EADDRINUSE else \
                    "needs privileges on this machine"
                raise ValueError(f"port {port} on {host} {reason}; choose another with "
                                 f"--port, e.g. --port {port + 1 if port < 65535 else 8001}"
                                 ) from None
            raise


class SiteHandler(http.server.SimpleHTTPRequestHandler):
    """The built site's files; a missing page redirects to the site's own 404 page."""

    def send_error(self, code: int, message: str | None = None, explain: str | None = None):
        if code == 404 and self.path != "/404.html":
            self.send_response(302)
            self.send_header("Location", "/404.html")
            self.end_headers()
            return
        super().send_error(code, message, explain)


def serve(site_dir: str | os.PathLike, port: int = 8000) -> None:
    """Build into ``site_dir`` and serve it on http://127.0.0.1:PORT until Ctrl-C."""
    check_port_free(port)
    site: Path = build(site_dir, on_progress=lambda line: print(line, file=sys.stderr, flush=True))
    handler = functools.partial(SiteHandler, directory=str(site))
    with http.server.ThreadingHTTPServer((HOST, port), handler) as server:
        print(f"serving {site} at http://{HOST}:{port}/ (Ctrl-C to stop)", flush=True)
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            print("stopped")
