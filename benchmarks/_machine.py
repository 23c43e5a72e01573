"""The machine during a benchmark, shared by ``compare_core.py`` and
``bench_crf.py``: how much CPU time other processes took meanwhile
(:class:`ForeignLoad`), and spinning processes that keep other CPUs busy on
purpose (:class:`BusyCores`, the "other core busy" condition); and
:func:`interleaved`, the round-robin timing of ``bench_bootstrap.py`` and
``bench_logistic.py``.
"""
import os
import resource
import subprocess
import sys
import time


def _cpu_busy_jiffies():
    """(busy, total) jiffies of the whole machine, from /proc/stat."""
    with open("/proc/stat") as f:
        fields = [int(v) for v in f.readline().split()[1:]]
    idle = fields[3] + fields[4]
    total = sum(fields[:8])
    return total - idle, total


class ForeignLoad:
    """Share of the machine's CPU time used by *other* processes meanwhile:
    a measure of how noisy the (shared) machine was during a case."""

    def __enter__(self):
        self.busy0, self.total0 = _cpu_busy_jiffies()
        self.own0 = self._own()
        return self

    @staticmethod
    def _own():
        s = resource.getrusage(resource.RUSAGE_SELF)
        c = resource.getrusage(resource.RUSAGE_CHILDREN)
        return s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime

    def __exit__(self, *exc):
        busy1, total1 = _cpu_busy_jiffies()
        hz = os.sysconf("SC_CLK_TCK")
        busy = (busy1 - self.busy0) / hz
        total = (total1 - self.total0) / hz
        own = self._own() - self.own0
        self.share = max(0.0, busy - own) / total if total > 0 else 0.0
        return False


class BusyCores:
    """Keep ``n`` CPUs busy with spinning processes while in the block: the
    "other core busy" condition of the targets, made reproducible."""

    def __init__(self, n):
        self.n = n
        self.procs = []

    def __enter__(self):
        if self.n:
            print(f"== {self.n} spinning process(es) keep other CPUs busy", flush=True)
        self.procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
                      for _ in range(self.n)]
        return self

    def __exit__(self, *exc):
        for p in self.procs:
            p.kill()
            p.wait()
        return False


def interleaved(runs, n_rounds, *args):
    """Each of ``runs`` (name -> function of ``args``) once per round, round-robin,
    so that the machine's noise hits all alike: ``(wall, cpu, results)``, the
    seconds of every round per name and each function's last result."""
    wall = {name: [] for name in runs}
    cpu = {name: [] for name in runs}
    results = {}
    for _ in range(n_rounds):
        for name, fn in runs.items():
            t0, c0 = time.perf_counter(), time.process_time()
            results[name] = fn(*args)
            wall[name].append(time.perf_counter() - t0)
            cpu[name].append(time.process_time() - c0)
    return wall, cpu, results
