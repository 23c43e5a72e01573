# Declarations shared by the compiled kernels of sparsecal.core (cimported by
# _threshold.pyx, _sort.pyx, _binning.pyx and _isotonic.pyx; no module of its own).
#
# Conventions of every kernel: small, typed, GIL-free loops in the style of
# scikit-learn's sklearn/_isotonic.pyx; float32 and float64 taken without copying
# (the fused type below, declared once so that all kernels specialise on the same
# two), int64 indices; inputs already validated by the Python wrappers in
# sparsecal/core/*.py, so a kernel never raises on bad data, it reports it
# (counts of invalid values, index of a bad tag).

ctypedef fused floating:
    float
    double
