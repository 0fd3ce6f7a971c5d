"""A local HTTP server for the `kacs data fetch` tests (no tests here)."""

import contextlib
import functools
import http.server
import threading
from pathlib import Path


@contextlib.contextmanager
def serve(root: Path):
    """A local HTTP server on 127.0.0.1 serving root, stopped on exit."""

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
