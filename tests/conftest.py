"""Shared test helpers: random skeletons that exercise every feature of the model."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from animik.rotations import axis_angle_to_matrix, rotvec_to_matrix
from animik.skeleton import Dof, Joint, Site, Skeleton

SHARED_BVH = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "bvh"


def shared_bvh_files() -> list[Path]:
    """Every BVH file of ../shared/data/bvh (empty when ../shared is absent)."""
    return sorted(SHARED_BVH.glob("*/*.bvh")) if SHARED_BVH.is_dir() else []


needs_shared = pytest.mark.skipif(
    not SHARED_BVH.is_dir(), reason="../shared/data/bvh not present (developer data set)"
)


def random_skeleton(
    rng: np.random.Generator, n_joints: int = 12, n_sites: int = 4, general_axes: bool = True,
    rest_rotations: bool = True, translations: bool = True, name: str = "random",
) -> Skeleton:
    """A random tree: random parents, offsets, DoF kinds (principal and general axes, rotations
    and translations, floating root), rest rotations, limits, and sites with rotations."""
    joints = []
    for j in range(n_joints):
        parent = None if j == 0 else f"j{int(rng.integers(0, j))}"
        dofs = []
        if j == 0 and translations:
            dofs += [Dof(f"j0_t{a}", f"t{a}") for a in "xyz"]
        n_d = int(rng.integers(0 if j else 1, 4))
        for d in range(n_d):
            if general_axes and rng.random() < 0.3:
                ax = rng.normal(size=3)
                kind = "t" if (translations and rng.random() < 0.1) else "r"
                dofs.append(Dof(f"j{j}_d{d}", kind, -1.5, 1.5, axis=tuple(ax / np.linalg.norm(ax))))
            else:
                kind = ("t" if (translations and rng.random() < 0.1) else "r") + "xyz"[int(rng.integers(3))]
                dofs.append(Dof(f"j{j}_d{d}", kind, -2.0, 2.0))
        rot = rotvec_to_matrix(rng.normal(size=3) * 0.7) if (rest_rotations and rng.random() < 0.5) else None
        joints.append(Joint(f"j{j}", parent, tuple(rng.normal(size=3) * 0.2), dofs, rot,
                            mass=float(rng.uniform(0.5, 3.0)), com=tuple(rng.normal(size=3) * 0.05),
                            inertia=np.diag(rng.uniform(0.01, 0.05, size=3))))
    sites = [
        Site(f"s{i}", f"j{int(rng.integers(0, n_joints))}", tuple(rng.normal(size=3) * 0.1),
             rotvec_to_matrix(rng.normal(size=3)) if rest_rotations else None)
        for i in range(n_sites)
    ]
    return Skeleton.from_joints(name, joints, sites)


def random_q(skel: Skeleton, rng: np.random.Generator, shape=()) -> np.ndarray:
    """Random poses within limits (±1 m / ±pi rad where a DoF is free)."""
    lo = np.where(np.isfinite(skel.lower), skel.lower, -np.where(skel.dof_type == 1, 1.0, np.pi))
    hi = np.where(np.isfinite(skel.upper), skel.upper, np.where(skel.dof_type == 1, 1.0, np.pi))
    return rng.uniform(lo, hi, size=tuple(shape) + (skel.n_dof,))


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(12345)


def reference_fk(skel, q):
    """Plain 4x4 homogeneous transforms, one pose, written independently of the kernels."""
    world = []
    for j in range(skel.n_joints):
        t = np.eye(4)
        t[:3, 3] = skel.offsets[j]
        r = np.eye(4)
        r[:3, :3] = skel.rest_rotations[j]
        local = t @ r
        for k in skel.joint_dofs(j):
            d = np.eye(4)
            if skel.dof_type[k] == 0:
                d[:3, :3] = axis_angle_to_matrix(skel.dof_axis[k], q[k])
            else:
                d[:3, 3] = skel.dof_axis[k] * q[k]
            local = local @ d
        p = skel.parents[j]
        world.append(local if p < 0 else world[p] @ local)
    sites = []
    for s in range(skel.n_sites):
        t = np.eye(4)
        t[:3, :3] = skel.site_rotations[s]
        t[:3, 3] = skel.site_offsets[s]
        sites.append(world[skel.site_joint[s]] @ t)
    return np.array(world), np.array(sites)


def seated_clip(skel, T=150, fps=30.0, up=0.3, at=1.0):
    """A body95-like clip standing on the floor for ``at`` s, then the whole still figure raised
    ``up`` m over 0.3 s (held on a seat): the off-floor detection's and the supports' case."""
    from animik.dynamics.contacts import contact_model_for_clip
    from animik.motion import Motion

    q = np.tile(skel.rest_q, (T, 1))
    z = contact_model_for_clip(skel, q[:1]).points(skel, q[:1])[..., 2].min()
    q[:, skel.dof_index("pelvis_tz")] -= z
    r = np.clip((np.arange(T) / fps - at) / 0.3, 0.0, 1.0)
    q[:, skel.dof_index("pelvis_tz")] += up * (3 * r ** 2 - 2 * r ** 3)
    return Motion(skel, q, fps)


def crouched_on_floor(skel, T):
    """body95 in a slight crouch (hips, knees, ankles bent; the soles level), ``T`` frames,
    lowered so its lowest contact point is on z = 0 in every frame."""
    from animik.dynamics.contacts import contact_model_for_clip

    q = np.tile(skel.rest_q, (T, 1))
    for side in "lr":
        q[:, skel.dof_index(f"{side}_hip_flexion")] += 0.3
        q[:, skel.dof_index(f"{side}_knee_flexion")] += 0.6
        q[:, skel.dof_index(f"{side}_ankle_dorsiflexion")] += 0.3  # the sole stays level
    cm = contact_model_for_clip(skel, q)
    q[:, skel.dof_index("pelvis_tz")] -= cm.points(skel, q)[..., 2].min(axis=1)
    return q
