"""``minimodel explore RUN --serve``: the explorer of a run that is still training, live.

A small HTTP server on 127.0.0.1 (never another interface) serves the page and ``data.json``;
the page asks for ``data.json`` every 1.5 s and redraws when a run has new snapshots. The data
is rebuilt only when a run's ``snapshots/index.jsonl`` changed, so an idle page costs a
``stat`` per run and request.
"""

from __future__ import annotations

import http.server
import os
import socketserver
import threading
from pathlib import Path
from typing import Callable

from minimodel.explorer.frames import expand_runs, run_data
from minimodel.explorer.page import explorer_html, page_data
from minimodel.training.snapshots import FOLDER


class LiveRuns:
    """The data of some runs, rebuilt when one of them has taken a new snapshot."""

    def __init__(self, run_dirs: list[Path], lang: str) -> None:
        self.run_dirs, self.lang = run_dirs, lang
        self._stamp: tuple = ()
        self._runs: list = []
        self._lock = threading.Lock()

    def _stamps(self) -> tuple:
        stamps = []
        for run in self.run_dirs:
            index = run / FOLDER / "index.jsonl"
            stamps.append(index.stat().st_mtime_ns if index.is_file() else None)
        return tuple(stamps)

    def runs(self) -> list:
        with self._lock:
            stamp = self._stamps()
            if stamp != self._stamp:
                self._runs = [run_data(run) for run in self.run_dirs]
                self._stamp = stamp
            return self._runs

    def page(self) -> bytes:
        return explorer_html(self.runs(), self.lang, live=True).encode("utf-8")

    def data(self) -> bytes:
        return page_data(self.runs(), self.lang, live=True).replace("<\\/", "</").encode("utf-8")


def make_server(live: LiveRuns, port: int) -> socketserver.TCPServer:
    """An HTTP server on 127.0.0.1:``port`` (0: any free port) for ``live``."""
    routes: dict[str, tuple[str, Callable[[], bytes]]] = {
        "/": ("text/html; charset=utf-8", live.page),
        "/index.html": ("text/html; charset=utf-8", live.page),
        "/data.json": ("application/json", live.data)}

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (the http.server name)
            route = routes.get(self.path.split("?")[0])
            if route is None:
                self.send_error(404)
                return
            body = route[1]()
            self.send_response(200)
            self.send_header("Content-Type", route[0])
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:  # quiet: the terminal shows the URL only
            pass

    socketserver.TCPServer.allow_reuse_address = True
    return socketserver.ThreadingTCPServer(("127.0.0.1", port), Handler)


def serve(run_dirs: list[str | os.PathLike], port: int = 8765, lang: str = "en",
          on_ready: Callable[[str], None] = print) -> None:
    """Serve the live explorer until Ctrl-C."""
    live = LiveRuns(expand_runs(run_dirs), lang)
    live.runs()   # fail before listening when a run cannot be read
    try:
        server = make_server(live, port)
    except OSError as exc:
        raise ValueError(f"port {port} on 127.0.0.1 is not free ({exc.strerror}); choose "
                         f"another with --port") from None
    with server:
        on_ready(f"http://127.0.0.1:{server.server_address[1]}/")
        server.serve_forever()
