"""What ``minimodel train`` and ``compare`` set up while a run is under way.

* SIGTERM (``kill``, ``timeout``) and SIGHUP (the terminal closed) act as Ctrl-C: the training
  loop stops at the next step boundary and saves a checkpoint that ``--resume`` continues.
* NumPy's "overflow encountered" warnings are hidden: the loop checks every loss and the
  weights before saving and says in one sentence what diverged, so the raw warnings would only
  print above that sentence.
"""

from __future__ import annotations

import contextlib
import signal
import threading
import warnings
from collections.abc import Iterator
from typing import Any

# SIGHUP does not exist on Windows.
STOP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP")
                     if hasattr(signal, name))


def _as_ctrl_c(signum: int, frame: Any) -> None:
    """Hand the signal to whatever handles Ctrl-C now: the training loop's (stop at the next
    step, save) or Python's default (KeyboardInterrupt, before the loop began)."""
    handler = signal.getsignal(signal.SIGINT)
    if callable(handler):
        handler(signal.SIGINT, frame)
    else:
        raise KeyboardInterrupt


@contextlib.contextmanager
def stop_signals_act_like_ctrl_c() -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread():
        yield  # signal handlers can only be set from the main thread
        return
    previous = {sig: signal.signal(sig, _as_ctrl_c) for sig in STOP_SIGNALS}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


@contextlib.contextmanager
def quiet_numpy_overflow() -> Iterator[None]:
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", r"(overflow|invalid value|divide by zero) encountered",
                                RuntimeWarning)
        yield


@contextlib.contextmanager
def run_guards() -> Iterator[None]:
    """Both of the above."""
    with stop_signals_act_like_ctrl_c(), quiet_numpy_overflow():
        yield
