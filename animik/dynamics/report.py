"""Feasibility reports of whole clips: JSON-ready dictionaries, table rows and PNG plots."""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Any

import numpy as np

from ..io._atomic import atomic_write
from ..motion import Motion
from .clip import ClipFeasibility
from .zmp import REASONS, support_polygon


def _num(x: float, digits: int = 6) -> float | None:
    x = float(x)
    return round(x, digits) if np.isfinite(x) else None


def reasons_text(bits: int) -> str:
    return ", ".join(v for k, v in REASONS.items() if bits & k) or "ok"


def summary(res: ClipFeasibility, motion: Motion) -> dict[str, Any]:
    """Clip-level numbers: infeasible frame count and ranges, worst margin, peak torque."""
    chk = res.check
    bad = ~chk.feasible
    T = len(bad)
    d = np.diff(np.concatenate([[0], bad.astype(np.int8), [0]]))
    runs = list(zip(np.flatnonzero(d == 1).tolist(), (np.flatnonzero(d == -1) - 1).tolist(),
                    strict=True))
    counts = {v: int(np.count_nonzero(chk.reasons & k)) for k, v in REASONS.items()}
    contact = chk.in_contact.any(axis=1)
    pk = int(np.argmax(res.peak_torque)) if T else 0
    return {
        "frames": T, "fps": res.fps, "mu": res.mu, "floor": _num(res.floor),
        "feasible": bool(not bad.any()), "infeasible_frames": int(bad.sum()),
        "infeasible_ranges": runs, "reasons": counts,
        "flight_frames": int(np.count_nonzero(~contact & ~chk.support_active.any(axis=1))),
        "min_margin_m": _num(np.nanmin(chk.margin)) if np.isfinite(chk.margin).any() else None,
        "max_friction_ratio": _num(np.nanmax(np.where(np.isfinite(chk.friction_ratio),
                                                      chk.friction_ratio, np.nan)))
        if np.isfinite(chk.friction_ratio).any() else None,
        "min_normal_force_n": _num(chk.normal_force[contact].min()) if contact.any() else None,
        "peak_torque_nm": _num(res.peak_torque[pk]) if T else None,
        "peak_torque_dof": motion.skeleton.dof_names[int(res.peak_dof[pk])] if T else None,
        "peak_torque_frame": pk,
        "contact_areas": list(res.contacts.names), "contact_source": res.contacts.source,
        **_support_summary(res, motion),
    }


#: cm, a seat or foot rest fixed to a body part that travels more than this in the world over
#: its frames is flagged (``support_warnings``): the check lets it move with the body
SEAT_TRAVEL_CM = 5.0


def _support_summary(res: ClipFeasibility, motion: Motion,
                     seat_travel_cm: float = SEAT_TRAVEL_CM) -> dict[str, Any]:
    """The supports off the floor and their frames (nothing when the check had none).

    ``support_travel_cm``: how far each support moves **in the world** over its active frames
    (the range of its centre): 0 for a support fixed in the world. A support fixed to a body
    part moves with it, and the check cannot see whether a seat stays put: a seat or foot rest
    on a body part travelling more than ``seat_travel_cm`` is named in ``support_warnings``
    (pedals move by design, holds are hands). ``support_contact``: for a world support the body
    rests on, the share of its active frames the body touches it, and the deepest the body
    goes through it (cm, > tolerance: infeasible) / the farthest it is from it.
    """
    if res.supports is None:
        return {}
    chk = res.check
    on = chk.support_active.any(axis=1)
    sf = res.supports.at(motion.skeleton, res.states.q)
    travel, contact, warn = {}, {}, []
    for i, s in enumerate(res.supports.supports):
        act = chk.support_active[:, i]
        pmask, gmask = sf.push_support == i, sf.grip_support == i
        if s.touches or s.joint < 0:  # fixed in the world: it does not travel
            travel[s.name] = 0.0 if act.any() else None
        else:
            pts = np.concatenate([sf.push_points[:, pmask], sf.grip_points[:, gmask]],
                                 axis=1)[act]
            c = pts.mean(axis=1) if len(pts) else np.zeros((0, 3))
            travel[s.name] = _num(float(np.linalg.norm(c.max(0) - c.min(0))) * 100, 2) \
                if len(c) else None
            if s.kind in ("seat", "foot_rest") and travel[s.name] is not None \
                    and travel[s.name] > seat_travel_cm:
                warn.append(f"{s.name}: a {s.kind} fixed to "
                            f"{motion.skeleton.joint_names[s.joint]} travels "
                            f"{travel[s.name]:g} cm in the world over its frames (more than "
                            f"{seat_travel_cm:g} cm): the body may be sinking or drifting with "
                            f"it; fix it in the world (\"joint\": \"world\" with \"on\")")
        if s.touches and act.any():
            touch = (sf.push_touch[:, pmask] if pmask.any() else sf.grip_touch[:, gmask])[act]
            d = {"touch_share": _num(float(touch.any(axis=1).mean()), 4)}
            if pmask.any():
                g = sf.gap[act][:, pmask]
                d["max_through_cm"] = _num(max(0.0, -float(g.min())) * 100, 2)
                d["max_above_cm"] = _num(max(0.0, float(g.max())) * 100, 2)
                d["frames_through"] = int(sf.sunk[act, i].sum())
            contact[s.name] = d
    return {"supports": res.supports.to_dict(motion.skeleton),
            "support_frames": int(on.sum()),
            "max_cone_residual": _num(np.nanmax(chk.cone_residual)) if on.any() else None,
            "support_travel_cm": travel, "support_contact": contact,
            "support_warnings": warn}


def to_dict(res: ClipFeasibility, motion: Motion, source: str = "") -> dict[str, Any]:
    """Everything per frame, JSON-ready (NaN/inf -> null)."""
    chk = res.check
    names = motion.skeleton.dof_names
    frames = []
    for t in range(len(chk.feasible)):
        frames.append({
            "frame": t, "feasible": bool(chk.feasible[t]), "reasons": reasons_text(int(chk.reasons[t])),
            "in_contact": [bool(x) for x in chk.in_contact[t]],
            "zmp": [_num(v) for v in chk.zmp[t, :2]], "com": [_num(v) for v in chk.com[t]],
            "margin_m": _num(chk.margin[t]), "normal_force_n": _num(chk.normal_force[t], 3),
            "friction_ratio": _num(chk.friction_ratio[t]),
            "flight_residual": _num(chk.flight_residual[t]),
            **({"supports": [n for n, on in zip(res.supports.names, chk.support_active[t],
                                                strict=True) if on],
                "cone_residual": _num(chk.cone_residual[t])} if res.supports is not None else {}),
            "peak_torque_nm": _num(res.peak_torque[t], 3), "peak_torque_dof": names[int(res.peak_dof[t])],
        })
    return {"source": source, "skeleton": motion.skeleton.name, "summary": summary(res, motion),
            "frames": frames}


def table_rows(res: ClipFeasibility, motion: Motion, every: int = 1) -> tuple[list[str], list[list]]:
    chk = res.check
    names = motion.skeleton.dof_names
    headers = ["frame", "contact", "margin cm", "F_z N", "|F_t|/F_z", "peak tau N m", "at DoF",
               "verdict"]
    rows = []
    areas = res.contacts.names
    for t in range(0, len(chk.feasible), max(1, every)):
        c = "+".join([a for a, on in zip(areas, chk.in_contact[t], strict=True) if on]
                     + [a for a, on in zip(res.supports.names if res.supports else (),
                                           chk.support_active[t], strict=True) if on]) or "flight"
        rows.append([t, c, round(float(chk.margin[t]) * 100, 2) if np.isfinite(chk.margin[t]) else "-",
                     round(float(chk.normal_force[t]), 1),
                     round(float(chk.friction_ratio[t]), 3) if np.isfinite(chk.friction_ratio[t]) else "-",
                     round(float(res.peak_torque[t]), 1), names[int(res.peak_dof[t])],
                     reasons_text(int(chk.reasons[t]))])
    return headers, rows


def plot_png(res: ClipFeasibility, motion: Motion, path: str | os.PathLike,
             title: str = "") -> Path:
    """Write the plots as one PNG (atomically): ZMP path over the support polygons (top view,
    with the points of supports off the floor), ZMP margin and normal force over time (the
    frames on supports shaded), peak joint torque over time."""
    # matplotlib stays a function-level import: it costs ~0.55 s (measured: import of
    # matplotlib + matplotlib.figure after animik.dynamics), paid only when a plot is asked for.
    import matplotlib

    matplotlib.use("Agg", force=False)
    from matplotlib.figure import Figure

    chk = res.check
    skel = motion.skeleton
    T = len(chk.feasible)
    t = np.arange(T) / res.fps
    fig = Figure(figsize=(12, 8), dpi=100)
    gs = fig.add_gridspec(2, 2)
    ax = fig.add_subplot(gs[:, 0])
    step = max(1, T // 60)
    q = res.states.q
    for i in range(0, T, step):
        poly = support_polygon(skel, q[i], chk.in_contact[i], res.contacts)
        if len(poly) >= 2:
            closed = np.vstack([poly, poly[:1]])
            ax.plot(closed[:, 0], closed[:, 1], color="0.75", lw=0.7)
    sup_on = chk.support_active.any(axis=1)
    if res.supports is not None and sup_on.any():  # supports off the floor: their points
        idx = np.flatnonzero(sup_on)[::step]
        sf = res.supports.at(skel, q[idx], frames=idx)
        pts = np.concatenate([sf.push_points[sf.active[:, sf.push_support]],
                              sf.grip_points[sf.active[:, sf.grip_support]]])
        ax.scatter(pts[:, 0], pts[:, 1], s=3, color="tab:cyan",
                   label="supports (seat, holds, pedals)")
    ax.plot(chk.com[:, 0], chk.com[:, 1], color="tab:blue", lw=1, label="COM projection")
    ok = chk.feasible
    zf = ~sup_on  # on supports the ZMP is not a centre of pressure of the floor: not drawn
    ax.scatter(chk.zmp[ok & zf, 0], chk.zmp[ok & zf, 1], s=4, color="tab:green",
               label="ZMP (feasible)")
    ax.scatter(chk.zmp[~ok & zf, 0], chk.zmp[~ok & zf, 1], s=4, color="tab:red",
               label="ZMP (infeasible)")
    ax.set_aspect("equal", adjustable="datalim")
    ax.set_xlabel("x (m)")
    ax.set_ylabel("y (m)")
    ax.set_title("ZMP over support polygons (grey)")
    ax.legend(loc="best", fontsize=8)
    ax2 = fig.add_subplot(gs[0, 1])
    ax2.plot(t, chk.margin * 100, color="tab:purple", lw=1)
    ax2.axhline(0, color="k", lw=0.6)
    bad = ~ok
    if bad.any():
        ax2.fill_between(t, 0, 1, where=bad, transform=ax2.get_xaxis_transform(),
                         color="tab:red", alpha=0.15, lw=0, label="infeasible")
        ax2.legend(loc="lower right", fontsize=8)
    if sup_on.any():  # frames checked by the contact wrench cone (no ZMP margin there)
        ax2.fill_between(t, 0, 1, where=sup_on, transform=ax2.get_xaxis_transform(),
                         color="tab:cyan", alpha=0.15, lw=0, label="on supports (cone check)")
        ax2.legend(loc="lower right", fontsize=8)
    ax2.set_ylabel("ZMP margin (cm)")
    ax2.set_title("margin (positive inside) and normal force")
    ax2b = ax2.twinx()
    ax2b.plot(t, chk.normal_force, color="tab:orange", lw=0.8, alpha=0.7)
    ax2b.set_ylabel("F_z (N)", color="tab:orange")
    ax3 = fig.add_subplot(gs[1, 1])
    ax3.plot(t, res.peak_torque, color="tab:brown", lw=1)
    ax3.set_xlabel("time (s)")
    ax3.set_ylabel("peak |tau| (N m)")
    ax3.set_title("peak joint torque (non-root DoFs)")
    fig.suptitle(title or f"{skel.name}: feasibility (mu = {res.mu:g})")
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return atomic_write(path, buf.getvalue())
