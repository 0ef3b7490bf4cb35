"""How smooth a correction is: the frame-to-frame jitter the clip filter adds (docs/dynamics.md
section 5h).

The check reads a clip through Savitzky-Golay derivatives (:mod:`animik.dynamics._savgol`),
which do not see a zig-zag at the frame rate; a correction can pass the check and still shake
the body. The measure here is independent of the check and of the filter's own iterates: the
**second difference of (output - input)** of the root's translation and of the trunk's joint
angles -- the DoFs the filter moves -- per frame, next to the same measure of the input itself
for scale.
"""

from __future__ import annotations

import numpy as np

from ..skeleton import Skeleton
from .contacts import ContactModel


def root_slides(skel: Skeleton) -> np.ndarray:
    """The root joint's translation DoFs (indices into the DoF vector)."""
    root = int(np.flatnonzero(skel.parents < 0)[0])
    rd = np.array(list(skel.joint_dofs(root)), dtype=np.int64)
    return rd[skel.dof_type[rd] == 1]


def trunk_dofs(skel: Skeleton, contacts: ContactModel) -> np.ndarray:
    """The rotation DoFs of the trunk, which the filter's lean modes move: joints that are not
    the root, carry no contact point below them, and carry at least half the mass of the
    heaviest such subtree (lumbar and thoracic joints; not the arms, neck or fingers).

    Args:
        skel: the skeleton (its masses decide). contacts: its contact areas.

    Returns:
        ``(u,)`` DoF indices (possibly empty).
    """
    anc = skel.joint_ancestor_mask  # (J, J): [j, a] a is j or an ancestor of j
    carries = anc[np.unique(contacts.point_joint)].any(axis=0)
    below = anc.T.astype(float) @ np.asarray(skel.masses)  # mass of each joint's subtree
    free = ~carries
    free[int(np.flatnonzero(skel.parents < 0)[0])] = False
    # half the heaviest such subtree: the trunk, whatever the mass model (CMU's bone-estimated
    # masses leave its spine 22 % of the body; body95's lumbar joint carries the whole torso)
    trunk = free & (below >= 0.5 * (below[free].max() if free.any() else np.inf))
    return np.flatnonzero(trunk[skel.dof_joint] & (skel.dof_type == 0)).astype(np.int64)


def _stats(d2: np.ndarray, scale: float) -> dict:
    """RMS and max over frames of the per-frame Euclidean norm of ``d2 (T - 2, m)``."""
    if d2.shape[0] == 0 or d2.shape[1] == 0:
        return {"rms": 0.0, "max": 0.0}
    nrm = np.linalg.norm(d2, axis=1) * scale
    return {"rms": round(float(np.sqrt(np.mean(nrm ** 2))), 4), "max": round(float(nrm.max()), 4)}


def correction_jitter(skel: Skeleton, q_in: np.ndarray, q_out: np.ndarray,
                      trunk: np.ndarray) -> dict:
    """The jitter of a correction, measured against the input.

    Per frame, the second difference ``x[t+1] - 2 x[t] + x[t-1]`` of ``x = q_out - q_in`` on the
    root's three translations (Euclidean norm, mm) and on the trunk's rotation DoFs (Euclidean
    norm, degrees); RMS and max over the frames. The same of ``q_in`` itself (``input``) gives
    the scale: a walk's root accelerates by a few mm per frame squared at 30-120 fps.

    Args:
        skel: the skeleton of both clips. q_in, q_out: ``(T, n)`` poses (rad, m).
        trunk: the trunk's DoFs (:func:`trunk_dofs`).

    Returns:
        ``{"root_mm": {"rms", "max"}, "trunk_deg": {...}, "input_root_mm": {...},
        "input_trunk_deg": {...}}`` (per frame, i.e. mm / degrees per frame squared).
    """
    q_in = np.asarray(q_in, dtype=float)
    q_out = np.asarray(q_out, dtype=float)
    if q_in.shape != q_out.shape:
        raise ValueError(f"q_in and q_out must have the same shape, got {q_in.shape} and "
                         f"{q_out.shape}")
    sl = root_slides(skel)
    trunk = np.asarray(trunk, dtype=np.int64)
    rot = skel.dof_type == 0
    d = q_out - q_in
    d[:, rot] = np.angle(np.exp(1j * d[:, rot]))  # a re-wrapped Euler angle is no change
    q_u = q_in.copy()
    q_u[:, rot] = np.unwrap(q_u[:, rot], axis=0)
    dx = np.diff(d, n=2, axis=0)
    d2in = np.diff(q_u, n=2, axis=0)
    return {"root_mm": _stats(dx[:, sl], 1e3),
            "trunk_deg": _stats(dx[:, trunk], 180.0 / np.pi),
            "input_root_mm": _stats(d2in[:, sl], 1e3),
            "input_trunk_deg": _stats(d2in[:, trunk], 180.0 / np.pi)}
