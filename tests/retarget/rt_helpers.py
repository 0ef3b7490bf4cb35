"""Helpers of the retarget tests: synthetic humanoids with any naming, short test clips."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from animik.dynamics.clip import detect_clip_contacts
from animik.motion import Motion
from animik.skeleton import Dof, Joint, Site, Skeleton

# slot: (parent slots in order of preference, offset in a Z-up T-pose facing +x, left = +y)
_SLOTS: dict[str, tuple[tuple[str, ...], tuple[float, float, float]]] = {
    "root": ((), (0.0, 0.0, 0.0)),
    "hips": (("root",), (0.0, 0.0, 0.95)),
    "spine": (("hips",), (0.0, 0.0, 0.10)),
    "spine1": (("spine", "hips"), (0.0, 0.0, 0.10)),
    "spine2": (("spine1", "spine", "hips"), (0.0, 0.0, 0.10)),
    "chest": (("spine2", "spine1", "spine", "hips"), (0.0, 0.0, 0.12)),
    "neck": (("chest",), (0.0, 0.0, 0.15)),
    "neck1": (("neck",), (0.0, 0.0, 0.05)),
    "head": (("neck1", "neck", "chest"), (0.0, 0.0, 0.08)),
    "head_end": (("head",), (0.0, 0.0, 0.18)),
    "eye": (("head",), (0.08, 0.03, 0.08)),
}
for _s, _y in (("l", 1.0), ("r", -1.0)):
    _SLOTS.update({
        f"{_s}_clavicle": (("chest",), (0.0, 0.03 * _y, 0.12)),
        f"{_s}_upper_arm": ((f"{_s}_clavicle", "chest"), (0.0, 0.15 * _y, 0.0)),
        f"{_s}_forearm": ((f"{_s}_upper_arm",), (0.0, 0.28 * _y, 0.0)),
        f"{_s}_hand": ((f"{_s}_forearm",), (0.0, 0.26 * _y, 0.0)),
        f"{_s}_metacarpal": ((f"{_s}_hand",), (0.03, 0.02 * _y, 0.0)),
        f"{_s}_thumb1": ((f"{_s}_hand",), (0.03, 0.02 * _y, -0.01)),
        f"{_s}_index1": ((f"{_s}_metacarpal", f"{_s}_hand"), (0.02, 0.08 * _y, 0.0)),
        f"{_s}_index2": ((f"{_s}_index1",), (0.0, 0.04 * _y, 0.0)),
        f"{_s}_middle1": ((f"{_s}_hand",), (0.0, 0.09 * _y, 0.0)),
        f"{_s}_hipjoint": (("hips",), (0.0, 0.0, 0.0)),
        f"{_s}_thigh": ((f"{_s}_hipjoint", "hips"), (0.0, 0.09 * _y, -0.05)),
        f"{_s}_shin": ((f"{_s}_thigh",), (0.0, 0.0, -0.42)),
        f"{_s}_foot": ((f"{_s}_shin",), (0.0, 0.0, -0.42)),
        f"{_s}_toe": ((f"{_s}_foot",), (0.12, 0.0, -0.06)),
    })

# naming conventions: slot -> joint name ("{S}" = Left/Right style placeholders per side)
CONVENTIONS: dict[str, dict[str, str]] = {
    "cmu": {"hips": "Hips", "l_hipjoint": "LHipJoint", "l_thigh": "LeftUpLeg", "l_shin": "LeftLeg",
            "l_foot": "LeftFoot", "l_toe": "LeftToeBase", "r_hipjoint": "RHipJoint",
            "r_thigh": "RightUpLeg", "r_shin": "RightLeg", "r_foot": "RightFoot",
            "r_toe": "RightToeBase", "spine": "LowerBack", "spine1": "Spine", "chest": "Spine1",
            "neck": "Neck", "neck1": "Neck1", "head": "Head", "l_clavicle": "LeftShoulder",
            "l_upper_arm": "LeftArm", "l_forearm": "LeftForeArm", "l_hand": "LeftHand",
            "l_metacarpal": "LeftFingerBase", "l_index1": "LeftHandIndex1", "l_thumb1": "LThumb",
            "r_clavicle": "RightShoulder", "r_upper_arm": "RightArm",
            "r_forearm": "RightForeArm", "r_hand": "RightHand", "r_metacarpal": "RightFingerBase",
            "r_index1": "RightHandIndex1", "r_thumb1": "RThumb"},
    "daz": {"hips": "hip", "spine": "abdomen", "chest": "chest", "neck": "neck", "head": "head",
            "eye": "leftEye", "l_clavicle": "lCollar", "l_upper_arm": "lShldr",
            "l_forearm": "lForeArm", "l_hand": "lHand", "l_thumb1": "lThumb1",
            "l_index1": "lIndex1", "l_index2": "lIndex2", "l_middle1": "lMid1",
            "r_clavicle": "rCollar", "r_upper_arm": "rShldr", "r_forearm": "rForeArm",
            "r_hand": "rHand", "r_thumb1": "rThumb1", "r_index1": "rIndex1", "r_index2": "rIndex2",
            "r_middle1": "rMid1", "l_hipjoint": "lButtock", "l_thigh": "lThigh", "l_shin": "lShin",
            "l_foot": "lFoot", "r_hipjoint": "rButtock", "r_thigh": "rThigh", "r_shin": "rShin",
            "r_foot": "rFoot"},
    "mixamo": {"hips": "mixamorig:Hips", "spine": "mixamorig:Spine", "spine1": "mixamorig:Spine1",
               "chest": "mixamorig:Spine2", "neck": "mixamorig:Neck", "head": "mixamorig:Head",
               "head_end": "mixamorig:HeadTop_End",
               **{f"{s}_{k}": f"mixamorig:{S}{v}" for s, S in (("l", "Left"), ("r", "Right"))
                  for k, v in (("clavicle", "Shoulder"), ("upper_arm", "Arm"),
                               ("forearm", "ForeArm"), ("hand", "Hand"),
                               ("thumb1", "HandThumb1"), ("index1", "HandIndex1"),
                               ("index2", "HandIndex2"), ("middle1", "HandMiddle1"),
                               ("thigh", "UpLeg"), ("shin", "Leg"), ("foot", "Foot"),
                               ("toe", "ToeBase"))}},
    "bandai": {"root": "joint_Root", "hips": "Hips", "spine": "Spine", "chest": "Chest",
               "neck": "Neck", "head": "Head",
               **{f"{s}_{k}": f"{v}_{S}" for s, S in (("l", "L"), ("r", "R"))
                  for k, v in (("clavicle", "Shoulder"), ("upper_arm", "UpperArm"),
                               ("forearm", "LowerArm"), ("hand", "Hand"), ("thigh", "UpperLeg"),
                               ("shin", "LowerLeg"), ("foot", "Foot"), ("toe", "Toes"))}},
    "motive": {"hips": "Hip", "spine": "Ab", "chest": "Chest", "neck": "Neck", "head": "Head",
               **{f"{s}_{k}": f"{S}{v}" for s, S in (("l", "L"), ("r", "R"))
                  for k, v in (("clavicle", "Shoulder"), ("upper_arm", "UArm"),
                               ("forearm", "FArm"), ("hand", "Hand"), ("thigh", "Thigh"),
                               ("shin", "Shin"), ("foot", "Foot"), ("toe", "Toe"))}},
    "adelaide": {"hips": "Hips", "chest": "Chest", "neck": "Neck", "head": "Head",
                 **{f"{s}_{k}": f"{S}{v}" for s, S in (("l", "Left"), ("r", "Right"))
                    for k, v in (("clavicle", "Collar"), ("upper_arm", "Shoulder"),
                                 ("forearm", "Elbow"), ("hand", "Wrist"), ("thigh", "Hip"),
                                 ("shin", "Knee"), ("foot", "Ankle"))}},
    "axis_neuron": {"hips": "Hips", "spine": "Spine", "spine1": "Spine1", "spine2": "Spine2",
                    "chest": "Spine3", "neck": "Neck", "head": "Head",
                    **{f"{s}_{k}": f"{S}{v}" for s, S in (("l", "Left"), ("r", "Right"))
                       for k, v in (("clavicle", "Shoulder"), ("upper_arm", "Arm"),
                                    ("forearm", "ForeArm"), ("hand", "Hand"),
                                    ("thumb1", "HandThumb1"), ("metacarpal", "InHandIndex"),
                                    ("index1", "HandIndex1"), ("index2", "HandIndex2"),
                                    ("thigh", "UpLeg"), ("shin", "Leg"), ("foot", "Foot"))}},
    "biped": {"hips": "Bip01 Pelvis", "spine": "Bip01 Spine", "spine1": "Bip01 Spine1",
              "neck": "Bip01 Neck", "head": "Bip01 Head",
              **{f"{s}_{k}": f"Bip01 {S} {v}" for s, S in (("l", "L"), ("r", "R"))
                 for k, v in (("clavicle", "Clavicle"), ("upper_arm", "UpperArm"),
                              ("forearm", "Forearm"), ("hand", "Hand"), ("thigh", "Thigh"),
                              ("shin", "Calf"), ("foot", "Foot"), ("toe", "Toe0"))}},
}


def _present_parent(slot: str, present: set[str]) -> str | None:
    parents = _SLOTS[slot][0]
    while parents:
        hit = next((p for p in parents if p in present), None)
        if hit is not None:
            return hit
        parents = _SLOTS[parents[0]][0]
    return None


def humanoid(names: dict[str, str], name: str = "synthetic", rest_arms_deg: float = 0.0
             ) -> Skeleton:
    """A T-pose humanoid (Z up, facing +x) whose joints are named by ``names`` (slot -> name).

    Slots without a name are left out (children attach to the next named ancestor). Every joint
    gets three free rotation DoFs (``rz rx ry``), the top joint also translations. With
    ``rest_arms_deg`` the arms below the shoulder hang that many degrees below horizontal (an
    A-pose rest).
    """
    present = set(names)
    world: dict[str, np.ndarray] = {}
    for slot, (parents, off) in _SLOTS.items():
        par = _present_parent(slot, present) or (parents[0] if parents else None)
        o = np.array(off, dtype=float)
        if rest_arms_deg and slot[2:] in ("forearm", "hand", "metacarpal", "thumb1", "index1",
                                           "index2", "middle1"):
            o = arm_rotation(slot[0], rest_arms_deg) @ o
        world[slot] = (world[par] if par else np.zeros(3)) + o
    joints = []
    for slot in _SLOTS:
        if slot not in present:
            continue
        par = _present_parent(slot, present)
        offset = world[slot] - (world[par] if par else np.zeros(3))
        dofs = [Dof(f"{names[slot]}_t{a}", f"t{a}", rest=float(offset["xyz".index(a)]))
                for a in "xyz"] if par is None else []
        dofs += [Dof(f"{names[slot]}_r{a}", f"r{a}") for a in "zxy"]
        joints.append(Joint(names[slot], names[par] if par else None,
                            (0.0, 0.0, 0.0) if par is None else tuple(offset), dofs))
    sites = [Site(f"{names[s + '_foot']}_end", names[f"{s}_foot"], (0.12, 0.0, -0.06))
             for s in ("l", "r") if f"{s}_foot" in present and f"{s}_toe" not in present]
    return Skeleton.from_joints(name, joints, sites)


def arm_rotation(side: str, deg: float) -> np.ndarray:
    """Rotation about the forward axis (+x) that lowers the ``side`` arm by ``deg`` degrees."""
    from animik.rotations import axis_matrix

    return axis_matrix("x", np.radians(-deg if side == "l" else deg))


def smooth_motion(skel: Skeleton, frames: int = 40, fps: float = 30.0, seed: int = 0,
                  amplitude: float = 0.3) -> Motion:
    """Smooth random motion within the limits (sums of sines), the root walking forward."""
    rng = np.random.default_rng(seed)
    t = np.arange(frames) / fps
    n = skel.n_dof
    ph = rng.uniform(0, 2 * np.pi, size=(2, n))
    fr = rng.uniform(0.3, 1.2, size=(2, n))
    q = skel.rest_q + amplitude * 0.5 * (np.sin(2 * np.pi * fr[0] * t[:, None] + ph[0])
                                         + np.sin(2 * np.pi * fr[1] * t[:, None] + ph[1]))
    for k in range(n):
        if skel.dof_type[k] == 1:
            q[:, k] = skel.rest_q[k] + (0.02 * np.sin(2 * np.pi * fr[0, k] * t) if k else 0.8 * t)
    lo = np.where(np.isfinite(skel.lower), skel.lower, -np.inf)
    hi = np.where(np.isfinite(skel.upper), skel.upper, np.inf)
    q = np.clip(q, lo, hi)
    return Motion(skel, q, fps)


def write_test_clip(path: Path, frames: int = 30, seed: int = 0) -> Path:
    """A short BVH clip (body95 joints; thumbs as Z X Y channels) for CLI / batch tests."""
    import animik
    from animik.io.bvh_compat import write_bvh_compatible

    body = animik.load_rig("body95")
    m = smooth_motion(body, frames=frames, seed=seed, amplitude=0.25)
    write_bvh_compatible(m, path, unit_scale="cm")
    return path


def heel_lift(skel, q, fps, cm) -> np.ndarray:
    """Per sole, the median over its stance frames (the check's contact flags) of how far its
    heel edge is above its lowest point (m)."""
    flags, _ = detect_clip_contacts(skel, q, fps, contacts=cm)
    z = cm.points(skel, q)[..., 2]
    out = []
    for a in range(cm.n_areas):
        idx = np.flatnonzero(cm.point_area == a)
        on_foot = idx[cm.point_joint[idx] == cm.point_joint[idx].min()]  # heel side: foot joint
        x = cm.point_local[on_foot, 0]
        heel = on_foot[x <= x.min() + 1e-9]
        st = flags[:, a]
        assert st.sum() >= 20, f"sole {cm.names[a]}: {st.sum()} stance frames"
        out.append(np.median(z[st][:, heel].mean(axis=1) - z[st][:, idx].min(axis=1)))
    return np.array(out)
