"""Stretches of a clip where the body is held up by something that is not the floor.

A body whose centre of mass stays still needs a support under it; with no contact area near
the floor for a second or more, that support is not the floor (a seat, a bike's saddle and
pedals, a rail): no floor contact, no correction of the motion and no flight phase can make
those frames feasible, since the check (seed D) knows only the floor. ``animik filter`` refuses
such a clip up front with the frames named instead of inventing a support (optitrack
louise.bvh pedals a stationary bike for 20 s: the centre of mass still within 1-2 cm, both
feet 0.2-0.5 m up); ``animik feasibility`` names them in its summary.

:func:`infer_supports` turns those stretches into supports (:mod:`animik.dynamics.supports`):
the still pelvis gets a seat, still hands get holds, the feet foot rests (pedals when they
move); :func:`resolve_supports` reads ``--supports auto|floor|FILE.json``.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from ..kinematics import forward_kinematics
from ..motion import Motion
from ..semantics.roles import classify_joints
from ._runs import true_runs
from .clip import detect_clip_contacts
from .contacts import ContactModel, contact_model_for_clip
from .inverse import GRAVITY, com
from .supports import Support, SupportError, SupportSet, load_supports


def held_off_floor(motion: Motion, contacts: ContactModel | None = None,
                   floor: float | None = None, height: float = 0.10, still: float = 0.03,
                   window: float = 1.0, min_time: float = 1.0) -> list[tuple[int, int]]:
    """Frame ranges where the body is held still with no contact area near the floor.

    Args:
        motion: the clip.
        contacts: contact areas (default: :func:`contact_model_for_clip`, as the check).
        floor: m, the floor height (default: estimated as the check estimates it).
        height: m, every area's lowest point is at least this far above the floor.
        still: m, the centre of mass's standard deviation over ``window`` s (each axis) stays
            below this: the body is held, not jumping or falling.
        window: s, the window of that standard deviation (centred).
        min_time: s, the shortest stretch reported.

    Returns:
        ``[(start, end)]`` frame ranges (end exclusive), empty when the floor carries the body.
    """
    skel, q, fps = motion.skeleton, motion.q, float(motion.fps)
    T = len(q)
    n = max(2, int(round(window * fps)))
    if T < max(n, int(np.ceil(min_time * fps))):
        return []
    cm = contacts or contact_model_for_clip(skel, q)
    if floor is None:
        floor = detect_clip_contacts(skel, q, fps, contacts=cm)[1]
    pts = cm.points(skel, q)
    low = np.min(np.stack([pts[:, cm.point_area == a, 2].min(axis=1)
                           for a in range(cm.n_areas)], axis=1), axis=1) - floor
    c = com(skel, q)
    # centred running standard deviation of the COM, per axis, by cumulative sums
    k0 = np.clip(np.arange(T) - n // 2, 0, T - n)
    s1 = np.concatenate([np.zeros((1, 3)), np.cumsum(c, axis=0)])
    s2 = np.concatenate([np.zeros((1, 3)), np.cumsum(c * c, axis=0)])
    mean = (s1[k0 + n] - s1[k0]) / n
    var = np.maximum((s2[k0 + n] - s2[k0]) / n - mean * mean, 0.0)
    held = (low >= height) & (np.sqrt(var).max(axis=1) < still)
    return [(a, b) for a, b in true_runs(held) if b - a >= min_time * fps]


def _subtree(skel, j: int) -> np.ndarray:
    """Bool ``(J,)``: ``j`` and its descendants."""
    return skel.joint_ancestor_mask[:, j]


def infer_supports(motion: Motion, contacts: ContactModel | None = None,
                   floor: float | None = None, mu: float = 0.7, still: float = 0.03,
                   seat_drop: float = 0.10, seat_depth: float = 0.05, grip_force: float = 0.5,
                   held: list[tuple[int, int]] | None = None) -> SupportSet:
    """Supports over the stretches :func:`held_off_floor` finds (none elsewhere).

    Per stretch, on the body parts the retargeter's roles name (``hips``, ``l_hand``, ...):

    - a **seat** under the pelvis when the pelvis is still (position s.d. < ``still`` on every
      axis): four points ``seat_drop`` below the two hip joints, ``seat_depth`` in front and
      behind (the ischial tuberosities sit ~10 cm below the hip joint centres), normal up,
      fixed to the pelvis;
    - a **hold** on each still hand (at the wrist joint), up to ``grip_force`` body weights
      per world axis;
    - a **foot rest** under each foot (the foot's sole points, normal along the sole, fixed to
      the foot), named a **pedal** when the foot moves.

    Returns:
        :class:`SupportSet` (empty when nothing is held off the floor).
    """
    skel, q = motion.skeleton, np.asarray(motion.q)
    cm = contacts or contact_model_for_clip(skel, q)
    held = held_off_floor(motion, cm, floor) if held is None else held
    if not held:
        return SupportSet((), "auto")
    roles = classify_joints(skel).roles
    root = int(np.flatnonzero(skel.parents < 0)[0])
    jidx = {r: skel.joint_names.index(roles[r]) for r in roles if roles[r] in skel.joint_names}
    weight = skel.total_mass * float(np.linalg.norm(GRAVITY))
    fk = forward_kinematics(skel, q)
    up = np.array([0.0, 0.0, 1.0])
    out: list[Support] = []
    for k, (a, b) in enumerate(held):
        sfx = f"_{k + 1}" if len(held) > 1 else ""
        fr = ((int(a), int(b - 1)),)
        mid = (a + b) // 2
        P, R = fk.joint_positions[mid], fk.joint_rotations[mid]
        sd = fk.joint_positions[a:b].std(axis=0).max(axis=1)  # (J,) worst axis

        def local(j: int, pts: np.ndarray, P=P, R=R) -> np.ndarray:
            return (pts - P[j]) @ R[j]  # world -> the joint's frame at the middle frame

        hips = jidx.get("hips", root)
        if sd[hips] < still:
            if "l_thigh" in jidx and "r_thigh" in jidx:
                lh, rh = P[jidx["l_thigh"]], P[jidx["r_thigh"]]
                side = rh - lh
                fwd = np.cross(up, side)
                fwd /= max(np.linalg.norm(fwd), 1e-9)
                base = [lh, rh]
            else:
                fwd, base = np.array([1.0, 0.0, 0.0]), [P[hips]]
            pts = np.array([c + s * seat_depth * fwd - seat_drop * up for c in base
                            for s in (1.0, -1.0)])
            out.append(Support("seat" + sfx, "seat", hips, local(hips, pts), R[hips].T @ up,
                               float(mu), float("inf"), fr))
        for s in ("l", "r"):
            h = jidx.get(f"{s}_hand")
            if h is not None and sd[h] < still:
                out.append(Support(f"{s}_hand_hold{sfx}", "hold", h, np.zeros((1, 3)), up,
                                   float(mu), grip_force * weight, fr))
        for s in ("l", "r"):
            f = jidx.get(f"{s}_foot")
            if f is None:
                continue
            on = _subtree(skel, f)[cm.point_joint]
            if not on.any():
                continue
            w = cm.points(skel, q[mid])[on]  # the sole's points, world, at the middle frame
            ctr = w.mean(axis=0)
            n = R[f] @ up
            if len(w) >= 3:
                _, sv, vt = np.linalg.svd(w - ctr)
                if sv[1] > 1e-6:
                    n = vt[2]
            if np.dot(n, P[f] - ctr) < 0:  # the normal points from the sole to the ankle
                n = -n
            moving = cm.points(skel, q[a:b])[:, on].std(axis=0).max() >= still
            out.append(Support(f"{s}_{'pedal' if moving else 'foot_rest'}{sfx}",
                               "pedal" if moving else "foot_rest", f, local(f, w), R[f].T @ n,
                               float(mu), float("inf"), fr))
    return SupportSet(tuple(out), "auto")


def supports_sidecar(clip_path: str | os.PathLike) -> Path:
    """``CLIP.supports.json``: where ``animik filter`` records the supports a written clip was
    checked with (next to the clip)."""
    return Path(clip_path).with_suffix(".supports.json")


def resolve_supports(spec: str, motion: Motion, contacts: ContactModel | None = None,
                     floor: float | None = None, mu: float = 0.7,
                     clip_path: str | os.PathLike | None = None) -> SupportSet | None:
    """``--supports``: ``"auto"`` (the clip's :func:`supports_sidecar` file when ``clip_path``
    has one -- the supports ``animik filter`` checked the written clip with --, else
    :func:`infer_supports`; ``None`` when nothing is held off the floor), ``"floor"``
    (``None``: the floor only), or a JSON file (:func:`animik.dynamics.supports.load_supports`).

    Raises:
        SupportError: a malformed file; OSError: it cannot be read.
    """
    if spec == "floor":
        return None
    if spec == "auto" and clip_path is not None and supports_sidecar(clip_path).is_file():
        return load_supports(supports_sidecar(clip_path), motion.skeleton, mu,
                             n_frames=motion.n_frames)
    if spec == "auto":
        s = infer_supports(motion, contacts, floor, mu)
        return s if len(s) else None
    if not os.path.exists(spec) and not spec.lower().endswith(".json"):
        raise SupportError(f"--supports must be auto, floor or a .json file, got {spec!r}")
    return load_supports(spec, motion.skeleton, mu, n_frames=motion.n_frames)


__all__ = ["held_off_floor", "infer_supports", "resolve_supports"]
