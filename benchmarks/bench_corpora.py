"""Reading gold tags of a ~1M-token corpus: the vectorised readers of
``sparsecal.io`` against a per-token Python loop (how ``.txt`` gold was read
before, and how a CoNLL file is usually read).

Run: ``python benchmarks/bench_corpora.py [n_tokens]`` (default 1,000,000).
Prints the best of 5 runs per reader, in seconds, and checks every reader
gives the same ids.
"""
import os
import sys
import tempfile
import time

import numpy as np

from sparsecal.io import load_gold, read_conll_columns, read_conllu
from sparsecal.io.tagids import tag_ids
from sparsecal.io.textfile import read_lines

TAGS = [f"T{i}" for i in range(50)]


def loop_txt(path, index):
    """Per line: strip, look up (the pre-vectorised reader's per-token work)."""
    with open(path, encoding="utf-8") as f:
        return np.array([index[line.strip()] for line in f], dtype=np.int64)


def str_txt(path, index):
    """The previous ``load_gold`` of a ``.txt`` file: one str per line, stripped,
    looked up through the tag index (``tag_ids``)."""
    lines = read_lines(path, "gold")
    if lines and lines[-1].strip() == "":
        lines.pop()
    return tag_ids(list(map(str.strip, lines)), index)[0]


def loop_conllu(path, index, column=3):
    """Per line: split at tabs, keep integer IDs, look the tag up."""
    ids = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            cols = line.split("\t")
            if len(cols) == 10 and cols[0].isdigit():
                ids.append(index[cols[column]])
    return np.array(ids, dtype=np.int64)


def loop_conll(path, index, column=-1):
    ids = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            cols = line.split()
            if cols and cols[0] != "-DOCSTART-":
                ids.append(index[cols[column]])
    return np.array(ids, dtype=np.int64)


def best(fn, *args, **kwargs):
    times = []
    for _ in range(5):
        start = time.perf_counter()
        out = fn(*args, **kwargs)
        times.append(time.perf_counter() - start)
    return min(times), out


def main(n=1_000_000):
    rng = np.random.default_rng(0)
    tags = np.array(TAGS)[rng.zipf(1.5, n) % len(TAGS)]
    index = {t: i for i, t in enumerate(TAGS)}
    expected = np.array([index[t] for t in tags.tolist()])
    with tempfile.TemporaryDirectory() as d:
        txt, conll, conllu = (os.path.join(d, name) for name in ("g.txt", "g.conll", "g.conllu"))
        breaks = rng.random(n) < 1 / 15   # ~15-token sentences
        with open(txt, "w") as f:
            f.write("\n".join(tags.tolist()) + "\n")
        with open(conll, "w") as f:
            f.write("".join(f"w{i} NN B-NP {t}\n" + ("\n" if b else "")
                            for i, (t, b) in enumerate(zip(tags.tolist(), breaks))))
        with open(conllu, "w") as f:
            f.write("".join(f"1\tw{i}\tw\t{t}\t_\t_\t0\troot\t_\t_\n" + ("\n" if b else "")
                            for i, (t, b) in enumerate(zip(tags.tolist(), breaks))))
        rows = [("txt, per-token loop", best(loop_txt, txt, index)),
                ("txt, str per line (before)", best(str_txt, txt, index)),
                ("txt, load_gold", best(load_gold, txt, tag_index=index)),
                ("conll, per-token loop", best(loop_conll, conll, index)),
                ("conll, read_conll_columns",
                 best(lambda: read_conll_columns(conll, -1, index).gold)),
                ("conllu, per-token loop", best(loop_conllu, conllu, index)),
                ("conllu, read_conllu (numpy)", best(lambda: read_conllu(conllu, "upos",
                                                                         index).gold))]
    print(f"{n:,} tokens, best of 5 (s); ratio to the loop of the same file")
    loops = {"txt": rows[0][1][0], "conll": rows[3][1][0], "conllu": rows[5][1][0]}
    for name, (seconds, ids) in rows:
        assert np.array_equal(ids, expected), name
        print(f"  {name:<30} {seconds:7.3f} {seconds / loops[name.split(',')[0]]:6.2f}x")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000)
