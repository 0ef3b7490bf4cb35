"""Joint rotations → DoF values of a target skeleton, vectorised over frames and joints.

Each joint's rotation DoFs are a product of rotations about fixed local axes,
``D(θ) = Rot(a_0, θ_0) Rot(a_1, θ_1) …``. Given desired local rotations ``L (T, 3, 3)`` the fit
finds ``θ (T, m)``:

* one DoF: the exact least-squares angle ``argmin ‖Rot(a, θ) − L‖_F =
  atan2(aᵀ vee(L − Lᵀ), tr L − aᵀ L a)`` (the twist of ``L`` about ``a``);
* two DoFs on orthogonal axes: the Euler decomposition with the missing third axis
  (``a_0 × a_1``) last and dropped, then Gauss–Newton on the rotation-vector residual
  ``log(D(θ)ᵀ L)`` to the least-squares optimum (two orthogonal axes never lock);
* three DoFs on orthogonal axes: the exact Euler decomposition in the joint's axis order;
  within ~17° of gimbal lock (``|cos(middle angle)| < 0.3``: a shoulder with the arm hanging at
  −90° abduction) a few Gauss–Newton steps **regularised towards a prior pose** along the
  weakest direction of the residual's Hessian only (``λ w (nᵀ(θ − θ_prior))²``, λ = 1e-3,
  ``n`` the eigenvector of ``BᵀB`` with the smallest eigenvalue, ``w`` rising smoothly from 0 at
  the zone's edge to 1 at the lock) pick the split of the two coupled angles closest to the
  prior instead of an arbitrary one, so the reference pose stays smooth over time (the same
  limb rotation); free DoFs (a root) are regularised towards their own Euler estimate;
* other axis layouts: the same Gauss–Newton from the prior.

Joints with the same layout are solved together (one numpy call for all of them and all
frames). Angles of limited DoFs are wrapped into ``(c − π, c + π]`` around the centre ``c`` of
their range, free DoFs are unwrapped along time (continuous), and every value is finally
clipped into the limits (the IK reference can only ask for reachable values).
"""

from __future__ import annotations

import numpy as np

from ..rotations import axis_angle_to_matrix, matrix_to_euler, matrix_to_rotvec
from ..skeleton import ROTATION, Skeleton
from ._fit_kernels import gn_refine, local_rotations

GN_LAMBDA = 1e-3
GN_ITERATIONS = 4
GIMBAL_ZONE = 0.3  # |cos(middle Euler angle)| below which the split is regularised (~17°)
_AXIS_LETTERS = "xyz"


def _principal(axis: np.ndarray) -> tuple[int, float] | None:
    """``(index, sign)`` when ``axis`` is ±e_i."""
    i = int(np.argmax(np.abs(axis)))
    if abs(abs(axis[i]) - 1.0) < 1e-9:
        return i, float(np.sign(axis[i]))
    return None


class JointFit:
    """Fit plan of one joint's rotation DoFs.

    Attributes:
        joint: joint index; ``dofs``: ``(m,)`` its rotation DoF indices (chain order).
        axes: ``(m, 3)`` unit axes in the joint frame; ``prior``: ``(m,)`` regularisation pose;
        free: ``(m,)`` bool, DoFs without finite limits.
        euler: ``(order, signs (m,))`` when the axes are distinct principal axes, else None.
    """

    def __init__(self, skel: Skeleton, joint: int, prior: np.ndarray):
        ds = [k for k in skel.joint_dofs(joint) if skel.dof_type[k] == ROTATION]
        self.joint = joint
        self.dofs = np.array(ds, dtype=np.int64)
        self.axes = np.array(skel.dof_axis[ds], dtype=float).reshape(-1, 3)
        self.prior = np.asarray(prior, dtype=float)[ds] if ds else np.zeros(0)
        lo, hi = skel.lower[ds], skel.upper[ds]
        self.free = ~(np.isfinite(lo) & np.isfinite(hi)) if ds else np.zeros(0, dtype=bool)
        self.euler = None
        pr = [_principal(a) for a in self.axes]
        m = len(ds)
        if 2 <= m <= 3 and all(p is not None for p in pr) and len({p[0] for p in pr}) == m:
            idx = [p[0] for p in pr]
            signs = [p[1] for p in pr]
            if m == 2:
                idx.append(3 - idx[0] - idx[1])
            self.euler = ("".join(_AXIS_LETTERS[i] for i in idx), np.array(signs[:m]))

    @property
    def m(self) -> int:
        return len(self.dofs)

    @property
    def kind(self) -> tuple:
        """Joints of the same kind are fitted together."""
        if self.m == 1:
            return (1,)
        if self.euler is not None:
            return (self.m, self.euler[0])
        return (self.m, "gn", self.joint)

    def fit(self, L: np.ndarray) -> np.ndarray:
        """DoF values ``(T, m)`` best reproducing local rotations ``L (T, 3, 3)``."""
        return fit_group([self], L[:, None])[:, 0]


def _tile(a: np.ndarray, T: int) -> np.ndarray:
    """``(G, ...)`` → ``(T * G, ...)`` repeated per frame (frame-major rows)."""
    return np.broadcast_to(a, (T,) + a.shape).reshape((T * a.shape[0],) + a.shape[1:])


def fit_group(joints: list[JointFit], L: np.ndarray) -> np.ndarray:
    """DoF values ``(T, G, m)`` of ``G`` joints of one kind from ``L (T, G, 3, 3)``."""
    T, G = L.shape[:2]
    m = joints[0].m
    axes = np.stack([j.axes for j in joints])  # (G, m, 3)
    if m == 1:
        a = axes[:, 0]  # (G, 3)
        skew = np.stack([L[..., 2, 1] - L[..., 1, 2], L[..., 0, 2] - L[..., 2, 0],
                         L[..., 1, 0] - L[..., 0, 1]], axis=-1)
        tr = L[..., 0, 0] + L[..., 1, 1] + L[..., 2, 2]
        ala = np.einsum("gi,tgij,gj->tg", a, L, a)
        return np.arctan2(np.einsum("tgi,gi->tg", skew, a), tr - ala)[..., None]
    prior = np.stack([j.prior for j in joints])
    free = np.stack([j.free for j in joints])
    Lf = L.reshape(T * G, 3, 3)
    if joints[0].euler is None:
        theta = _tile(prior, T).copy()
        out = refine(Lf, theta, _tile(axes, T), _tile(prior, T), _tile(free, T), np.ones(T * G))
        return out.reshape(T, G, m)
    order = joints[0].euler[0]
    signs = np.stack([j.euler[1] for j in joints])  # (G, m)
    eul = matrix_to_euler(Lf, order)
    theta = eul[:, :m] * _tile(signs, T)
    if m == 2:
        # two orthogonal axes never lock: plain Gauss–Newton to the least-squares optimum
        theta = refine(Lf, theta, _tile(axes, T), _tile(prior, T), _tile(free, T),
                       np.zeros(T * G))
        return theta.reshape(T, G, m)
    c = np.abs(np.cos(eul[:, 1]))
    w = np.clip(1.0 - c / GIMBAL_ZONE, 0.0, 1.0) ** 2
    near = np.flatnonzero(w > 0)
    if len(near):
        theta[near] = refine(Lf[near], theta[near], _tile(axes, T)[near], _tile(prior, T)[near],
                             _tile(free, T)[near], w[near])
    return theta.reshape(T, G, m)


def refine(L: np.ndarray, theta: np.ndarray, axes: np.ndarray, prior: np.ndarray,
           free: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """Gauss–Newton on ``log(D(θ)ᵀ L)`` per row, pulled towards ``prior`` with
    ``GN_LAMBDA · weight`` along the weakest direction of ``BᵀB`` only.

    The compiled form (:func:`animik.retarget._fit_kernels.gn_refine`) of
    :func:`refine_numpy`, which is kept as the reference (equal to rounding).

    Args:
        L: ``(N, 3, 3)``; theta, prior: ``(N, m)``; axes: ``(N, m, 3)``; free: ``(N, m)`` bool
        (free DoFs are pulled towards their start value); weight: ``(N,)``.

    Returns:
        ``(N, m)`` angles (rad).
    """
    return gn_refine(_kernel_arg(L, float), _kernel_arg(theta, float), _kernel_arg(axes, float),
                     _kernel_arg(prior, float), _kernel_arg(free, np.bool_),
                     _kernel_arg(weight, float), GN_LAMBDA, GN_ITERATIONS)


def _kernel_arg(a: np.ndarray, dtype) -> np.ndarray:
    """``a`` as a C-contiguous writable array of ``dtype`` (copied only if needed): one numba
    signature per kernel, the one ``animik warmup`` compiles (a read-only array would be
    another type and compile again)."""
    return np.require(a, dtype=dtype, requirements=["C", "W"])


def refine_numpy(L: np.ndarray, theta: np.ndarray, axes: np.ndarray, prior: np.ndarray,
                 free: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """:func:`refine` in numpy, vectorised over rows (the reference form)."""
    N, m = theta.shape
    lam = GN_LAMBDA * weight
    eye = np.eye(m)
    prior = np.where(free, theta, prior)
    for _ in range(GN_ITERATIONS):
        Rs = [axis_angle_to_matrix(axes[:, k], theta[:, k]) for k in range(m)]
        D = Rs[0]
        for k in range(1, m):
            D = D @ Rs[k]
        # b_k: axis k in the end frame (suffix product transposed)
        B = np.empty((N, 3, m))
        B[:, :, m - 1] = axes[:, m - 1]
        suffix = None
        for k in range(m - 2, -1, -1):
            suffix = Rs[k + 1] if suffix is None else Rs[k + 1] @ suffix
            B[:, :, k] = np.einsum("nji,nj->ni", suffix, axes[:, k])
        r = matrix_to_rotvec(np.swapaxes(D, -1, -2) @ L)
        BtB = np.einsum("nik,nil->nkl", B, B)
        g = np.einsum("nik,ni->nk", B, r)
        H = BtB + 1e-12 * eye
        if np.any(lam > 0):
            _, vec = np.linalg.eigh(BtB)
            n = vec[:, :, 0]
            Nm = lam[:, None, None] * np.einsum("nk,nl->nkl", n, n)
            H = H + Nm
            g = g + np.einsum("nkl,nl->nk", Nm, prior - theta)
        theta = theta + np.linalg.solve(H, g[..., None])[..., 0]
    return theta


def _angle_about(R: np.ndarray, a: np.ndarray) -> float | None:
    """The angle of rotation ``R`` about unit axis ``a`` when ``R`` is a rotation about ``a``."""
    if np.max(np.abs(R @ a - a)) > 1e-9:
        return None
    skew = np.array([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]])
    return float(np.arctan2(skew @ a, np.trace(R) - a @ R @ a))


def chain_fit(skel: Skeleton, links: list[int], prior: np.ndarray) -> JointFit:
    """One :class:`JointFit` for the rotation DoFs of a serial chain of joints ``links`` (each
    the parent of the next), as if they were one joint on the first link.

    With ``R_k = R_parent Rr_k D_k(θ)`` per link (rest rotation ``Rr_k``, DoF rotations
    ``D_k``), the chain's rotation is ``Rr_1 D_1 Rr_2 D_2 … = Rr_1 D'(θ) C`` where ``D'``
    rotates about the DoF axes carried into the first link's frame through the later links'
    rest rotations and ``C`` is their product. A rest rotation about the axis of the DoF just
    before or after it is folded into that DoF's angle instead (an offset: H1's and G1's
    shoulder roll links undo the pitch link's tilt, G1's hip roll link is pitched), so that
    principal axes stay principal and the fit is an exact Euler decomposition. The one-joint
    fit applies to ``Rr_1ᵀ (R_parentᵀ R_last) Cᵀ`` (``pre`` = ``Rr_1``, ``rest`` = ``C``) and
    a DoF's value is the fitted angle minus its ``offset``.
    """
    jf = JointFit(skel, links[-1], prior)
    dofs: list[int] = []
    axes: list[np.ndarray] = []
    offset: list[float] = []
    carry = np.eye(3)
    prev_local = None  # the previous DoF's axis in its own link's frame
    for n, j in enumerate(links):
        ks = [int(k) for k in skel.joint_dofs(j) if skel.dof_type[k] == ROTATION]
        fold_next = 0.0
        if n:
            Rr = np.asarray(skel.rest_rotations[j], dtype=float)
            phi = _angle_about(Rr, prev_local) if prev_local is not None else None
            if phi is not None:
                offset[-1] += phi  # D_prev(θ) Rr = Rot(a, θ + φ)
            else:
                phi = _angle_about(Rr, np.asarray(skel.dof_axis[ks[0]], float)) if ks else None
                if phi is not None:
                    fold_next = phi  # Rr D(θ) = Rot(a, φ + θ)
                else:
                    carry = carry @ Rr
        for i, k in enumerate(ks):
            dofs.append(k)
            axes.append(carry @ skel.dof_axis[k])
            offset.append(fold_next if i == 0 else 0.0)
            prev_local = np.asarray(skel.dof_axis[k], dtype=float)
    jf.dofs = np.array(dofs, dtype=np.int64)
    jf.axes = np.array(axes, dtype=float).reshape(-1, 3)
    jf.prior = np.asarray(prior, dtype=float)[dofs]
    lo, hi = skel.lower[dofs], skel.upper[dofs]
    jf.free = ~(np.isfinite(lo) & np.isfinite(hi))
    jf.euler = None
    pr = [_principal(a) for a in jf.axes]
    m = len(dofs)
    if 2 <= m <= 3 and all(p is not None for p in pr) and len({p[0] for p in pr}) == m:
        idx = [p[0] for p in pr]
        if m == 2:
            idx.append(3 - idx[0] - idx[1])
        jf.euler = ("".join(_AXIS_LETTERS[i] for i in idx), np.array([p[1] for p in pr]))
    jf.pre, jf.rest, jf.offset = np.array(skel.rest_rotations[links[0]]), carry, np.array(offset)
    return jf


class PoseFitter:
    """Fits all rotation DoFs of a skeleton from desired world joint rotations.

    Args:
        skel: the target skeleton.
        prior: ``(n,)`` regularisation pose (default: the rest pose).
        chains: serial chains of joints (each the parent of the next) whose rotation DoFs are
            fitted together to the chain's total rotation (:func:`chain_fit`) rather than
            link by link: a robot's hip or shoulder is three 1-DoF links (yaw, roll, pitch),
            whose desired rotations are only shares of the ball joint's (the alignment
            interpolates unpaired links); each link's share projected on its own axis loses
            most of it (H1 kneeling: a reference pose 20-90 cm from its own targets).
    """

    def __init__(self, skel: Skeleton, prior: np.ndarray | None = None,
                 chains: list[list[int]] | tuple = ()):
        self.skeleton = skel
        prior = np.clip(skel.rest_q if prior is None else prior, skel.lower, skel.upper)
        self.joints = [JointFit(skel, j, prior) for j in range(skel.n_joints)]
        groups: dict[tuple, list[JointFit]] = {}
        for jf in self.joints:
            if jf.m:
                groups.setdefault(jf.kind, []).append(jf)
        self.groups = [(g, np.array([j.joint for j in g]), np.concatenate([j.dofs for j in g]))
                       for g in groups.values()]
        lo, hi = skel.lower, skel.upper
        self.limited = np.isfinite(lo) & np.isfinite(hi) & (hi - lo < 2 * np.pi - 1e-9)
        self.centre = np.where(self.limited, 0.5 * (np.where(self.limited, lo, 0) +
                                                    np.where(self.limited, hi, 0)), 0.0)
        self.rot = skel.dof_type == ROTATION
        self._parent = np.where(skel.parents < 0, 0, skel.parents)
        self._rrT = np.array(np.swapaxes(skel.rest_rotations, -1, -2), order="C")
        self._parents64 = np.array(skel.parents, dtype=np.int64)
        #: ``(parent of the first link, last link, JointFit)`` per chain
        self.chains = [(int(skel.parents[c[0]]), int(c[-1]), chain_fit(skel, list(c), prior))
                       for c in chains]

    def local_rotations(self, R_world: np.ndarray) -> np.ndarray:
        """``(T, J, 3, 3)`` rotations relative to the rest transform: ``R_restᵀ R_parentᵀ R``
        (compiled: :func:`animik.retarget._fit_kernels.local_rotations`; equal to rounding to
        :meth:`local_rotations_numpy`)."""
        return local_rotations(_kernel_arg(R_world, float), self._parents64, self._rrT)

    def local_rotations_numpy(self, R_world: np.ndarray) -> np.ndarray:
        """:meth:`local_rotations` in numpy (the reference form)."""
        Rp = R_world[:, self._parent]
        Rp[:, self.skeleton.parents < 0] = np.eye(3)
        return self._rrT[None] @ np.swapaxes(Rp, -1, -2) @ R_world

    def fit(self, R_world: np.ndarray, q_fill: np.ndarray) -> np.ndarray:
        """DoF values ``(T, n)``.

        Args:
            R_world: ``(T, J, 3, 3)`` desired world rotation of every joint.
            q_fill: ``(T, n)`` values of the DoFs not fitted here (translations); copied.

        Returns:
            ``(T, n)`` within the limits; rotations continuous in time.
        """
        q = np.array(q_fill, dtype=float)
        L = self.local_rotations(np.asarray(R_world))
        T = L.shape[0]
        for group, joints, dofs in self.groups:
            q[:, dofs] = fit_group(group, L[:, joints]).reshape(T, -1)
        if self.chains:
            R_world = np.asarray(R_world)
            for a, b, jf in self.chains:
                Ra = R_world[:, a] if a >= 0 else np.eye(3)
                Lc = jf.pre.T @ np.swapaxes(Ra, -1, -2) @ R_world[:, b] @ jf.rest.T
                q[:, jf.dofs] = self._within_limits(jf, jf.fit(Lc))
        self.finish(q)
        return q

    def _within_limits(self, jf: JointFit, psi: np.ndarray) -> np.ndarray:
        """DoF values ``(T, m)`` of a chain from its fitted angles ``psi``: of the two Euler
        solutions of a 3-DoF chain, ``(a, b, c)`` and ``(a + π, π − b, c + π)`` (the same
        rotation), the one that needs less clipping into the limits in each frame (the Euler
        decomposition keeps ``|b| ≤ π/2``, while G1's hip roll ranges to 170°)."""
        cands = [psi - jf.offset]
        if jf.euler is not None and jf.m == 3:
            cands.append(psi + np.array([np.pi, 0.0, np.pi]) - jf.offset
                         + np.stack([0 * psi[:, 1], np.pi - 2 * psi[:, 1], 0 * psi[:, 1]], -1))
        lo, hi = self.skeleton.lower[jf.dofs], self.skeleton.upper[jf.dofs]
        lim = self.limited[jf.dofs]
        c = self.centre[jf.dofs]
        best, best_x = None, None
        for th in cands:
            th = np.where(lim, c + np.mod(th - c + np.pi, 2 * np.pi) - np.pi, th)
            x = (np.maximum(lo - th, 0.0) + np.maximum(th - hi, 0.0)).sum(axis=1)
            if best is None:
                best, best_x = th, x
            else:
                better = x < best_x - 1e-12
                best = np.where(better[:, None], th, best)
                best_x = np.minimum(best_x, x)
        return best

    def finish(self, q: np.ndarray) -> None:
        """Wrap, unwrap and clip rotation DoFs of ``q`` ``(T, n)`` in place."""
        skel = self.skeleton
        lim = self.limited & self.rot
        free = ~self.limited & self.rot
        if lim.any():
            c = self.centre[lim]
            q[:, lim] = c + np.mod(q[:, lim] - c + np.pi, 2 * np.pi) - np.pi
        if free.any() and q.shape[0] > 1:
            q[:, free] = np.unwrap(q[:, free], axis=0)
        np.clip(q, skel.lower, skel.upper, out=q)
