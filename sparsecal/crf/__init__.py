"""CRF marginals for taggers with a linear-chain CRF output layer (torch extra)."""
from .chain import (kbest, log_partition, marginals, pair_marginals, span_marginals,
                        stream_entries, viterbi)

__all__ = ["kbest", "log_partition", "marginals", "pair_marginals", "span_marginals",
           "stream_entries", "viterbi"]
