"""The one way a sandboxed solution talks to the judge: a pipe of bounded, typed frames.

Nothing the child sends is trusted. The judge reads no file the child could have written; it
reads this pipe, and only what it expects, with a cap on every frame and on the total:

* a frame is a 4-byte big-endian length, then ``J`` and a JSON event (at most
  ``EVENT_BYTES``), or ``A`` and one array in the uncompressed ``.npy`` format;
* an array frame is read only after its header (at most ``HEADER_BYTES``) has been parsed and
  checked against the shape and dtype the reference gave for that output: a plain numeric
  dtype, and then either exactly the expected shape with exactly its bytes of data (at most
  what the reference's output takes), or no data at all (a shape or dtype mismatch, reported
  from the header; a stand-in of that shape takes no memory);
* events arrive in order: ``ready``, ``loaded`` / ``load_error``, one ``case`` per case
  (an ``ok`` case followed by one array frame per output), ``done``; and the whole stream is
  capped at ``budget`` bytes.

Anything else (a flood, a frame too long, a bad header, a declared 10^13 elements, arrays
nobody asked for) closes the pipe and sets :attr:`Channel.problem`: the verdict is an
``error`` that says so, never a hang, a crash or a pass. Reads happen in a thread that stops
at a deadline (``finish``), so a descendant holding the write end cannot keep the judge
waiting.
"""

from __future__ import annotations

import ast
import json
import os
import re
import select
import struct
import threading
import time
from typing import Any

import numpy as np

EVENT_BYTES = 16 * 1024      # one JSON event (messages are cut to 500 characters)
HEADER_BYTES = 4096          # one .npy header (NumPy writes 128 bytes for small arrays)
MAX_EVENTS_PER_CASE = 4      # case, plus slack for ready / loaded / done
MAGIC = b"\x93NUMPY"


# Characters a terminal acts on instead of showing: C0 controls but tab and newline (ESC starts
# the sequences that move the cursor, erase lines, set the title or the clipboard; CR and
# backspace overwrite), DEL, C1 controls (CSI, OSC) and the bidirectional overrides.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def printable(value: Any) -> Any:
    """``value`` (a string, or lists and dicts of them) with every character a terminal would
    act on written as its escape (``\\x1b``). Text from the solution's process (its exception
    messages, tracebacks, stderr) is shown to the learner: raw, a failing solution could erase
    the verdict line and print a green pass in its place."""
    if isinstance(value, str):
        return _CONTROL.sub(lambda m: ascii(m.group())[1:-1], value)
    if isinstance(value, list):
        return [printable(v) for v in value]
    if isinstance(value, dict):
        return {printable(k): printable(v) for k, v in value.items()}
    return value


class ChannelError(ValueError):
    """The child sent something the protocol does not allow."""


def parse_npy_header(frame: bytes) -> tuple[np.dtype, tuple[int, ...], bool, int]:
    """(dtype, shape, fortran_order, offset of the data) of a ``.npy`` frame, validated:
    a plain numeric dtype (bool, integers, floats; no objects, no fields), non-negative
    integer dimensions. Raises :class:`ChannelError` otherwise."""
    if len(frame) < 10 or frame[:6] != MAGIC:
        raise ChannelError("an output is not in the .npy format")
    major = frame[6]
    if major == 1:
        (length,), start = struct.unpack("<H", frame[8:10]), 10
    elif major in (2, 3) and len(frame) >= 12:
        (length,), start = struct.unpack("<I", frame[8:12]), 12
    else:
        raise ChannelError(f"an output has .npy version {major}")
    if length > HEADER_BYTES or start + length > len(frame):
        raise ChannelError(f"an output's .npy header is {length} bytes long")
    try:
        header = ast.literal_eval(frame[start:start + length].decode("latin1"))
        dtype = np.dtype(header["descr"]) if isinstance(header["descr"], str) else None
        shape, fortran = header["shape"], header["fortran_order"]
    except (ValueError, SyntaxError, TypeError, KeyError, MemoryError, RecursionError):
        raise ChannelError("an output's .npy header cannot be read") from None
    if dtype is None or dtype.kind not in "biuf" or dtype.fields is not None \
            or dtype.hasobject or dtype.itemsize > 16:
        raise ChannelError(f"an output has dtype {header.get('descr')!r}, not a plain number")
    if not (isinstance(shape, tuple) and len(shape) <= 32
            and all(type(n) is int and 0 <= n < 2**62 for n in shape)
            and isinstance(fortran, bool)):
        raise ChannelError(f"an output declares the shape {str(shape)[:80]}")
    return dtype, shape, fortran, start + length


def array_from_frame(frame: bytes, want: np.ndarray) -> np.ndarray:
    """The array of one frame, checked against ``want`` (the reference's output): with
    exactly its shape and dtype (any numeric dtype for a 0-d result) the data must be
    exactly there; otherwise there must be no data, and a zero-memory stand-in of the
    declared shape and dtype comes back (the comparison reports the mismatch)."""
    dtype, shape, fortran, offset = parse_npy_header(frame)
    data = memoryview(frame)[offset:]
    if shape == want.shape and (dtype == want.dtype or want.ndim == 0):
        if len(data) != want.size * dtype.itemsize:
            raise ChannelError(f"an output of shape {shape} came with {len(data)} bytes")
        return np.frombuffer(data, dtype=dtype).reshape(shape, order="F" if fortran else "C")
    if len(data):
        raise ChannelError(f"an output of unexpected shape {shape} or dtype {dtype} came "
                           "with data")
    try:
        return np.broadcast_to(np.zeros((), dtype=dtype), shape)
    except ValueError:
        raise ChannelError(f"an output declares the shape {str(shape)[:80]}") from None


def output_budget(wants: list[list[np.ndarray]]) -> int:
    """Bytes the whole stream may take: every expected output once, its header, and the
    events."""
    arrays = sum(w.nbytes + HEADER_BYTES + 5 for outs in wants for w in outs)
    return arrays + (len(wants) * MAX_EVENTS_PER_CASE + 8) * (EVENT_BYTES + 5)


class Channel:
    """The read end of the pipe, read in a thread (see the module docstring).

    ``wants[i]`` holds the reference's outputs of case ``i``: their shapes and dtypes are what
    the child's arrays are checked against, their sizes what they may take."""

    def __init__(self, wants: list[list[np.ndarray]]) -> None:
        self.read_fd, self.write_fd = os.pipe()
        self.wants = wants
        self.budget = output_budget(wants)
        self.received = 0
        self.events: list[dict[str, Any]] = []
        self.outputs: dict[int, list[np.ndarray]] = {}
        self.cases_done = 0
        self.ready_at: float | None = None
        self.problem: str | None = None
        self._sent = 0  # arrays the current case sends
        self._stop_at: float | None = None
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def child_started(self) -> None:
        os.close(self.write_fd)  # only the child holds the write end now

    def finish(self, grace: float = 2.0) -> None:
        """Read what is left for at most ``grace`` seconds, then stop (a descendant that
        still holds the write end cannot keep the judge waiting)."""
        self._stop_at = time.monotonic() + grace
        self._thread.join(grace + 1.0)

    # -- reading ----------------------------------------------------------------------------
    def _read_exactly(self, n: int) -> bytes | None:
        chunks, left = [], n
        while left:
            if self._stop_at is not None and time.monotonic() >= self._stop_at:
                raise ChannelError("the solution's process kept the report pipe open")
            ready, _, _ = select.select([self.read_fd], [], [], 0.2)
            if not ready:
                continue
            chunk = os.read(self.read_fd, min(left, 1 << 20))
            if not chunk:
                if left == n:
                    return None  # a clean end between frames
                raise ChannelError("a report was cut short")
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)

    def _frame(self, pending: tuple[int, int] | None) -> bytes | None:
        head = self._read_exactly(4)
        if head is None:
            return None
        (length,) = struct.unpack(">I", head)
        if pending is None:
            cap = EVENT_BYTES + 1
        else:
            want = self.wants[pending[0]][pending[1]]
            cap = HEADER_BYTES + 17 + max(want.nbytes, 16) + 1
        if length < 1 or length > cap:
            raise ChannelError(f"a report of {length} bytes (at most {cap} expected here)")
        if self.received + length + 4 > self.budget:
            raise ChannelError(f"more than {self.budget} bytes of reports (the expected "
                               "outputs and their events)")
        self.received += length + 4
        body = self._read_exactly(length)
        if body is None:
            raise ChannelError("a report was cut short")
        kind = body[:1]
        if kind != (b"J" if pending is None else b"A"):
            raise ChannelError("a report of an unexpected kind")
        return body[1:]

    def _run(self) -> None:
        try:
            self._loop()
        except ChannelError as exc:
            self.problem = printable(str(exc))  # may quote what the child sent
        except OSError as exc:
            self.problem = f"the report pipe failed ({exc})"
        finally:
            os.close(self.read_fd)  # a child still writing gets EPIPE

    def _loop(self) -> None:
        pending: tuple[int, int] | None = None  # (case, output) of the next array frame
        while True:
            body = self._frame(pending)
            if body is None:
                if pending is not None:
                    raise ChannelError("a case's outputs were cut short")
                return
            if pending is not None:
                case, j = pending
                self.outputs[case].insert(j, array_from_frame(body, self.wants[case][j]))
                pending = (case, j + 1) if j + 1 < self._sent else None
                continue
            try:
                event = json.loads(body)
            except (ValueError, RecursionError):
                raise ChannelError("a report is not JSON") from None
            if not isinstance(event, dict):
                raise ChannelError("a report is not a JSON object")
            event = printable(event)
            kind = event.get("event")
            if kind == "ready" and self.ready_at is None:
                self.ready_at = time.monotonic()
            if kind == "case":
                if event.get("index") != self.cases_done or self.cases_done >= len(self.wants):
                    raise ChannelError(f"a report for case {str(event.get('index'))[:20]} "
                                       f"where case {self.cases_done} was due")
                if event.get("ok"):
                    n, scalars = event.get("n"), event.get("python_scalar")
                    if not (type(n) is int and 0 <= n <= 64 and isinstance(scalars, list)
                            and len(scalars) == n and all(type(b) is bool for b in scalars)):
                        raise ChannelError("a case report without its output count")
                    sent = min(n, len(self.wants[self.cases_done]))
                    # outputs beyond those expected are not sent; stand-ins keep the count
                    self.outputs[self.cases_done] = [np.zeros(0)] * (n - sent)
                    pending = (self.cases_done, 0) if sent else None
                    self._sent = sent
                self.cases_done += 1
            self.events.append(event)
