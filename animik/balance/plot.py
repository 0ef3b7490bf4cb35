"""Plots of the experiments (matplotlib, off-screen Agg backend)."""

from __future__ import annotations

import io
import os

import numpy as np

from ..io._atomic import atomic_write


def plot_runs(runs, path: str | os.PathLike, title: str) -> None:
    """Write a PNG: paths (reference, base, body, CoP) and CoP-to-base distance and ζ over time.

    Args:
        runs: :class:`animik.balance.experiments.RunResult` list (one or two runs overlaid).
        path: output .png, written atomically.
        title: figure title.
    """
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    fig = plt.figure(figsize=(12, 8), dpi=100)
    ax_xy = fig.add_subplot(2, 2, 1)
    ax_zoom = fig.add_subplot(2, 2, 3)
    ax_d = fig.add_subplot(2, 2, 2)
    ax_z = fig.add_subplot(2, 2, 4, sharex=ax_d)
    styles = ["-", "--"]
    for i, r in enumerate(runs):
        s, m = r.series, r.metrics
        ls = styles[i % 2]
        tag = f"{m['model']}, {m['loop']} loop"
        for ax in (ax_xy, ax_zoom):
            if i == 0:
                ax.plot(s["ref"][:, 0], s["ref"][:, 1], color="0.55", lw=1.2, ls=":",
                        label="reference")
            ax.plot(s["cop"][:, 0], s["cop"][:, 1], color="tab:red", lw=0.8, ls=ls, alpha=0.7,
                    label=f"CoP ({tag})")
            ax.plot(s["base"][:, 0], s["base"][:, 1], color="tab:blue", lw=1.6, ls=ls,
                    label=f"base b ({tag})")
            ax.plot(s["body"][:, 0], s["body"][:, 1], color="tab:green", lw=1.2, ls=ls,
                    label=f"body c ({tag})")
        d = np.linalg.norm(s["cop"] - s["base"], axis=1)
        ax_d.plot(s["t"], d, color="tab:red" if i == 0 else "tab:purple", ls=ls, label=tag)
        ax_z.plot(s["t"], s["zeta"], color="tab:orange" if i == 0 else "tab:brown", ls=ls, label=tag)
        outside = s["margin"] < 0
        if outside.any():
            ax_zoom.plot(s["cop"][outside, 0], s["cop"][outside, 1], "x", color="k", ms=4,
                         label=f"CoP outside the wheels ({tag})")
    r0 = runs[0]
    corner = r0.series["ref"][np.searchsorted(r0.series["t"], r0.experiment.turn_time)]
    half = 0.25 + 0.25 * r0.experiment.speed
    ax_zoom.set_xlim(corner[0] - 1.6 * half, corner[0] + 0.4 * half)
    ax_zoom.set_ylim(corner[1] - 0.6 * half, corner[1] + 1.4 * half)
    ax_zoom.set_aspect("equal", adjustable="box")
    ax_zoom.set_title("the corner", fontsize=9)
    ax_zoom.set_xlabel("x (m)")
    ax_zoom.set_ylabel("y (m)")
    ax_zoom.grid(alpha=0.3)
    radius = r0.metrics["support_radius_m"]
    ax_d.axhline(radius, color="k", lw=0.8, ls=":", label=f"support radius r = {radius:.3f} m")
    ax_d.axvline(r0.experiment.turn_time, color="0.6", lw=0.8)
    ax_z.axhline(1.0, color="k", lw=0.8, ls=":", label="ζ = 1")
    ax_z.axvline(r0.experiment.turn_time, color="0.6", lw=0.8)
    ax_xy.set_aspect("equal", adjustable="datalim")
    ax_xy.set_title("paths", fontsize=9)
    ax_xy.set_xlabel("x (m)")
    ax_xy.set_ylabel("y (m)")
    ax_xy.legend(fontsize=7, loc="upper left")
    ax_xy.grid(alpha=0.3)
    ax_d.set_ylabel("‖CoP − b‖ (m)")
    ax_d.legend(fontsize=7)
    ax_d.grid(alpha=0.3)
    ax_z.set_ylabel("ζ")
    ax_z.set_xlabel("t (s)")
    ax_z.legend(fontsize=7)
    ax_z.grid(alpha=0.3)
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    atomic_write(path, buf.getvalue())
