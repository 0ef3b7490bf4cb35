"""Ball joints near gimbal lock: the check's states from the rotation (docs/dynamics.md 5j).

Independent reference: the same physical motion written with two Euler orders, one passing
through gimbal lock (and jumping between Euler branches, as capture files do), one far from
it. Inverse dynamics must not depend on which one the file uses.
"""

from __future__ import annotations

import numpy as np
from conftest import SHARED_BVH, needs_shared

from animik.dynamics.clip import clip_states
from animik.dynamics.contacts import ContactModel, contact_model_for_clip
from animik.dynamics.inverse import rnea
from animik.dynamics.plant import plant_contacts
from animik.dynamics.rotation_rates import group_states, leg_joints, lock_groups
from animik.io.bvh import loads_bvh, read_bvh
from animik.joints import joint_layouts, tb_angles
from animik.kinematics import forward_kinematics
from animik.motion import Motion
from animik.rotations import matrix_from_axis_chain

FPS = 30.0  # the check's window is then 5 frames (raw mocapbank's rate)


def _bvh(order: str) -> str:
    ch = " ".join(f"{a}rotation" for a in order)
    return f"""HIERARCHY
ROOT Hips
{{
  OFFSET 0 0 0
  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
  JOINT Thigh
  {{
    OFFSET 10 0 0
    CHANNELS 3 {ch}
    JOINT Shin
    {{
      OFFSET 0 -45 0
      CHANNELS 3 {ch}
      End Site
      {{
        OFFSET 0 -45 0
      }}
    }}
  }}
}}
MOTION
Frames: 1
Frame Time: {1 / FPS}
0 100 0 0 0 0 0 0 0 0 0 0
"""


def _thigh(skel):
    lay = next(lay for lay in joint_layouts(skel) if skel.joint_names[lay.joint] == "Thigh")
    return lay.group


def _clip(order: str, R: np.ndarray) -> Motion:
    """The thigh turning by the parent-frame rotations ``R (T, 3, 3)`` (axes of the skeleton's
    own x, y, z), everything else still; Euler angles on the branch with the middle angle in
    [-90, 90] deg, frame by frame (the way capture files store them)."""
    m = loads_bvh(_bvh(order), unit="cm", up="y")
    skel = m.skeleton
    g = _thigh(skel)
    T = R.shape[0]
    q = np.repeat(m.q[:1], T, axis=0)
    canon = np.einsum("ji,tjk,kl->til", g.basis, R, g.basis)
    inf = np.full(3, np.inf)
    q[:, g.dofs] = tb_angles(canon, g.signs, np.zeros((T, 3)), -inf, inf)
    return Motion(skel, q, FPS)


def _motion() -> tuple[Motion, Motion]:
    t = np.arange(90) / FPS
    a = np.deg2rad(90.0 + 35.0 * np.sin(2 * np.pi * 0.7 * t))  # through 90 deg about x
    b = 0.3 * np.sin(2 * np.pi * 0.5 * t)
    c = 0.2 * np.sin(2 * np.pi * 0.9 * t)
    ref = loads_bvh(_bvh("ZXY"), unit="cm", up="y").skeleton
    ax = {k: ref.dof_axis[ref.dof_index(f"Thigh_r{k}")] for k in "xyz"}
    R = matrix_from_axis_chain(np.stack([ax["x"], ax["y"], ax["z"]]), np.stack([a, b, c], -1))
    return _clip("ZXY", R), _clip("XZY", R)


def test_same_motion_two_euler_orders() -> None:
    locked, free = _motion()
    # the same poses (every joint and site, forward kinematics)
    pa = forward_kinematics(locked.skeleton, locked.q)
    pb = forward_kinematics(free.skeleton, free.q)
    assert np.allclose(pa.joint_positions,
                       pb.joint_positions, atol=1e-9)
    g = _thigh(locked.skeleton)
    # ZXY passes gimbal lock and its file angles jump between the branches; XZY does neither
    assert np.abs(np.diff(locked.q[:, g.dofs], axis=0)).max() > 2.0
    assert [list(d) for d in lock_groups(locked.skeleton, locked.q)] == [list(g.dofs)]
    assert lock_groups(free.skeleton, free.q) == []
    wa = rnea(locked.skeleton, *clip_states(locked.skeleton, locked.q, FPS)).wrench
    wb = rnea(free.skeleton, *clip_states(free.skeleton, free.q, FPS)).wrench
    weight = locked.skeleton.masses.sum() * 9.81
    inner = slice(3, -3)  # the fit's one-sided windows at the clip's ends differ more
    err = np.abs(wa[inner] - wb[inner]).max(axis=0)
    assert err[3:].max() < 0.01 * weight  # force, N
    assert err[:3].max() < 0.01 * weight * 1.0  # moment, N m (lever ~1 m)


def test_per_dof_fit_of_locked_angles_is_wrong() -> None:
    # what the check did before: the cubic through the branch-jumping angles reads accelerations
    # of many body weights where the rotation turns smoothly
    locked, free = _motion()
    skel = locked.skeleton
    g = _thigh(skel)
    st = clip_states(skel, locked.q, FPS)
    from animik.dynamics._savgol import savgol_matrix
    D = [savgol_matrix(90, 5, 3, d, 1 / FPS) for d in range(3)]
    qu = np.unwrap(locked.q, axis=0)
    per_dof = [np.asarray(Dk @ qu) for Dk in D]
    wa = rnea(skel, *per_dof).wrench
    wb = rnea(free.skeleton, *clip_states(free.skeleton, free.q, FPS)).wrench
    weight = skel.masses.sum() * 9.81
    assert np.abs(wa[3:-3, 3:] - wb[3:-3, 3:]).max() > 0.5 * weight
    # the rebuilt states: E(values) rates is the fitted rotation's angular velocity, and the
    # values reproduce the fitted rotation (a second route: the group's own decomposition)
    val, qd, _ = group_states(skel, qu, g.dofs, *D)
    assert np.allclose(st.q[:, g.dofs], val) and np.allclose(st.qd[:, g.dofs], qd)
    R = matrix_from_axis_chain(skel.dof_axis[g.dofs], val)
    dR = np.gradient(R, 1 / FPS, axis=0)
    W = np.einsum("tij,tkj->tik", dR, R)  # [omega]x from central differences of the rotation
    omega_fd = np.stack([W[:, 2, 1], W[:, 0, 2], W[:, 1, 0]], -1)
    ax = skel.dof_axis[g.dofs]
    R1 = matrix_from_axis_chain(ax[:1], val[:, :1])
    R12 = matrix_from_axis_chain(ax[:2], val[:, :2])
    omega = ax[0] * qd[:, :1] + (R1 @ ax[1]) * qd[:, 1:2] + (R12 @ ax[2]) * qd[:, 2:]
    assert np.abs(omega[3:-3] - omega_fd[3:-3]).max() < 0.05 * np.abs(omega).max()


def _turns(skel, q: np.ndarray, joint: str) -> np.ndarray:
    """Per frame, the angle (rad) the joint's rotation turns from the frame before."""
    d = np.array([i for i in skel.joint_dofs(skel.joint_names.index(joint))
                  if skel.dof_type[i] == 0])
    R = matrix_from_axis_chain(skel.dof_axis[d], q[:, d])
    c = 0.5 * (np.einsum("tij,tij->t", R[1:], R[:-1]) - 1.0)
    return np.arccos(np.clip(c, -1.0, 1.0))


def _front_half_past_the_end_site(cm: ContactModel) -> ContactModel:
    """The soles main derived for a toe-less foot before the eighth round: the front 0.5 x the
    ankle-to-end-site length past the end site (``derive_soles`` now ends the sole at it,
    docs/dynamics.md 5j "Raw mocapbank"). Points per area: two heel, then two front corners;
    heel -> front was 1.75 L, now 1.25 L."""
    loc = np.array(cm.point_local)
    for a in range(len(cm.names)):
        i = np.flatnonzero(cm.point_area == a)
        loc[i[2:]] = loc[i[:2]] + 1.4 * (loc[i[2:]] - loc[i[:2]])
    return ContactModel(cm.names, cm.point_area, cm.point_joint, loc, cm.source)


@needs_shared
def test_raw_mocapbank_knees_near_lock_and_planted_legs_do_not_flip():
    """Raw mocapbank (30 fps) bends its knees ~90 deg about the middle Euler axis; its file
    jumps between Euler branches there (108 deg of ``RightKnee_rz`` in one frame, the knee
    turning 5 deg). The check's knee states come from the rotation; and the plant step's leg
    IK, whose Gauss-Newton steps in those angles differ across the jump, must not turn the
    stance leg to another solution (main: the right hip, knee and ankle turned 62-125 deg in
    one frame at frames 129 and 335, the sole held: 15 frames of the written clip then read
    5 body weights). On main's soles (the front 10 cm under the toe tip, so the stance foot
    was never detected and the plant step held the legs); with the soles ending at the end site
    nothing is planted on this clip."""
    m = read_bvh(SHARED_BVH / "mocapbank" / "test_mocapbank.bvh")
    skel = m.skeleton
    cm = _front_half_past_the_end_site(contact_model_for_clip(skel, m.q))
    legs = leg_joints(skel, cm.point_joint)
    names = [skel.dof_names[g[0]] for g in lock_groups(skel, m.q, legs)]
    assert "LeftKnee_rz" in names and "RightKnee_rz" in names
    pl = plant_contacts(m, cm)
    assert pl.planted.any()
    for j in ("RightHip", "RightKnee", "RightAnkle", "LeftHip", "LeftKnee", "LeftAnkle"):
        extra = _turns(skel, pl.motion.q, j) - _turns(skel, m.q, j)
        assert extra.max() < 0.9, (j, np.degrees(extra.max()), int(np.argmax(extra)))


@needs_shared
def test_raw_pirouette_root_near_lock_reads_the_centre_of_mass():
    """The raw cmu_daz pirouette's root (``hip``, ``Zrotation Xrotation Yrotation``) spins near
    gimbal lock (``|cos(Xrotation)|`` down to 0.07): its first and third angles swing
    0.4-0.6 rad per frame while the pelvis turns 0.1 rad. The check's required force must be
    the body's own ``m (a_com - g)`` (the centre of mass by forward kinematics, its
    acceleration by the same Savitzky-Golay window): with the root's states from its rotation
    the two agree to 0.29 body weights at worst on the spin (90th percentile 0.15); the per-DoF
    cubic (main) puts up to 8 body weights between them (90th percentile 2.4)."""
    from animik.dynamics import check_clip
    from animik.dynamics._savgol import savgol_matrix
    from animik.dynamics.inverse import com
    from animik.dynamics.rotation_rates import near_lock_joints

    full = read_bvh(SHARED_BVH / "cmu_daz" / "pirouette.bvh")
    skel = full.skeleton
    m = Motion(skel, full.q[140:300], full.fps)  # the spin
    cm = contact_model_for_clip(skel, full.q)
    near = near_lock_joints(skel, cm.point_joint)
    root = int(np.flatnonzero(skel.parents < 0)[0])
    assert near[root] and not leg_joints(skel, cm.point_joint)[root]
    T = m.n_frames
    acc = np.asarray(savgol_matrix(T, 13, 3, 2, 1.0 / m.fps) @ com(skel, m.q))
    weight = skel.total_mass * 9.81
    need = skel.total_mass * (acc - np.array([0.0, 0.0, -9.81]))

    def err(wrench):
        return np.linalg.norm(wrench[6:-6, 3:] - need[6:-6], axis=1) / weight

    chk = check_clip(m, contacts=cm)
    assert err(chk.check.wrench).max() < 0.4
    # main's states: the legs only near the lock (the root's per-DoF fit)
    st = clip_states(skel, m.q, m.fps, near_lock=leg_joints(skel, cm.point_joint))
    res = rnea(skel, st.q, st.qd, st.qdd)
    assert err(res.wrench).max() > 2.0
