"""Build the compiled core: one extension ``sparsecal.core._<family>`` per kernel
source ``sparsecal/core/_<family>.pyx`` (Cython, OpenMP when available).

Shared declarations live in ``sparsecal/core/_types.pxd``; a new kernel family is
a new ``.pyx`` file in ``sparsecal/core``, picked up here without further change.
"""
import glob
import os
import sys
import tempfile
import subprocess

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup


def _openmp_flags():
    """Return (compile, link) flags for OpenMP, or empty lists if the compiler lacks it."""
    if os.environ.get("SPARSECAL_NO_OPENMP"):
        return [], []
    if sys.platform == "win32":
        return ["/openmp"], []
    cc = os.environ.get("CC", "cc")
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "omp.c")
        with open(src, "w") as f:
            f.write("#include <omp.h>\nint main(void){return omp_get_max_threads() > 0 ? 0 : 1;}\n")
        try:
            subprocess.run([cc, "-fopenmp", src, "-o", os.path.join(tmp, "omp")],
                           check=True, capture_output=True)
        except (OSError, subprocess.CalledProcessError):
            return [], []
    return ["-fopenmp"], ["-fopenmp"]


omp_compile, omp_link = _openmp_flags()
# -ffp-contract=off: no fused multiply-add, so that a kernel's a + b * c is numpy's
extra_compile = [] if sys.platform == "win32" else ["-O3", "-ffp-contract=off"]
#: numpy's C distributions (numpy.random.c_distributions), for the resampling kernel
NPYRANDOM = os.path.join(os.path.dirname(np.__file__), "random", "lib")

extensions = [
    Extension(
        "sparsecal.core." + os.path.splitext(os.path.basename(pyx))[0],
        [pyx],
        include_dirs=[np.get_include()],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_9_API_VERSION")],
        extra_compile_args=extra_compile + omp_compile,
        extra_link_args=omp_link,
        library_dirs=[NPYRANDOM],
        libraries=["npyrandom"] + ([] if sys.platform == "win32" else ["m"]),
    )
    for pyx in sorted(glob.glob("sparsecal/core/_*.pyx"))
]

#: kernels are translated and compiled in parallel, one job per usable CPU
JOBS = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()

setup(
    options={"build_ext": {"parallel": JOBS}},
    ext_modules=cythonize(
        extensions,
        nthreads=JOBS if JOBS > 1 else 0,
        compiler_directives={
            "language_level": 3,
            "boundscheck": False,
            "wraparound": False,
            "cdivision": True,
            "initializedcheck": False,
        },
    )
)
