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

import dataclasses
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
        window: s, the window of that standard deviation (centred); two stretches closer than
            this (each at least ``min_time``) with no area near the floor between them are one.
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
    off = low >= height
    held = off & (np.sqrt(var).max(axis=1) < still)
    # A gap shorter than ``window`` between two held stretches with every area still off the
    # floor is the same support: the body settling onto it (sitting down onto a saddle moves
    # the centre of mass 5 cm in 0.3 s, a 1 s s.d. of 2.8-3.1 cm: louise on body95) and
    # nothing else can carry it there; split, each part got its own seat at its own height
    # (only between stretches that are held long enough themselves: a body swaying on a deck
    # dips under the stillness bound for moments, which are not a seat)
    runs = [(a, b) for a, b in true_runs(held) if b - a >= min_time * fps]
    for (_, b0), (a1, _) in zip(runs[:-1], runs[1:], strict=True):
        if a1 - b0 < n and off[b0:a1].all():
            held[b0:a1] = True
    return [(a, b) for a, b in true_runs(held) if b - a >= min_time * fps]


def _subtree(skel, j: int) -> np.ndarray:
    """Bool ``(J,)``: ``j`` and its descendants."""
    return skel.joint_ancestor_mask[:, j]


def _world_surface(body_pts: np.ndarray, normal: np.ndarray, rest: float,
                   fps: float | None = None, settle: float = 0.1) -> np.ndarray:
    """World points of a fixed surface under body points ``(n, k, 3)`` over a contact stretch:
    each point's median position, the surface put where the body rests on it -- the ``rest``
    quantile of the points' centre along ``normal`` (the body sits on the seat, it does not
    go through it: the seat is at the lowest the body reaches, capture spikes left out); with
    ``fps``, over the frames where that centre moves slower than ``settle`` m/s along the
    normal only (a foot stepping up onto a box passes below its top on the way)."""
    med = np.median(body_pts, axis=0)  # (k, 3)
    h = body_pts.mean(axis=1) @ normal  # (n,)
    if fps is not None and len(h) > 2:
        slow = np.abs(np.gradient(h) * fps) < settle
        if slow.any():
            h = h[slow]
    return med + (np.quantile(h, rest) - float(med.mean(axis=0) @ normal)) * normal


def raised_stances(motion: Motion, contacts: ContactModel | None = None,
                   floor: float | None = None, band: float = 0.03,
                   share: float = 0.5) -> list[tuple[int, int, int]]:
    """The raised stances of :func:`animik.dynamics.treadmill.belt_and_surface` (standing still
    on something ``raise_min`` above the floor: a box, a pedal while mounting a bike) and the
    foot standing there.

    Returns:
        ``[(start, end, area)]`` (end exclusive): the contact area whose lowest point is within
        ``band`` m of the stance's surface on at least ``share`` of its frames.
    """
    from .treadmill import belt_and_surface

    skel, q = motion.skeleton, np.asarray(motion.q)
    cm = contacts or contact_model_for_clip(skel, q)
    _b, _s, _sec, raised, fl = belt_and_surface(motion, cm, floor)
    if not raised:
        return []
    pts = cm.points(skel, q)
    low = np.stack([pts[:, cm.point_area == a, 2].min(axis=1) for a in range(cm.n_areas)], 1) - fl
    out = []
    for a, b in raised:
        lw = low[a:b]
        surf = lw.min(axis=1, keepdims=True)
        on = (lw < surf + band).mean(axis=0)  # (A,) share of frames on the surface
        out += [(a, b, int(k)) for k in np.flatnonzero(on >= share)]
    return out


def infer_supports(motion: Motion, contacts: ContactModel | None = None,
                   floor: float | None = None, mu: float = 0.7, still: float = 0.03,
                   seat_drop: float = 0.10, seat_depth: float = 0.05, grip_force: float = 0.5,
                   held: list[tuple[int, int]] | None = None, rest: float = 0.02,
                   tolerance: float = 0.03, grip_reach: float = 0.08,
                   raised_alone: bool = False) -> SupportSet:
    """Supports over the stretches :func:`held_off_floor` finds and the raised stances
    (:func:`raised_stances`); none elsewhere.

    Per held stretch, on the body parts the retargeter's roles name (``hips``, ``l_hand``, ...):

    - a **seat** under the pelvis when the pelvis is still (position s.d. < ``still`` on every
      axis): four points ``seat_drop`` below the two hip joints, ``seat_depth`` in front and
      behind (the ischial tuberosities sit ~10 cm below the hip joint centres), normal up;
      **fixed in the world** where the body rests on it (each point's median over the stretch,
      at the ``rest`` quantile of their height), the pelvis on it (``tolerance`` m contact
      distance: the seat carries only while the pelvis touches it, a pelvis through it is
      infeasible);
    - a **hold** on each still hand: a grip fixed in the world at the wrist's median position,
      holding while the wrist is within ``grip_reach`` m of it, up to ``grip_force`` body
      weights per world axis;
    - a **foot rest** under each still foot (its sole points, normal along the sole, fixed in
      the world like the seat), a **pedal** on a moving foot (fixed to the foot: a crank moves).

    A raised stance that meets a held stretch (``raised_alone``: any raised stance) gets a
    **foot rest** fixed in the world under the standing foot (normal up, at the surface it
    stands on), so that the plant step does not lower the body off it.

    Returns:
        :class:`SupportSet` (empty when nothing is held off the floor and nothing is raised).
    """
    skel, q = motion.skeleton, np.asarray(motion.q)
    cm = contacts or contact_model_for_clip(skel, q)
    held = held_off_floor(motion, cm, floor) if held is None else held
    raised = raised_stances(motion, cm, floor)
    if not raised_alone:
        # only a raised stance that meets a held stretch (mounting a bike from its pedal): a
        # stance on a box or a treadmill's deck alone stays the floor path of section 5e
        # (lowered onto the floor), as the shared captures and the treadmill tests expect
        raised = [r_ for r_ in raised if any(r_[0] <= b and a <= r_[1] for a, b in held)]
    if not held and not raised:
        return SupportSet((), "auto")
    roles = classify_joints(skel).roles
    root = int(np.flatnonzero(skel.parents < 0)[0])
    jidx = {r: skel.joint_names.index(roles[r]) for r in roles if roles[r] in skel.joint_names}
    weight = skel.total_mass * float(np.linalg.norm(GRAVITY))
    fk = forward_kinematics(skel, q)
    up = np.array([0.0, 0.0, 1.0])
    out: list[Support] = []

    def body_world(j: int, local_pts: np.ndarray, a: int, b: int) -> np.ndarray:
        """``(b - a, k, 3)`` world positions of points fixed to joint ``j``."""
        return fk.joint_positions[a:b, j, None] + np.einsum(
            "tij,kj->tki", fk.joint_rotations[a:b, j], local_pts)

    def world_rest(name: str, kind: str, j: int, local_pts: np.ndarray, n: np.ndarray,
                   a: int, b: int, fr: tuple[tuple[int, int], ...] | None,
                   settled: bool = False) -> Support:
        w = _world_surface(body_world(j, local_pts, a, b), n, rest,
                           float(motion.fps) if settled else None)
        return Support(name, kind, -1, w, n, float(mu), float("inf"), fr, j, local_pts,
                       tolerance)

    # each raised stance's rest, fixed in the world, over the whole run of frames where the
    # foot touches it (the surface test of belt_and_surface starts late: louise's left foot
    # is on the pedal from 7.5 s, the 1 s windows see a raised surface from 8.1 s)
    rests = []

    def still_through(area: int, ra: int, rb: int) -> bool:
        """The foot rests still over a held stretch overlapping the stance: the held stretch's
        own foot rest covers it (a figure lifted onto a chair, feet on a bar)."""
        sel = cm.point_area == area
        return any(a < rb and ra < b and cm.points(skel, q[a:b])[:, sel].std(axis=0).max() < still
                   for a, b in held)

    raised = [r_ for r_ in raised if not still_through(r_[2], r_[0], r_[1])]
    kept: list[tuple[int, int, int]] = []
    for k, (a, b, area) in enumerate(raised):
        sel = cm.point_area == area
        # the sole's points in its first joint's frame at the middle frame (the ankle on
        # body95; a toe bending under the weight is not followed, as the held foot rests)
        j = int(cm.point_joint[np.flatnonzero(sel)[0]])
        mid = (a + b) // 2
        P, R = fk.joint_positions[mid, j], fk.joint_rotations[mid, j]
        loc = (cm.points(skel, q[mid])[sel] - P) @ R
        name = f"{cm.names[area]}_raised_rest" + (f"_{k + 1}" if len(raised) > 1 else "")
        # the stance's frames may include the step up onto it: where the foot has settled
        r = world_rest(name, "foot_rest", j, loc, up, a, b, None, settled=True)
        touch = SupportSet((r,)).at(skel, q).push_touch.any(axis=1)
        runs = [(s_, e_) for s_, e_ in true_runs(touch) if s_ < b and a < e_]
        if not runs:
            continue
        # not while stepping up through its level; and from the stance's start only: the
        # foot may touch earlier (louise from 7.46 s), but those frames the body is not yet
        # balanced on the rest and are left to the floor filter (method A corrects the floor
        # frames, not the supported ones)
        ta, tb = max(a, runs[0][0]), min(b, runs[-1][1])
        kept.append((ta, tb, area))
        rests.append(dataclasses.replace(r, frames=((int(ta), int(tb - 1)),)))
    raised = kept
    for k, (a, b) in enumerate(held):
        sfx = f"_{k + 1}" if len(held) > 1 else ""
        fr = ((int(a), int(b - 1)),)
        # the world's supports are there before and after the stretch: over a raised stance
        # next to it (mounting: standing on a pedal, the hands already on the handlebars)
        # they carry where the body touches them (contact decided by distance)
        wa = min([a] + [ra for ra, rb, _ in raised if ra <= a <= rb])
        wb = max([b] + [rb for ra, rb, _ in raised if ra <= b <= rb])
        wfr = ((int(wa), int(wb - 1)),)
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
            out.append(world_rest("seat" + sfx, "seat", hips, local(hips, pts), up, a, b, wfr))
        for s in ("l", "r"):
            h = jidx.get(f"{s}_hand")
            if h is None or sd[h] >= still:
                continue
            grip = np.median(fk.joint_positions[a:b, h], axis=0)
            out.append(Support(f"{s}_hand_hold{sfx}", "hold", -1, grip[None], up, float(mu),
                               grip_force * weight, wfr, h, np.zeros((1, 3)), grip_reach))
            # before the stretch (the mount) the hand may hold the bike elsewhere: each
            # still run of it there (s.d. < still over 0.5 s, >= 0.3 s) away from that grip
            # is a grip of its own (a contact stretch)
            hp = fk.joint_positions[wa:a, h]
            n5 = max(2, int(round(0.5 * motion.fps)))
            if len(hp) < n5:
                continue
            sdv = np.array([hp[max(0, t - n5 // 2):t + n5 // 2 + 1].std(axis=0).max()
                            for t in range(len(hp))])
            for m_, (ra, rb) in enumerate(r_ for r_ in true_runs(sdv < still)
                                          if r_[1] - r_[0] >= 0.3 * motion.fps):
                g2 = np.median(hp[ra:rb], axis=0)
                if np.linalg.norm(g2 - grip) > grip_reach:
                    out.append(Support(f"{s}_hand_hold{sfx}_before_{m_ + 1}", "hold", -1,
                                       g2[None], up, float(mu), grip_force * weight,
                                       ((int(wa + ra), int(wa + rb - 1)),), h,
                                       np.zeros((1, 3)), grip_reach))
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
            if moving:
                out.append(Support(f"{s}_pedal{sfx}", "pedal", f, local(f, w), R[f].T @ n,
                                   float(mu), float("inf"), fr))
            else:
                out.append(world_rest(f"{s}_foot_rest{sfx}", "foot_rest", f, local(f, w), n,
                                      a, b, wfr))
    out += rests
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


__all__ = ["held_off_floor", "infer_supports", "raised_stances", "resolve_supports"]
