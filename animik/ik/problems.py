"""IK problem generators shared by the benchmarks (``animik bench ik``) and the tests.

* :func:`random_reachable` — targets at the FK of a random pose, start near that pose.
* :func:`circle_tracking` — one hand dragged around a circle, the other effectors pinned.
* :func:`seed_c_singular` — seed C's biped experiment: straight legs, feet moved apart.

All generators are deterministic given their ``rng`` / arguments.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import OptionError, ShapeError, UnknownNameError, names_hint
from ..kinematics import forward_kinematics, site_poses
from ..skeleton import TRANSLATION, Skeleton

# Free DoFs are sampled in ±pi rad or ±FREE_TRANSLATION m.
FREE_TRANSLATION = 1.0  # m


class RandomProblem(tuple):
    """``(targets, q_start, q_true)``; unpacks like a tuple, fields also by name."""

    __slots__ = ()

    def __new__(cls, targets: dict, q_start: np.ndarray, q_true: np.ndarray):
        return super().__new__(cls, (targets, q_start, q_true))

    @property
    def targets(self) -> dict[str, np.ndarray]:
        return self[0]

    @property
    def q_start(self) -> np.ndarray:
        return self[1]

    @property
    def q_true(self) -> np.ndarray:
        return self[2]


def sample_q(skel: Skeleton, rng: np.random.Generator, shape: Sequence[int] = ()) -> np.ndarray:
    """Uniform poses within the limits, ``shape + (n_dof,)`` (free DoFs: ±pi rad / ±1 m)."""
    trans = skel.dof_type == TRANSLATION
    free = np.where(trans, FREE_TRANSLATION, np.pi)
    fin_lo, fin_hi = np.isfinite(skel.lower), np.isfinite(skel.upper)
    # A one-sided limit: sample a window of width 2 * free on the free side.
    lo = np.where(fin_lo, skel.lower, np.where(fin_hi, skel.upper - 2 * free, -free))
    hi = np.where(fin_hi, skel.upper, np.where(fin_lo, skel.lower + 2 * free, free))
    return rng.uniform(lo, hi, size=tuple(shape) + (skel.n_dof,))


def random_reachable(
    skel: Skeleton,
    rng: np.random.Generator,
    sites: Sequence[str] | None = None,
    perturbation: float = 0.3,
    translation_perturbation: float = 0.03,
) -> RandomProblem:
    """A reachable position-target problem near a known solution.

    ``q_true`` is uniform within the joint limits (free rotations ±pi, free translations ±1 m);
    the targets are the world positions of ``sites`` at ``q_true``; the start is ``q_true``
    perturbed uniformly per DoF by ±``perturbation`` rad (rotations) or
    ±``translation_perturbation`` m (translations: 0.3 rad on a 0.1 m lever is 3 cm), clipped to
    the limits. So every problem has an exact solution within the limits and starts a few tenths
    of a radian from it.

    Args:
        skel: the skeleton.
        rng: random generator (seed it for reproducible problems).
        sites: targeted sites (default: all sites of the skeleton).
        perturbation: rad, half-width of the start perturbation of rotation DoFs.
        translation_perturbation: m, half-width for translation DoFs.

    Returns:
        :class:`RandomProblem` ``(targets {site: position (3,)}, q_start (n,), q_true (n,))``.
    """
    names = list(skel.site_names if sites is None else sites)
    idx = [skel.site_index(s) for s in names]
    q_true = sample_q(skel, rng)
    width = np.where(skel.dof_type == TRANSLATION, float(translation_perturbation),
                     float(perturbation))
    q_start = np.clip(q_true + rng.uniform(-1.0, 1.0, size=skel.n_dof) * width,
                      skel.lower, skel.upper)
    pos, _ = site_poses(skel, q_true)
    targets = {n: pos[i].copy() for n, i in zip(names, idx, strict=True)}
    return RandomProblem(targets, q_start, q_true)


_HAND_NAMES = ("r_hand", "right_hand", "rhand", "hand_r", "r_wrist", "right_wrist", "rwrist",
               "l_hand", "left_hand", "lhand", "hand_l", "gripper", "r_gripper", "tool")


def hand_site(skel: Skeleton) -> str:
    """The site a "drag the hand" test uses: ``r_hand`` or the first hand-like site name."""
    lower = {s.lower(): s for s in skel.site_names}
    for nm in _HAND_NAMES:
        if nm in lower:
            return lower[nm]
    for key in ("hand", "wrist", "grip", "finger", "tip"):
        for s in skel.site_names:
            if key in s.lower():
                return s
    if not skel.site_names:
        raise OptionError(f"skeleton {skel.name!r} has no sites to drag")
    return skel.site_names[0]


@dataclass(frozen=True)
class TrackingCase:
    """A hand dragged along a circle, frame by frame.

    Attributes:
        site: the dragged site.
        pinned: the other sites, pinned at their pose in ``q0``.
        q0: start pose ``(n,)``.
        positions: ``(T, 3)`` target of ``site`` per frame, m.
        fps: frames per second.
        center: ``(3,)`` circle centre (the site's position at ``q0``), m.
        axes: ``(2, 3)`` orthonormal axes of the circle's plane.
    """

    site: str
    pinned: tuple[str, ...]
    q0: np.ndarray
    positions: np.ndarray
    fps: float
    center: np.ndarray
    axes: np.ndarray

    @property
    def n_frames(self) -> int:
        return len(self.positions)

    def frames(self) -> Iterator[dict[str, np.ndarray]]:
        """Per-frame targets ``{site: position (3,)}``."""
        for p in self.positions:
            yield {self.site: p}


def limb_dofs(skel: Skeleton, site: str, pinned: Sequence[str]) -> np.ndarray:
    """Bool ``(n,)``: DoFs that move ``site`` and none of the ``pinned`` sites (its own limb)."""
    mask = skel.site_dof_mask[skel.site_index(site)].copy()
    for s in pinned:
        mask &= ~skel.site_dof_mask[skel.site_index(s)]
    return mask


def circle_tracking(
    skel: Skeleton,
    site: str | None = None,
    radius: float = 0.2,
    speed: float = 1.0,
    fps: float = 60.0,
    frames: int | None = None,
    q0: np.ndarray | None = None,
    pinned: Sequence[str] | None = None,
) -> TrackingCase:
    """One hand dragged around a circle at constant speed, the other effectors pinned.

    The circle (``radius`` 0.2 m, ``speed`` 1 m/s, sampled at ``fps`` 60) is centred on the
    hand's position in the start pose and lies in the plane **facing the limb's root**: the plane
    through the hand perpendicular to the line from the limb's first joint (shoulder, hip) to the
    hand, so every point of the circle is at the same distance from the shoulder. Its first axis
    is horizontal, its second points up (for a horizontal reach the plane is vertical and faces
    the character). Frame ``t`` is at angle ``speed / radius · t / fps`` from the first axis, so
    the first frame is one radius from the start position (a jump, then smooth motion). Default
    ``frames``: one turn, ``ceil(2 pi radius / speed · fps)`` (76 at the defaults).

    Start pose (default): the rest pose with the dragged limb's own DoFs (those that move the
    hand and no pinned site, with finite limits) at the middle of their ranges. The built-in
    humanoids rest in a T-pose with the arm straight, where a circle around the hand is out of
    reach (the arm cannot get longer); mid-range keeps the limb away from limits and
    singularities, so the whole circle is reachable on every built-in rig.

    Args:
        skel: the skeleton.
        site: dragged site (default :func:`hand_site`: ``r_hand`` when it exists).
        radius: m. speed: m/s along the circle. fps: frames per second.
        frames: number of frames.
        q0: start pose ``(n,)`` (default: see above).
        pinned: pinned sites (default: every other site except those the dragged one carries,
            such as its own fingertips).

    Raises:
        UnknownNameError: unknown site. OptionError: bad numbers. ShapeError: bad ``q0``.
    """
    site = hand_site(skel) if site is None else site
    i_site = skel.site_index(site)
    for nm, v in (("radius", radius), ("speed", speed), ("fps", fps)):
        if not (np.isfinite(v) and v > 0):
            raise OptionError(f"{nm} must be a positive number, got {v!r}")
    if frames is None:
        frames = int(np.ceil(2 * np.pi * radius / speed * fps))
    if int(frames) < 1:
        raise OptionError(f"frames must be at least 1, got {frames!r}")
    if pinned is None:
        # Every other effector, except those carried by the dragged one (a hand's fingertips).
        own = skel.joint_ancestor_mask[:, skel.site_joint[i_site]]
        pinned = tuple(s for s in skel.site_names
                       if s != site and not own[skel.site_joint[skel.site_index(s)]])
    else:
        pinned = tuple(pinned)
        for s in pinned:
            skel.site_index(s)
    limb = limb_dofs(skel, site, pinned)
    if q0 is None:
        q0 = np.array(skel.rest_q, dtype=float)
        mid = limb & np.isfinite(skel.lower) & np.isfinite(skel.upper)
        q0[mid] = 0.5 * (skel.lower[mid] + skel.upper[mid])
    else:
        q0 = np.array(skel.check_q(q0, "q0"), dtype=float)
        if q0.shape != (skel.n_dof,):
            raise ShapeError(f"q0 must have shape ({skel.n_dof},), got {q0.shape}")
    fk = forward_kinematics(skel, q0)
    center = fk.site_positions[i_site].copy()
    up = np.array([0.0, 0.0, 1.0])
    normal = np.zeros(3)
    if limb.any():
        normal = center - fk.joint_positions[skel.dof_joint[np.flatnonzero(limb)[0]]]
    if np.linalg.norm(normal) < 1e-6:
        normal = np.array([1.0, 0.0, 0.0])
    normal /= np.linalg.norm(normal)
    e1 = np.cross(normal, up)
    if np.linalg.norm(e1) < 1e-6:  # vertical reach: horizontal circle
        e1 = np.array([1.0, 0.0, 0.0]) - normal[0] * normal
    e1 /= np.linalg.norm(e1)
    e2 = np.cross(e1, normal)
    if e2[2] < 0:
        e1, e2 = -e1, -e2
    theta = speed / radius * np.arange(int(frames)) / fps
    positions = center + radius * (np.cos(theta)[:, None] * e1 + np.sin(theta)[:, None] * e2)
    q0.setflags(write=False)
    return TrackingCase(site, pinned, q0, positions, float(fps), center, np.stack([e1, e2]))


# Seed C's experiment: "right-foot target [-0.25, 0.35, 0], left-foot target [0.25, -0.35, 0]"
# (metres). In animik's world frame (Y points to the character's left) the literal assignment
# crosses the legs, so the targets are swapped: each foot moves outward (biped12 records the same
# choice in ``meta["seed_c_targets"]``, which takes precedence when present).
SEED_C_TARGETS = {"l_sole": (-0.25, 0.35, 0.0), "r_sole": (0.25, -0.35, 0.0)}


@dataclass(frozen=True)
class SeedCCase:
    """Seed C's singular-start experiment on a biped.

    Attributes:
        targets: ``{sole site: (position (3,), identity rotation (3, 3))}``.
        q_start: ``(n,)`` straight legs (all joints zero: the singular pose).
    """

    targets: dict
    q_start: np.ndarray


def seed_c_singular(skel: Skeleton) -> SeedCCase:
    """Seed C's experiment: legs straight (singular start), soles sent apart, kept parallel.

    Targets are world positions (biped12: torso fixed at z = 0.85 m, soles 0.11 m below z = 0
    when the legs are straight, so targets on z = 0 need the knees slightly bent): left sole to
    ``[-0.25, 0.35, 0]``, right sole to ``[0.25, -0.35, 0]`` — the seed's vectors with the feet
    swapped, because the seed's literal assignment (right foot to ``y = +0.35``) would cross the
    legs in animik's frame (Y is the character's left); each foot then moves outward and one
    forward, one back. Both soles must stay parallel to the ground: identity rotation targets
    (6 task rows each). ``skel.meta["seed_c_targets"]`` overrides the positions when present.

    Raises:
        UnknownNameError: the skeleton has no ``l_sole`` / ``r_sole`` sites (valid names listed).
    """
    pos = dict(SEED_C_TARGETS)
    pos.update({k: tuple(v) for k, v in dict(skel.meta.get("seed_c_targets", {})).items()})
    for s in pos:
        if s not in skel.site_names:
            raise UnknownNameError(
                f"seed C needs sole sites {sorted(pos)}; skeleton {skel.name!r} has "
                f"{names_hint(skel.site_names)}")
    q = np.clip(np.zeros(skel.n_dof), skel.lower, skel.upper)
    q.setflags(write=False)
    targets = {s: (np.array(p, dtype=float), np.eye(3)) for s, p in pos.items()}
    return SeedCCase(targets, q)
