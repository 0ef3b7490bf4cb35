"""Issue 15 item 13: `animik warmup` (run by scripts/setup.sh, and by the app before its window
opens, with progress) compiles every kernel the first IK solve needs: after it, a new process
solving on body95 (position and orientation targets, several solvers) loads every kernel from
numba's cache and compiles none."""

from __future__ import annotations

import json
import subprocess
import sys

from animik.commands.warmup import warm_up

PROBE = r"""
import json, numpy as np, animik
from numba.core.registry import CPUDispatcher
import animik._kernels, animik.ik._kernels, animik.ik._fik_kernels
s = animik.load_rig("body95")
p = animik.site_positions(s, s.rest_q)[s.site_names.index("l_hand")] + [0.05, 0, 0]
for solver in ("fik", "fik_fixed", "dls"):
    animik.solve_ik(s, s.rest_q, {"l_hand": p}, solver=solver, pinned=["l_foot", "r_foot"])
animik.solve_ik(s, s.rest_q, {"l_hand": (p, np.eye(3))}, pinned=["l_foot", "r_foot"])
out = {}
for mod in (animik._kernels, animik.ik._kernels, animik.ik._fik_kernels):
    for name, f in vars(mod).items():
        if isinstance(f, CPUDispatcher) and f.signatures:
            st = f.stats
            out[f"{mod.__name__}.{name}"] = [sum(st.cache_hits.values()), sum(st.cache_misses.values())]
print(json.dumps(out))
"""


def test_after_warmup_the_first_solve_compiles_nothing():
    subprocess.run([sys.executable, "-m", "animik.cli", "warmup", "-q"], check=True)
    res = subprocess.run([sys.executable, "-c", PROBE], check=True, capture_output=True, text=True)
    stats = json.loads(res.stdout.strip().splitlines()[-1])
    assert stats, "no kernel was used"
    compiled = {k: v for k, v in stats.items() if v[1]}
    assert not compiled, f"compiled at the first solve (not by warmup): {compiled}"


def test_warm_up_reports_every_step():
    calls = []
    warm_up(lambda i, n, label: calls.append((i, n, label)))
    n = calls[0][1]
    assert [c[0] for c in calls] == list(range(n + 1)) and calls[-1][2] == "done"
