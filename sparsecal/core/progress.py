"""The ``progress=`` callbacks of the library's long calls.

One convention for every call that can take long: an optional keyword
``progress``, a callable that the call invokes as ``progress(done, total)`` in
the caller's thread, with ``done`` never decreasing and ending at ``total``.
The unit is the call's own: rows for :func:`~sparsecal.threshold` and
:meth:`~sparsecal.GroupedCalibrator.transform_dense`, groups for
:meth:`~sparsecal.GroupedCalibrator.fit`, calibration errors for
:func:`~sparsecal.evaluate`, fits for :func:`~sparsecal.compare_methods`,
evaluations, fits and figures for :func:`~sparsecal.plotting.report.write_report`,
batches for :func:`sparsecal.crf.stream_entries`.
A callback never changes a result; the command line draws its progress bars
with it.
"""
__all__ = ["ProgressCounter", "check_progress"]


def check_progress(progress):
    """``progress`` if it is None or callable.

    Parameters
    ----------
    progress : callable or None
        A ``progress(done, total)`` callback.

    Returns
    -------
    callable or None

    Raises
    ------
    TypeError
        For anything else, naming ``progress``.

    Examples
    --------
    >>> from sparsecal.core.progress import check_progress
    >>> check_progress(print) is print
    True
    >>> check_progress(True)
    Traceback (most recent call last):
    ...
    TypeError: progress must be None or a callable progress(done, total), got True
    """
    if progress is not None and not callable(progress):
        raise TypeError(f"progress must be None or a callable progress(done, total), "
                        f"got {progress!r}")
    return progress


class ProgressCounter:
    """Counts the units of one call and reports them to its ``progress``.

    Parameters
    ----------
    progress : callable or None
        The call's ``progress`` argument (checked by :func:`check_progress`),
        called with ``(0, total)`` at once; with None the counter does nothing.
    total : int
        The units of the whole call.

    Raises
    ------
    TypeError
        If ``progress`` is neither None nor callable.

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
    >>> counter.advance()
    4/4
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
        """The ``progress`` for a call that does the next units of this one (its
        total is the number of units it does here), or None when nothing is
        reported."""
        if self.progress is None:
            return None
        start = self.done

        def forward(done, total):
            self.done = start + done
            self.progress(self.done, self.total)
        return forward
