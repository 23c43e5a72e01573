"""Apply a calibrator saved by 'sparsecal fit' (grouped, or an --ensemble) to a
score matrix and write the calibrated matrix as .npy: a .npy input is streamed
chunk by chunk; the output appears whole or not at all.
"""
import os

import numpy as np

from ..calibration.loading import load_calibrator
from ..io.atomic import atomic_path
from . import flags
from .cluster import add_cluster_arguments, cluster_apply, wants_cluster
from .inputs import scores_from_args


def add_arguments(p):
    flags.add_input(p, "calibrator", help="directory written by 'sparsecal fit' (a grouped "
                                       "calibrator or an --ensemble)")
    flags.add_inputs(p, what="scores to calibrate", required=True, gold=False)
    flags.add_output(p, "-o", "--output", required=True, help="calibrated matrix (.npy); "
                     "--scheduler/--dask: a Zarr store (.zarr) or a directory of .npy shards")
    add_cluster_arguments(p)


def run(args, console):
    if wants_cluster(args):
        return cluster_apply(args, console)
    model = load_calibrator(args.calibrator)
    if not args.output.endswith(".npy"):
        raise ValueError(f"-o {args.output!r} must be a .npy file")
    with console.step("reading"):
        scores = scores_from_args(args)
    if scores.shape[1] != model.n_tags:
        raise ValueError(f"{args.scores!r} has {scores.shape[1]} tags but the calibrator "
                         f"was fit for {model.n_tags}")
    try:
        with console.step("calibrating") as progress:
            if os.path.splitext(args.scores)[1].lower() == ".npy":   # streamed (memory maps)
                model.transform_file(args.scores, args.output, progress=progress)
            else:   # .npz / .pt: already read into memory
                with atomic_path(args.output, suffix=".npy") as tmp:
                    np.save(tmp, model.transform_dense(scores, progress=progress))
    except ValueError as exc:   # e.g. NaN or values outside [0, 1]
        raise ValueError(f"{args.scores!r}: {exc}") from None
    console.info(f"wrote {args.output}")
    return 0
