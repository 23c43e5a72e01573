"""The ``progress=`` callbacks of the library's long calls.

A long call takes an optional ``progress``, a callable it invokes as
``progress(done, total)`` in the caller's thread, ``done`` never decreasing and
ending at ``total``, in the call's own unit (rows, groups, calibration errors,
fits, batches). A callback never changes a result; the command line draws its
progress bars with it.
"""
__all__ = ["ProgressCounter", "check_progress"]


def check_progress(progress):
    """``progress`` if it is None or callable."""
    if progress is not None and not callable(progress):
        raise TypeError(f"progress must be None or a callable progress(done, total), "
                        f"got {progress!r}")
    return progress


class ProgressCounter:
    """Counts the units of one call and reports them to its ``progress`` (called with
    ``(0, total)`` at once; None: the counter does nothing).

    Examples
    --------
    >>> from sparsecal.core.progress import ProgressCounter
    >>> counter = ProgressCounter(lambda done, total: print(f"{done}/{total}"), 4)
    0/4
    >>> counter.advance()
    1/4
    >>> nested = counter.nested()   # a call doing the next units (here 2)
    >>> nested(1, 2); nested(2, 2)
    2/4
    3/4
    """

    def __init__(self, progress, total):
        self.progress = check_progress(progress)
        self.total = total
        self.done = 0
        if self.progress is not None:   # the fraction is known from the start
            self.progress(0, total)

    def advance(self, units=1):
        """Count ``units`` more units done and report them."""
        self.done += units
        if self.progress is not None:
            self.progress(self.done, self.total)

    def nested(self):
        """The ``progress`` of a call that does the next units of this one, or None."""
        if self.progress is None:
            return None
        start = self.done

        def forward(done, total):
            self.done = start + done
            self.progress(self.done, self.total)
        return forward
