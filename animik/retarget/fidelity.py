"""Fidelity of a retargeted clip measured against the SOURCE motion itself.

The retarget report (:mod:`animik.retarget.report`) measures how well the IK met its own
effector targets; those targets are already a reinterpretation of the source. This module
compares the result with the source directly:

* **Points**: hands, feet and head. On each skeleton the point of a role is the joint with that
  role (wrist, ankle, head joint), or, where the skeleton has no such joint (a robot's hand or
  head), its effector site with that role (:mod:`animik.semantics.robot_sites`).
* **Scale**: the source's positions are scaled by ``s`` = the retarget's leg-length ratio
  (:attr:`animik.retarget.align.Alignment.scale`).
* **Relative to the pelvis**: ``|(p_t - hips_t) - s (p_s - hips_s)|`` per frame and point, in
  world axes (the retarget keeps the source's world axes), ``hips`` being the hips role joint
  (a robot's pelvis link origin is 10-20 cm above its hip joints, a mocap Hips joint is not:
  part of the error below).
* **In the world**: ``|p_t - (s p_s + d)|`` with one constant offset ``d`` per clip (the median
  of ``hips_t - s hips_s``: the retarget lifts the root so the feet stand on the floor).
* ``origin="hip_centre"`` measures both from the hip centre instead of the hips joint (the
  midpoint of the legs' tops, where the retarget places the hips): the same anatomical point
  on every humanoid, so the pelvis-origin offset drops out of the error.
* A skeleton's point for a role and the other's are not the same anatomical point (a robot's
  wrist link origin vs a mocap wrist joint, its pelvis vs the mocap Hips), and proportions
  differ beyond the leg-length scale (arm / leg and torso / leg ratios): position errors have a
  floor of several cm that no retarget removes; the flexion errors do not.
* **Joint angles where joints correspond**: the flexion of elbows and knees (the angle between
  upper-arm / forearm, thigh / shin, from the role points), in degrees — the joints every
  humanoid has whatever its DoFs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ..errors import OptionError
from ..kinematics import forward_kinematics
from ..motion import Motion
from ..semantics.roles import classify_joints
from ..skeleton import Skeleton
from .align import hip_centre

POINTS = ("l_hand", "r_hand", "l_foot", "r_foot", "head")
FLEXIONS = {"l_elbow": ("l_upper_arm", "l_forearm", "l_hand"),
            "r_elbow": ("r_upper_arm", "r_forearm", "r_hand"),
            "l_knee": ("l_thigh", "l_shin", "l_foot"), "r_knee": ("r_thigh", "r_shin", "r_foot")}
_SITE_NAMES = {"l_hand": ("l_hand",), "r_hand": ("r_hand",), "head": ("head",),
               "l_foot": ("l_foot", "left_foot"), "r_foot": ("r_foot", "right_foot")}


@dataclass(frozen=True)
class Fidelity:
    """Per-frame errors of a retargeted clip against its source.

    Attributes:
        points: the point roles measured (subset of :data:`POINTS`).
        relative: ``(T, P)`` m, error relative to the pelvis.
        world: ``(T, P)`` m, error in the world (one constant offset removed).
        flexions: the flexion joints measured; ``angle``: ``(T, F)`` rad, absolute error.
        scale: the source-to-target scale used.
    """

    points: tuple[str, ...]
    relative: np.ndarray
    world: np.ndarray
    flexions: tuple[str, ...]
    angle: np.ndarray
    scale: float

    def summary(self) -> dict[str, float]:
        """Means and maxima in cm / degrees, by group (hand, foot, head)."""
        out: dict[str, float] = {}
        for group in ("hand", "foot", "head"):
            cols = [i for i, p in enumerate(self.points) if p.endswith(group)]
            if cols:
                out[f"{group}_rel_cm"] = 100 * float(self.relative[:, cols].mean())
                out[f"{group}_world_cm"] = 100 * float(self.world[:, cols].mean())
        out["max_rel_cm"] = 100 * float(self.relative.max()) if self.relative.size else 0.0
        out["max_world_cm"] = 100 * float(self.world.max()) if self.world.size else 0.0
        for kind in ("elbow", "knee"):
            cols = [i for i, f in enumerate(self.flexions) if f.endswith(kind)]
            if cols:
                out[f"{kind}_deg"] = float(np.degrees(self.angle[:, cols].mean()))
        return out


def role_points(skel: Skeleton, q: np.ndarray, roles: Mapping[str, str],
                wanted: tuple[str, ...]) -> dict[str, np.ndarray]:
    """World positions ``(T, 3)`` of the role points available on ``skel`` at poses ``q``."""
    fk = forward_kinematics(skel, q)
    out: dict[str, np.ndarray] = {}
    for role in wanted:
        j = roles.get(role)
        if j is not None:
            out[role] = np.asarray(fk.joint_positions[:, skel.joint_index(j)])
            continue
        for sn in _SITE_NAMES.get(role, ()):
            if sn in skel.site_names:
                out[role] = np.asarray(fk.site_positions[:, skel.site_index(sn)])
                break
    return out


def _flexion(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    u, v = b - a, c - b
    cos = np.sum(u * v, axis=-1) / np.maximum(
        np.linalg.norm(u, axis=-1) * np.linalg.norm(v, axis=-1), 1e-12)
    return np.arccos(np.clip(cos, -1.0, 1.0))


def clip_fidelity(source: Motion, result: Motion, scale: float,
                  source_roles: Mapping[str, str] | None = None,
                  target_roles: Mapping[str, str] | None = None,
                  origin: str = "hips") -> Fidelity:
    """Errors of ``result`` (on the target) against ``source`` (see the module docstring).

    Args:
        source: the source clip; result: its retarget, same number of frames.
        scale: target / source length ratio (the retarget's ``alignment.scale``).
        source_roles, target_roles: ``{role: joint}``; default :func:`classify_joints`.
        origin: the point the relative errors are measured from, and whose offset is removed
            from the world errors: ``"hips"`` (the hips role joint: a robot's pelvis link
            origin) or ``"hip_centre"`` (the midpoint of the legs' tops,
            :func:`animik.retarget.align.hip_centre`: the same anatomical point on a mocap
            skeleton and a robot, whose pelvis origin is 10-20 cm above it).
    """
    if origin not in ("hips", "hip_centre"):
        raise OptionError(f"origin must be 'hips' or 'hip_centre', got {origin!r}")
    sr = dict(source_roles or classify_joints(source.skeleton).roles)
    tr = dict(target_roles or classify_joints(result.skeleton).roles)
    want = POINTS + tuple({r for trip in FLEXIONS.values() for r in trip} - set(POINTS)) + ("hips",)
    ps = role_points(source.skeleton, np.asarray(source.q), sr, want)
    pt = role_points(result.skeleton, np.asarray(result.q), tr, want)
    if "hips" not in ps or "hips" not in pt:
        raise ValueError("both skeletons need a hips role for fidelity")
    points = tuple(p for p in POINTS if p in ps and p in pt)
    hs, ht = ps["hips"], pt["hips"]
    if origin == "hip_centre":
        hs = hip_centre(source.skeleton, sr,  # type: ignore[arg-type]
                        np.asarray(forward_kinematics(source.skeleton, source.q).joint_positions))
        ht = hip_centre(result.skeleton, tr,  # type: ignore[arg-type]
                        np.asarray(forward_kinematics(result.skeleton, result.q).joint_positions))
    d = np.median(ht - scale * hs, axis=0)
    rel = np.stack([np.linalg.norm((pt[p] - ht) - scale * (ps[p] - hs), axis=-1)
                    for p in points], axis=1) if points else np.zeros((len(hs), 0))
    world = np.stack([np.linalg.norm(pt[p] - (scale * ps[p] + d), axis=-1)
                      for p in points], axis=1) if points else np.zeros((len(hs), 0))
    flex = tuple(f for f, trip in FLEXIONS.items() if all(r in ps and r in pt for r in trip))
    ang = np.stack([np.abs(_flexion(*(pt[r] for r in FLEXIONS[f]))
                           - _flexion(*(ps[r] for r in FLEXIONS[f]))) for f in flex],
                   axis=1) if flex else np.zeros((len(hs), 0))
    return Fidelity(points, rel, world, flex, ang, float(scale))
