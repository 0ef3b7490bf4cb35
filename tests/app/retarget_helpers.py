"""A small synthetic BVH for the retarget-mode tests: a CMU-named humanoid walking forward."""

from __future__ import annotations

from pathlib import Path

import numpy as np

# (name, parent, offset m in a Z-up T-pose facing +x, left = +y)
_JOINTS = [
    ("Hips", None, (0.0, 0.0, 0.0)),
    ("Spine", "Hips", (0.0, 0.0, 0.12)),
    ("Spine1", "Spine", (0.0, 0.0, 0.22)),
    ("Neck", "Spine1", (0.0, 0.0, 0.18)),
    ("Head", "Neck", (0.0, 0.0, 0.10)),
]
for _s, _y in (("Left", 1.0), ("Right", -1.0)):
    _JOINTS += [
        (f"{_s}Shoulder", "Spine1", (0.0, 0.04 * _y, 0.14)),
        (f"{_s}Arm", f"{_s}Shoulder", (0.0, 0.14 * _y, 0.0)),
        (f"{_s}ForeArm", f"{_s}Arm", (0.0, 0.28 * _y, 0.0)),
        (f"{_s}Hand", f"{_s}ForeArm", (0.0, 0.25 * _y, 0.0)),
        (f"{_s}UpLeg", "Hips", (0.0, 0.09 * _y, -0.06)),
        (f"{_s}Leg", f"{_s}UpLeg", (0.0, 0.0, -0.42)),
        (f"{_s}Foot", f"{_s}Leg", (0.0, 0.0, -0.40)),
        (f"{_s}ToeBase", f"{_s}Foot", (0.12, 0.0, -0.06)),
    ]
_ENDS = [("Head_end", "Head", (0.0, 0.0, 0.18)), ("LeftHand_end", "LeftHand", (0.0, 0.08, 0.0)),
         ("RightHand_end", "RightHand", (0.0, -0.08, 0.0)),
         ("LeftToe_end", "LeftToeBase", (0.05, 0.0, 0.0)),
         ("RightToe_end", "RightToeBase", (0.05, 0.0, 0.0))]


def walker_skeleton(names=None):
    """The humanoid (``names``: ``{cmu name: new name}`` to rename joints)."""
    from animik.skeleton import Dof, Joint, Site, Skeleton

    names = names or {}
    nm = lambda n: names.get(n, n)  # noqa: E731
    joints = []
    for name, parent, off in _JOINTS:
        dofs = [Dof(f"{nm(name)}_t{a}", f"t{a}", rest=(0.95 if a == "z" else 0.0))
                for a in "xyz"] if parent is None else []
        dofs += [Dof(f"{nm(name)}_r{a}", f"r{a}") for a in "zxy"]
        joints.append(Joint(nm(name), None if parent is None else nm(parent), off, dofs))
    sites = [Site(n, nm(j), off) for n, j, off in _ENDS]
    return Skeleton.from_joints("walker", joints, sites)


def walker_motion(frames: int = 90, fps: float = 60.0, names=None):
    """Walking in place forward (+x, 1 m/s): legs, knees and arms swinging."""
    from animik.motion import Motion

    skel = walker_skeleton(names)
    t = np.arange(frames) / fps
    q = np.tile(skel.rest_q, (frames, 1))
    ph = 2 * np.pi * 1.0 * t  # one stride a second
    k = lambda n: skel.dof_index(n)  # noqa: E731
    nm = (names or {}).get
    q[:, k(f"{nm('Hips', 'Hips')}_tx")] = 1.0 * t
    q[:, k(f"{nm('Hips', 'Hips')}_tz")] = 0.93 + 0.01 * np.cos(2 * ph)
    for s, sign in (("Left", 1.0), ("Right", -1.0)):
        swing = 0.35 * np.sin(ph) * sign
        q[:, k(f"{nm(s + 'UpLeg', s + 'UpLeg')}_ry")] = -swing
        q[:, k(f"{nm(s + 'Leg', s + 'Leg')}_ry")] = 0.5 * np.maximum(0.0, np.sin(ph + sign * 1.2)) ** 2
        q[:, k(f"{nm(s + 'Arm', s + 'Arm')}_rx")] = -1.2 * sign  # arms down
        q[:, k(f"{nm(s + 'Arm', s + 'Arm')}_rz")] = 0.3 * np.sin(ph) * sign
        q[:, k(f"{nm(s + 'ForeArm', s + 'ForeArm')}_rz")] = 0.3 * sign
    return Motion(skel, q, fps)


def write_walker_bvh(path: Path, frames: int = 90, fps: float = 60.0) -> Path:
    import animik

    animik.write_bvh(walker_motion(frames, fps), path, unit_scale="cm")
    return path


def write_unmappable_bvh(path: Path) -> Path:
    """A chain of joints with meaningless names and no humanoid shape: nothing maps."""
    import animik
    from animik.motion import Motion
    from animik.skeleton import Dof, Joint, Skeleton

    joints = [Joint("a", None, (0, 0, 0), [Dof("a_tx", "tx"), Dof("a_ty", "ty"), Dof("a_tz", "tz"),
                                          Dof("a_rz", "rz")])]
    for i, n in enumerate("bcd"):
        joints.append(Joint(n, "abc"[i], (0.3, 0.0, 0.0), [Dof(f"{n}_rz", "rz")]))
    skel = Skeleton.from_joints("chain", joints, [])
    q = np.zeros((5, skel.n_dof))
    q[:, 3:] = np.linspace(0, 0.5, 5)[:, None]
    animik.write_bvh(Motion(skel, q, 30.0), path, unit_scale="cm")
    return path
