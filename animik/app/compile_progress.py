"""Kernel compilation before the window opens, with progress (issue 15 item 13).

The first IK solve after installing waits for numba (~20 s to a minute): in the app that was
a frozen window on the first drag. :func:`warm_kernels` runs
:func:`animik.commands.warmup.warm_up` before the window opens; when the kernels come from
numba's on-disk cache it takes about a second and shows nothing, when they must be compiled a
progress bar says so.
"""

from __future__ import annotations

import sys

from tqdm import tqdm

from ..commands.warmup import warm_up

#: Seconds before the progress bar appears (loading cached kernels stays silent).
SHOW_AFTER_S = 0.5


def warm_kernels(file=None) -> float:
    """Compile or load the kernels, showing progress on ``file`` (stderr) if it takes long.

    Returns:
        The seconds taken.
    """
    bar = tqdm(total=1, desc="animik: compiling kernels (first run only)", unit="step",
               delay=SHOW_AFTER_S, file=file or sys.stderr, leave=False)

    def progress(i: int, n: int, label: str) -> None:
        bar.total = n
        bar.n = i
        bar.set_postfix_str(label, refresh=False)
        bar.refresh()

    try:
        return warm_up(progress)
    finally:
        bar.close()
