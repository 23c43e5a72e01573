"""The command's output: messages on stdout, progress lines and warnings on stderr.

A step is a ``with ProgressLine(label):`` block around one library call; the
block gets the call's ``progress`` callback, or None where nothing is drawn
(the library's fast path).
"""
import contextlib
import sys
import threading
import time

__all__ = ["Console", "ProgressLine"]


class Console:
    """Messages on stdout; progress lines and warnings on stderr (``quiet``: no
    messages, no progress)."""

    def __init__(self, quiet=False):
        self.quiet = quiet
        self._line = None   # the progress line of the step running now

    def info(self, text=""):
        if not self.quiet:
            print(text)

    @contextlib.contextmanager
    def step(self, label):
        """A step of the command: gives the ``progress`` callback of its library
        call (None where no line is drawn)."""
        self._line = ProgressLine(label, enabled=not self.quiet)
        try:
            with self._line as progress:
                yield progress
        finally:
            self._line = None

    def warn(self, text):
        """``text`` on stderr, above the progress line of a running step."""
        if self._line is not None:
            self._line.write(text)
        else:
            print(text, file=sys.stderr)


class ProgressLine:
    """One step's progress line on stderr: a bar once the fraction done is
    known, an elapsed-time spinner until then.

    Drawn on a terminal only, by a background thread, once the step has run
    :attr:`delay` seconds, every :attr:`interval` seconds; a step that ran that
    long ends its line (on an error too). The callback only records
    ``(done, total)``: the library may call it as often as it likes.

    Parameters
    ----------
    label : str
        What the step does, e.g. ``"thresholding"``.
    enabled : bool, default=True

    Examples
    --------
    >>> with ProgressLine("sorting") as progress:   # stderr is no terminal here
    ...     progress is None
    True
    """

    #: seconds a step runs before its line appears
    delay = 1.0
    #: seconds between redraws
    interval = 0.1
    #: characters of the bar
    width = 30
    _SPINNER = "|/-\\"

    def __init__(self, label, enabled=True):
        self.label = label
        self.enabled = enabled
        self._state = None    # (done, total) of the last call, if any
        self._shown = False
        self._drawn = 0       # characters of the line on the terminal now
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = None

    def __enter__(self):
        self._stream = sys.stderr
        if not (self.enabled and _is_terminal(self._stream)):
            return None
        self._start = time.perf_counter()
        self._thread = threading.Thread(target=self._run, name="sparsecal-progress",
                                        daemon=True)
        self._thread.start()
        return self

    def __call__(self, done, total):
        self._state = (done, total)

    def __exit__(self, *exc):
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
            if self._shown or time.perf_counter() - self._start >= self.delay:
                self._draw(end="\n")   # the last state, the line ended
        return False

    def write(self, text):
        """Write ``text`` and a newline on stderr, above the line if it is shown
        (the line is drawn again at the next redraw)."""
        with self._lock:
            blank = "\r" + " " * self._drawn + "\r" if self._drawn else ""
            self._stream.write(blank + text + "\n")
            self._stream.flush()
            self._drawn = 0

    def _run(self):
        if self._stop.wait(self.delay):
            return
        while True:
            self._draw()
            if self._stop.wait(self.interval):
                return

    def _draw(self, end=""):
        elapsed = time.perf_counter() - self._start
        state = self._state
        if state is not None:
            done, total = state
            frac = min(max(done / total, 0.0), 1.0) if total > 0 else 1.0
            bar = "#" * int(self.width * frac)
            line = f"{self.label:<16} [{bar:<{self.width}}] {frac:6.1%} {elapsed:6.1f} s"
        else:
            spin = "done" if end else self._SPINNER[int(elapsed / self.interval) % 4]
            line = f"{self.label:<16} {spin} {elapsed:6.1f} s"
        with self._lock:   # (spaces cover the end of a longer line drawn before)
            try:
                self._stream.write("\r" + line.ljust(self._drawn) + end)
                self._stream.flush()
            except (OSError, ValueError):   # the terminal went away: draw no more
                self._stop.set()
            self._shown = True
            self._drawn = 0 if end else len(line)


def _is_terminal(stream):
    try:
        return stream.isatty()
    except (AttributeError, ValueError):   # no isatty, or closed
        return False
