"""The hostile runs of scripts/hostile.py, one case per class, each a process
under a 4 GiB address-space limit (docs/reliability.md, section 9)."""
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_hostile_runs_find_no_silent_acceptance_crash_or_loss():
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    out = subprocess.run([sys.executable, str(ROOT / "scripts" / "hostile.py"), "--quick"],
                         capture_output=True, text=True, timeout=300, env=env)
    assert out.returncode == 0, out.stdout + out.stderr
    assert '"failures": 0' in out.stdout
