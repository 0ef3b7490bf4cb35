"""Retarget a motion onto another skeleton with feedback IK and null-space retargeting.

Per frame (seed A, eqs 9f–9j):

* **effector targets** — the target's hands, feet, head and root (hips) where the source motion
  puts them: the target's own forward kinematics with every joint rotated like its source
  counterpart (:mod:`animik.retarget.align`), the root following the source hips scaled by the
  leg-length ratio, the feet held during contacts and never below the ground
  (:mod:`animik.semantics.contacts`);
* **null-space reference** ``bq`` — the same rotations fitted to the target's DoFs
  (:mod:`animik.retarget.fit`): FIK reaches the targets with the effector task and pulls the
  remaining freedom (elbow swivel, spine, fingers, twists) towards the source's joint angles
  with ``dq0 = reference_gain · (bq − q)`` projected out of the effectors' motion;
* **warm start** — the previous frame's pose and FIK filter state (``result.state``); the IK
  problem is built once and only its target positions change.

FIK projects every iterate into the joint limits, so **no output pose violates them** (the
report counts violations anyway).

Two entry points: :func:`retarget` (a whole clip, returns a :class:`~animik.motion.Motion`)
and :class:`Retargeter`, whose :meth:`Retargeter.step` solves one frame — a frame index of
the prepared clip or a source pose — with optional edits, taking and returning an explicit
:class:`RetargetState` (for interactive use: the app can call it every frame).
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..cache import cached
from ..errors import OptionError, ShapeError, SkeletonError, UnknownNameError, names_hint
from ..ik import build_problem, prepare_problem
from ..ik.tuning import load_tuning
from ..kinematics import forward_kinematics
from ..motion import Motion
from ..rigs import load_rig
from ..semantics.contacts import (
    ContactParams,
    FootState,
    OnlineContactDetector,
    detect_contacts,
    estimate_ground,
    hold_foot,
    horizontal_speed,
)
from ..skeleton import TRANSLATION, Site, Skeleton
from . import align as A
from .mapping import JointMapping, MappingSpec, build_mapping, mapping_spec, read_mapping_file
from .report import RetargetReport, effector_stats, foot_stats

ROOT_SITE = "retarget:root"
#: Held feet are kept within this fraction of the straight leg's length from the hip.
REACH_MARGIN = 0.995

#: Default IK weight of each effector role.
W_BALL = 0.05
DEFAULT_WEIGHTS: dict[str, float] = {"l_hand": 1.0, "r_hand": 1.0, "l_foot": 1.0, "r_foot": 1.0,
                                     "head": 0.5, "root": 0.3, "l_ball": W_BALL, "r_ball": W_BALL}
#: prefix of the ball sites added under a toe-less source's feet (``retarget:l_ball``)
BALL_SITE = "retarget:{}_ball"


@dataclass(frozen=True)
class RetargetOptions:
    """Options of :func:`retarget` / :class:`Retargeter` (all keyword arguments).

    Attributes:
        iterations: FIK iteration cap per frame after the first (warm-started).
        first_iterations: cap for the first frame (cold start), and for a frame whose targets
            jumped by more than ``jump`` (m) since the previous frame (a calibration frame, a
            cut in the source) and whose effectors are still farther than ``catch_up · tol``
            after ``iterations``: it keeps iterating (until converged or stalled).
        catch_up, jump: see ``first_iterations``.
        crouch_speed: m/s at which the hips come back up after being lowered to keep a held
            foot within reach (they go down at once).
        tol: effector tolerance, m (FIK's ``tol_position``; also the report's convergence).
        reference_gain: null-space gain towards the source's joint angles (1/iteration).
        null_tol: stop iterating a frame when the null-space motion is below this (rad).
        weights: ``{role: weight}`` over :data:`DEFAULT_WEIGHTS` (roles ``l_hand`` …
            ``head``, ``root``).
        effectors: roles to drive (default: every role the target has a site for).
        root_target: drive the hips position as an effector (free roots only).
        contacts: detect foot contacts and hold the feet during them.
        contact: :class:`ContactParams` (or a dict of its fields).
        source_rest: the source pose taken as its rest: ``"auto"``, ``"offsets"``,
            ``"first_frame"``, a frame index or a pose (see :mod:`animik.retarget.align`).
        ground: ``"clip"`` (the vertical root offset puts the lowest 10 % of foot heights on the
            ground), ``"rest"`` (from the rest poses, source floor at z = 0) or a number: the
            offset itself (m).
        scale: target/source length ratio (default: leg lengths).
        flat_feet: align each foot sole to sole at a clip frame where the source foot stands
            flat (:func:`animik.retarget.align.flat_foot_frames`): a flat source sole gives a
            flat target sole. False maps the ankle-to-ball bone direction as for any joint
            (which stands body95 on its toes under the Bandai Namco and Mixamo feet).
        fik: extra FIK options (``animik.ik.fik.DEFAULTS``), e.g. ``{"damping": 1e-4}``.
    """

    iterations: int = 10
    first_iterations: int = 100
    catch_up: float = 10.0
    jump: float = 0.05
    crouch_speed: float = 0.3
    tol: float = 1e-3
    reference_gain: float = 0.5
    null_tol: float = 1e-2
    weights: Mapping[str, float] = field(default_factory=dict)
    effectors: tuple[str, ...] | None = None
    root_target: bool = True
    contacts: bool = True
    contact: ContactParams = field(default_factory=ContactParams)
    source_rest: Any = "auto"
    ground: Any = "clip"
    scale: float | None = None
    flat_feet: bool = True
    fik: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_kwargs(cls, **kw: Any) -> RetargetOptions:
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(kw) - names)
        if unknown:
            raise UnknownNameError(f"unknown retarget option(s) {unknown}; options are "
                                   f"{names_hint(sorted(names), limit=30)}")
        if isinstance(kw.get("contact"), Mapping):
            c = dict(kw["contact"])
            bad = sorted(set(c) - {f.name for f in dataclasses.fields(ContactParams)})
            if bad:
                raise UnknownNameError(f"unknown contact option(s) {bad}")
            kw["contact"] = ContactParams(**c)
        if kw.get("effectors") is not None:
            kw["effectors"] = tuple(kw["effectors"])
        o = cls(**kw)
        for name in ("iterations", "first_iterations"):
            v = getattr(o, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                raise OptionError(f"{name} must be an integer >= 1, got {v!r}")
        for name in ("tol", "reference_gain", "null_tol", "catch_up", "jump", "crouch_speed"):
            v = getattr(o, name)
            if not (isinstance(v, (int, float)) and np.isfinite(v) and v > 0):
                raise OptionError(f"{name} must be a positive number, got {v!r}")
        if o.scale is not None and not (np.isfinite(o.scale) and o.scale > 0):
            raise OptionError(f"scale must be a positive number, got {o.scale!r}")
        if not (o.ground in ("clip", "rest") or isinstance(o.ground, (int, float))):
            raise OptionError(f"ground must be 'clip', 'rest' or a number (m), got {o.ground!r}")
        return o

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (used for the batch settings hash)."""
        d = dataclasses.asdict(self)
        d["weights"] = dict(sorted(dict(self.weights).items()))
        d["fik"] = {k: (v if isinstance(v, (int, float, str, bool, type(None))) else repr(v))
                    for k, v in sorted(dict(self.fik).items())}
        d["effectors"] = list(self.effectors) if self.effectors is not None else None
        sr = self.source_rest
        d["source_rest"] = sr if isinstance(sr, (str, int)) else np.asarray(sr).tolist()
        return d


@dataclass(frozen=True)
class RetargetEdits:
    """Per-frame user edits for :meth:`Retargeter.step` (all optional).

    Attributes:
        targets: ``{site: (3,)}`` replace an effector's target (m, world).
        offsets: ``{site: (3,)}`` added to an effector's target (m).
        reference: ``{dof name: value}`` override the null-space reference.
        contacts: ``{foot site: bool}`` force a foot's contact on or off.
    """

    targets: Mapping[str, Any] = field(default_factory=dict)
    offsets: Mapping[str, Any] = field(default_factory=dict)
    reference: Mapping[str, float] = field(default_factory=dict)
    contacts: Mapping[str, bool] = field(default_factory=dict)


@dataclass(frozen=True, eq=False)
class RetargetState:
    """State carried from one :meth:`Retargeter.step` to the next (immutable).

    Attributes:
        frame: the frame index solved (-1 for a pose input).
        q: ``(n_dof,)`` the solved pose.
        fik: FIK's filter state (``IKResult.state``).
        feet: :class:`~animik.semantics.contacts.FootState` per foot effector.
        contact: ``(F,)`` bool, contact flags of this frame.
        free_feet: ``(F, 3)`` the feet's free targets (virtual world), for online detection.
        targets: ``(k, 3)`` the effector targets used (solved-for) this frame.
        iterations: FIK iterations; ``converged``: every effector within ``tol``.
        crouch: how far (m) the hips were lowered this frame to keep held feet within reach.
        fk: the solver's :class:`~animik.kinematics.FKResult` at ``q`` on
            :attr:`Retargeter.solve_skeleton` (every joint frame; its sites, the target's first),
            so a caller draws the solved pose without a forward-kinematics pass; ``None`` when
            not known.
    """

    frame: int
    q: np.ndarray
    fik: Any
    feet: tuple[FootState, ...]
    contact: np.ndarray
    free_feet: np.ndarray
    targets: np.ndarray
    iterations: int = 0
    converged: bool = True
    crouch: float = 0.0
    fk: Any = field(default=None, repr=False)


@dataclass(frozen=True, eq=False)
class RetargetResult:
    """:meth:`Retargeter.run` output: the motion, its quality report and the mapping used."""

    motion: Motion
    report: RetargetReport
    mapping: JointMapping
    targets: np.ndarray  # (T, k, 3) the effector targets solved for (actual frame)


def resolve_mapping(mapping: Any) -> MappingSpec | None:
    """``None`` | :class:`MappingSpec` | a dict | a path → a :class:`MappingSpec` or None."""
    if mapping is None or isinstance(mapping, (MappingSpec, JointMapping)):
        return mapping
    if isinstance(mapping, (str, os.PathLike)):
        return read_mapping_file(mapping)
    if isinstance(mapping, Mapping):
        return mapping_spec(mapping, origin="mapping argument")
    raise OptionError(f"mapping must be None, a path, a dict or a JointMapping, got "
                     f"{type(mapping).__name__}")


def _target_skeleton(target: Any) -> Skeleton:
    if isinstance(target, Skeleton):
        return target
    if isinstance(target, (str, os.PathLike)):
        return load_rig(target)
    raise OptionError(f"target must be a Skeleton, a rig name or a rig/BVH path, got "
                     f"{type(target).__name__}")


class Retargeter:
    """Retargets a source motion (or source poses) onto a target skeleton, frame by frame.

    Args:
        source: the source :class:`~animik.motion.Motion` (its frames are prepared in one
            batch: source FK, desired rotations, reference poses, effector targets, contacts)
            or just its :class:`~animik.skeleton.Skeleton` (then :meth:`step` takes poses).
        target: the target skeleton (or a rig name / path).
        mapping: ``None`` (automatic), a mapping file path, a dict (mapping-file content), a
            :class:`MappingSpec` or a ready :class:`JointMapping`.
        fps: frame rate for pose input (default: the motion's, else 30).
        **options: :class:`RetargetOptions` fields.

    Raises:
        UnknownNameError: unknown option, joint or site name.
        FileFormatError: a malformed mapping or an unmappable skeleton.
        OptionError: bad option values. SkeletonError: no effector site to drive.
    """

    def __init__(self, source: Motion | Skeleton, target: Skeleton | str, mapping: Any = None,
                 fps: float | None = None, **options: Any):
        t_start = time.perf_counter()
        self.options = RetargetOptions.from_kwargs(**options)
        o = self.options
        self.motion = source if isinstance(source, Motion) else None
        self.source = source.skeleton if isinstance(source, Motion) else source
        if not isinstance(self.source, Skeleton):
            raise OptionError(f"source must be a Motion or a Skeleton, got {type(source).__name__}")
        self.target = _target_skeleton(target)
        self.fps = float(fps or (self.motion.fps if self.motion is not None else 30.0))
        q_clip = self.motion.q if self.motion is not None else None
        fk_clip = forward_kinematics(self.source, q_clip) if q_clip is not None and len(q_clip) \
            else None
        spec = resolve_mapping(mapping)
        if isinstance(spec, JointMapping):
            self.mapping = spec
        else:
            pre = build_mapping(self.source, self.target, spec)
            rest_q, kind = A.choose_source_rest(self.source, pre.source_roles, q_clip, o.source_rest,
                                                None if fk_clip is None else fk_clip.joint_positions)
            # classify again on the chosen rest (topology rules use the geometry)
            self.mapping = pre if kind == "offsets" else build_mapping(self.source, self.target,
                                                                        spec, rest_q)
        rest_q, kind = A.choose_source_rest(self.source, self.mapping.source_roles, q_clip,
                                            o.source_rest,
                                            None if fk_clip is None else fk_clip.joint_positions)
        flat_q = None
        if o.flat_feet and fk_clip is not None:
            frames = A.flat_foot_frames(self.source, self.mapping.source_roles,
                                        fk_clip.joint_positions, self.fps,
                                        S_clip=fk_clip.site_positions)
            flat_q = {side: np.asarray(q_clip[t]) for side, t in frames.items()}

        self.alignment = A.align(self.source, self.target, self.mapping, rest_q, kind, o.scale,
                                 flat_q)
        self._setup_effectors()
        self._params = o.contact
        self._n_in = o.contact.frames(o.contact.blend_in, self.fps)
        self._n_out = o.contact.frames(o.contact.blend_out, self.fps)
        self._online = OnlineContactDetector(o.contact, self.fps)
        self._dz = self._rest_dz()
        self._fik_opts = self._fik_options()
        self._lo = self.target.lower + 1e-9
        self._hi = self.target.upper - 1e-9
        self.clip = None
        if fk_clip is not None:
            self.clip = self._prepare(fk_clip.joint_rotations, fk_clip.joint_positions,
                                      clip=True)
        #: seconds spent building the mapping, alignment and the clip's per-frame arrays
        self.setup_seconds = time.perf_counter() - t_start

    # ------------------------------------------------------------------ setup
    def _setup_effectors(self) -> None:
        """Effector sites (adding missing ones to an internal copy of the target) and the IK
        problem built once."""
        al, tgt, o = self.alignment, self.target, self.options
        roles = dict(self.mapping.effectors)  # site -> role
        wanted = set(o.effectors) if o.effectors is not None else None
        tr = self.mapping.target_roles
        paired = {t for t, _ in self.mapping.pairs}
        extra: list[Site] = []
        have = set(roles.values())
        for role in ("l_hand", "r_hand", "l_foot", "r_foot", "head"):
            if role in have or (wanted is not None and role not in wanted):
                continue
            jn = tr.get(role)
            if jn is not None and jn in paired:
                extra.append(Site(f"retarget:{role}", jn))
                roles[f"retarget:{role}"] = role
        if wanted is not None:
            roles = {s: r for s, r in roles.items() if r in wanted}
        movable = self._movable_joints()
        free_root = not al.fixed_root and o.root_target and (wanted is None or "root" in wanted)
        # a toe-less source foot aligned sole to sole (align: tip_soles) has no toe to drive a
        # ball: a site under the target's ball, on its foot, is held on the ground like the foot
        # site under the ankle, so the sole stays flat where the source's stands flat (the
        # joint-space reference alone lets the shin's lean pitch the foot: louise's heels
        # 6-10 cm up); soft (weight 0.5), and not part of convergence
        ball_roles = {}
        fk0 = forward_kinematics(tgt, tgt.rest_q) if al.tip_soles else None
        for side in al.tip_soles if o.contacts else ():
            foot_j, ball_j = tr.get(f"{side}_foot"), tr.get(f"{side}_toe")
            foot_site = next((st for st, r in roles.items() if r == f"{side}_foot"), None)
            if foot_j is None or ball_j is None or foot_site is None:
                continue  # also: the foot not driven (effectors=...)
            f, b = tgt.joint_index(foot_j), tgt.joint_index(ball_j)
            z = fk0.site_positions[tgt.site_index(foot_site), 2] if not \
                foot_site.startswith("retarget:") else fk0.joint_positions[f, 2]
            p = np.array([*fk0.joint_positions[b, :2], z])
            off = fk0.joint_rotations[f].T @ (p - fk0.joint_positions[f])
            extra.append(Site(BALL_SITE.format(side), foot_j, tuple(off)))
            ball_roles[BALL_SITE.format(side)] = f"{side}_ball"
        roles.update(ball_roles)
        if free_root:
            # at the hip centre (align.hip_centre), where the hips are placed
            extra.append(Site(ROOT_SITE, tgt.joint_names[al.hips_t], tuple(al.hip_offset)))
        skel = tgt
        if extra:
            # one solve skeleton per target and set of added sites (animik.cache): the clips of
            # a batch share it, and with it the solver's per-skeleton kernel arrays
            made = cached(tgt, "retarget.solve_skeletons", dict)
            key = tuple((st.name, st.joint, tuple(st.offset)) for st in extra)
            skel = made.get(key)
            if skel is None:
                joints, sites = tgt.to_joints()
                skel = made[key] = Skeleton.from_joints(f"{tgt.name}+retarget", joints,
                                                        [*sites, *extra], meta=dict(tgt.meta))
        order = {"l_hand": 0, "r_hand": 1, "l_foot": 2, "r_foot": 3, "head": 4, "l_ball": 5,
                 "r_ball": 6}
        eff = [(s, r) for s, r in roles.items() if movable[skel.site_joint[skel.site_index(s)]]]
        eff.sort(key=lambda sr: (order.get(sr[1], 9), sr[0]))
        if free_root:
            eff.append((ROOT_SITE, "root"))
        if not eff:
            raise SkeletonError(f"target {tgt.name!r} has no effector site the source can drive "
                             f"(sites {list(tgt.site_names)}); give effectors in a mapping file")
        self.solve_skeleton = skel
        self.effector_sites = tuple(s for s, _ in eff)
        self.effector_roles = tuple(r for _, r in eff)
        self._site_idx = np.array([skel.site_index(s) for s in self.effector_sites])
        w = {**DEFAULT_WEIGHTS, **dict(o.weights)}
        bad = sorted(set(o.weights) - set(DEFAULT_WEIGHTS))
        if bad:
            raise UnknownNameError(f"unknown weight role(s) {bad}; roles are {list(DEFAULT_WEIGHTS)}")
        fk = forward_kinematics(skel, skel.rest_q)
        targets = {s: fk.site_positions[i] for s, i in zip(self.effector_sites, self._site_idx,
                                                           strict=True)}
        self.problem = build_problem(skel, skel.rest_q, targets,
                                     weights={s: w[r] for s, r in eff})
        self._foot_k = [i for i, r in enumerate(self.effector_roles) if r.endswith("_foot")]
        # held sites: the feet, then the balls (tip_soles); contacts, holds and RetargetState's
        # feet / contact / free_feet run over these, the crouch and the report over the feet
        self._ball_k = [i for i, r in enumerate(self.effector_roles) if r.endswith("_ball")]
        self._hold_k = self._foot_k + self._ball_k
        self._ball_foot = [self.effector_roles.index(self.effector_roles[k][0] + "_foot")
                           for k in self._ball_k]
        self._soft = (ROOT_SITE, *(self.effector_sites[i] for i in self._ball_k))
        S0 = fk.site_positions
        self.h_sole = np.array([S0[self._site_idx[i], 2] - al.target_ground for i in self._foot_k])
        self.h_hold = np.array([S0[self._site_idx[i], 2] - al.target_ground
                                for i in self._hold_k])
        # the leg's base (thigh joint) and reach (rest distance to the foot site, legs straight)
        self._leg_base = np.full(len(self._foot_k), -1, dtype=np.int64)
        self._reach = np.full(len(self._foot_k), np.inf)
        tr = self.mapping.target_roles
        for n, k in enumerate(self._foot_k):
            th = tr.get(f"{self.effector_roles[k][0]}_thigh")
            si = self._site_idx[k]
            if th is not None and skel.joint_ancestor_mask[skel.site_joint[si], skel.joint_index(th)]:
                b = skel.joint_index(th)
                self._leg_base[n] = b
                self._reach[n] = REACH_MARGIN * float(np.linalg.norm(S0[si] - fk.joint_positions[b]))
        # root carrier's translation DoFs (to lower the reference with the crouch)
        self._carrier_dz = None
        c = al.carrier
        if c >= 0 and tgt.parents[c] < 0:
            ks = [k for k in tgt.joint_dofs(c) if tgt.dof_type[k] == TRANSLATION]
            Ax = tgt.rest_rotations[c] @ tgt.dof_axis[ks].T
            self._carrier_dz = (np.array(ks), np.linalg.pinv(Ax) @ np.array([0.0, 0.0, -1.0]))

    def _movable_joints(self) -> np.ndarray:
        skel = self.target
        has = np.zeros(skel.n_joints, dtype=bool)
        has[skel.dof_joint] = True
        return (skel.joint_ancestor_mask & has[None, :]).any(axis=1)

    @property
    def _ik(self):
        """The prepared FIK solver of :attr:`problem` (built on first use, options validated
        once; per frame :meth:`step` passes only targets, reference and state)."""
        ik = getattr(self, "_prepared_ik", None)
        if ik is None or ik.problem is not self.problem:
            ik = self._prepared_ik = prepare_problem(self.problem, "fik", **self._fik_opts)
        return ik

    def _fik_options(self) -> dict[str, Any]:
        t = load_tuning(self.target)
        opts: dict[str, Any] = dict(t.options) if t is not None else {}
        opts.update(self.options.fik)
        opts["tuning"] = False
        opts["tol_position"] = self.options.tol
        opts["reference_gain"] = self.options.reference_gain
        opts["null_tol"] = self.options.null_tol
        for k in ("state", "reference", "max_iterations"):
            opts.pop(k, None)
        return opts

    def _rest_dz(self) -> float:
        g = self.options.ground
        if isinstance(g, (int, float)):
            return float(g)
        return self.alignment.rest_root_dz

    # ------------------------------------------------------------------ batch preparation
    def _prepare(self, R_src: np.ndarray, P_src: np.ndarray, clip: bool) -> dict[str, np.ndarray]:
        """Per-frame arrays from the source's world joint rotations / positions."""
        al = self.alignment
        R = A.desired_rotations(al, np.asarray(R_src))
        p_hips = A.hips_placement(al, R, P_src)
        dz = np.full(R.shape[0], self._dz)
        plane = np.array([-self._dz, 0.0, 0.0])
        dfk = A.DesiredFK(al, R, self.solve_skeleton)
        if clip and self.options.ground == "clip" and self._foot_k:
            _, S, _ = dfk.at(p_hips)
            idx = self._site_idx_target()
            feet = S[:, idx[self._foot_k]] - np.pad(self.h_sole[:, None], ((0, 0), (2, 0)))
            plane = estimate_ground(feet, horizontal_speed(feet, self.fps), self._params)
            dz = -(plane[0] + p_hips[:, :2] @ plane[1:])
        p_hips = p_hips.copy()
        p_hips[:, 2] += dz
        P, S, tvals = dfk.at(p_hips)
        bq = A.reference_pose(al, R, tvals)
        Afix, bfix = A.fixed_root_transform(al, R, p_hips)
        idx = self._site_idx_target()
        virt = np.empty((R.shape[0], len(self.effector_sites), 3))
        for i, (si, r) in enumerate(zip(idx, self.effector_roles, strict=True)):
            virt[:, i] = P[:, al.hips_t] + R[:, al.hips_t] @ al.hip_offset if r == "root" \
                else S[:, si]
        base = np.where(self._leg_base >= 0, self._leg_base, al.hips_t)
        out = {"bq": bq, "virtual": virt, "A": Afix, "b": bfix, "dz": dz, "ground": plane,
               "p_hips": p_hips, "leg_base": P[:, base]}
        out["ball_v"], out["ball_floor"] = self._ball_reference(bq)
        if clip:
            feet = virt[:, self._hold_k]
            if self.options.contacts and self._foot_k:
                h = feet[..., 2] - self.h_hold
                out["contact"] = detect_contacts(h, horizontal_speed(feet, self.fps), self.fps,
                                                 self._params)
            else:
                out["contact"] = np.zeros((R.shape[0], len(self._hold_k)), dtype=bool)
        return out

    def _ball_reference(self, bq: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For the ball sites (:func:`ball_target`): ``(T, n_balls, 3)`` the foot-to-ball
        vector of the reference pose ``bq`` (within the joint limits, so a ball target built
        on it asks for nothing the reference does not, except to flatten the sole in contact),
        and ``(T, n_balls)`` the lowest ball-above-foot height (m) a ball target may ask for:
        where the reference's foot joint is at a limit of its DoFs (body95's ankle dorsiflexes
        20°: the pirouette's and mocapbank's shins lean 35-40° forward over a flat source
        foot), the reference's own, which the ankle reaches; elsewhere −inf (on the ground)."""
        T = bq.shape[0]
        v = np.zeros((T, len(self._ball_k), 3))
        floor = np.full((T, len(self._ball_k)), -np.inf)
        if not self._ball_k:
            return v, floor
        skel = self.solve_skeleton
        S = forward_kinematics(skel, bq).site_positions
        for n, (k, kf) in enumerate(zip(self._ball_k, self._ball_foot, strict=True)):
            dofs = skel.joint_dofs(skel.site_joint[self._site_idx[k]])
            x = bq[:, dofs]
            at = np.any((x <= skel.lower[dofs] + 1e-6) | (x >= skel.upper[dofs] - 1e-6), axis=1)
            v[:, n] = S[:, self._site_idx[k]] - S[:, self._site_idx[kf]]
            floor[at, n] = v[at, n, 2]
        return v, floor

    def _site_idx_target(self) -> np.ndarray:
        """Site indices in the solve skeleton, -1 for the root (sites of desired_positions are
        the solve skeleton's: extra sites are appended after the target's)."""
        if not hasattr(self, "_sidx_cache"):
            out = []
            skel = self.solve_skeleton
            for s, r in zip(self.effector_sites, self.effector_roles, strict=True):
                out.append(-1 if r == "root" else skel.site_index(s))
            self._sidx_cache = np.array(out)
        return self._sidx_cache

    @property
    def n_frames(self) -> int:
        """Frames of the prepared clip (0 without one)."""
        return 0 if self.clip is None else int(self.clip["bq"].shape[0])

    # ------------------------------------------------------------------ per frame
    def initial_state(self) -> RetargetState | None:
        """``None``: :meth:`step` with ``state=None`` cold-starts from the reference pose."""
        return None

    def step(self, frame: int | np.ndarray, *, edits: RetargetEdits | None = None,
             state: RetargetState | None = None) -> tuple[np.ndarray, RetargetState]:
        """Solve one frame.

        Args:
            frame: a frame index of the prepared clip, or a source pose ``(n_src_dof,)``.
            edits: optional :class:`RetargetEdits`.
            state: the previous frame's state (``None``: cold start).

        Returns:
            ``(q (n_dof,), new state)``; ``q`` is within the target's limits.
        """
        o = self.options
        if isinstance(frame, (int, np.integer)) and not isinstance(frame, bool):
            if self.clip is None:
                raise OptionError("step(frame index) needs a Retargeter built from a Motion; pass "
                                 "a source pose instead")
            t = int(frame)
            if not 0 <= t < self.n_frames:
                raise OptionError(f"frame {t} out of range 0..{self.n_frames - 1}")
            c = self.clip
            bq, virt, Afix, bfix = c["bq"][t], c["virtual"][t], c["A"][t], c["b"][t]
            legs, balls = c["leg_base"][t], (c["ball_v"][t], c["ball_floor"][t])
            flags = c["contact"][t].copy()
        else:
            qs = self.source.check_q(frame, "frame")
            if qs.ndim != 1:
                raise ShapeError(f"frame must be an index or a pose of shape "
                                 f"({self.source.n_dof},), got shape {qs.shape}")
            fk = forward_kinematics(self.source, qs[None])
            c = self._prepare(fk.joint_rotations, fk.joint_positions, clip=False)
            t = -1
            bq, virt, Afix, bfix = c["bq"][0], c["virtual"][0], c["A"][0], c["b"][0]
            legs, balls = c["leg_base"][0], (c["ball_v"][0], c["ball_floor"][0])
            feet = virt[self._hold_k]
            if o.contacts and self._foot_k:
                flags = self._online.update(feet[:, 2] - self.h_hold, feet,
                                            None if state is None else state.contact,
                                            None if state is None else state.free_feet)
            else:
                flags = np.zeros(len(self._hold_k), dtype=bool)
        if edits is not None and edits.contacts:
            for site, on in edits.contacts.items():
                k = self.effector_sites.index(site) if site in self.effector_sites else -1
                if k not in self._hold_k:
                    raise UnknownNameError(f"contacts edit: {site!r} is not a foot effector; feet "
                                           f"are {[self.effector_sites[i] for i in self._hold_k]}")
                flags[self._hold_k.index(k)] = bool(on)
        prev_feet = state.feet if state is not None else tuple(FootState() for _ in self._hold_k)
        tg, bq, feet_state, drop = self._frame_targets(
            virt, bq, Afix, bfix, legs, flags, prev_feet, None if state is None else state.crouch,
            balls)
        ref = bq
        if edits is not None:
            tg, ref = self._apply_edits(edits, tg, bq)
        q0 = state.q if state is not None else ref
        # the trusted per-frame path: problem and options validated once (_ik), per frame only
        # the targets, the reference pose and the state change
        ik = self._ik
        res = ik.solve(q0, positions=tg, reference=ref, state=None if state is None else state.fik,
                       max_iterations=o.iterations if state is not None else o.first_iterations)
        iters = res.iterations
        conv = self._converged(res.error)
        if not conv and state is not None and res.reason == "max_iterations" \
                and not self._converged(res.error, o.catch_up) \
                and float(np.abs(tg - state.targets).max()) > o.jump:
            # a jump in the source (a calibration frame, a cut): keep iterating this frame
            res = ik.solve(res.q, reference=ref, state=res.state,
                           max_iterations=max(o.first_iterations - iters, 1),
                           stall_window=5, stall_rel=1e-3)
            iters += res.iterations
            conv = self._converged(res.error)
        new = RetargetState(t, res.q, res.state, tuple(feet_state), np.asarray(flags, dtype=bool),
                            virt[self._hold_k].copy(), tg, iters, conv, drop, res.fk)
        return res.q, new

    def _frame_targets(self, virt: np.ndarray, bq: np.ndarray, Afix: np.ndarray, bfix: np.ndarray,
                       legs: np.ndarray, flags: np.ndarray, prev_feet: tuple[FootState, ...],
                       prev_crouch: float | None,
                       balls: tuple[np.ndarray, np.ndarray] | None = None
                       ) -> tuple[np.ndarray, np.ndarray, list[FootState], float]:
        """One frame's effector targets ``(k, 3)`` and reference pose from its prepared arrays,
        the contact flags and the previous frame's feet and crouch (``None``: first frame):
        feet held during contacts, hips lowered to keep held feet within reach, balls on the
        ground (:func:`ball_target`; ``balls``: this frame's ``ball_v (n_balls, 3)`` and
        ``ball_floor (n_balls,)`` of :meth:`_ball_reference`). Returns
        ``(targets, reference, feet, crouch)``; depends on no solved pose, so :meth:`run`
        computes every frame's before solving them all at once."""
        o = self.options
        tg = virt.copy()
        feet_state = []
        for n, k in enumerate(self._foot_k):
            if o.contacts:
                tg[k], fs = hold_foot(bool(flags[n]), virt[k], prev_feet[n], float(self.h_sole[n]),
                                      self._n_in, self._n_out, self._params.height)
            else:
                tg[k] = virt[k]
                tg[k, 2] = max(tg[k, 2], self.h_sole[n])
                fs = prev_feet[n]
            feet_state.append(fs)
        drop = self._crouch(tg, legs, feet_state)
        if prev_crouch is not None and prev_crouch > drop:
            # come back up smoothly (a held foot released, or reach regained)
            drop = max(drop, prev_crouch - o.crouch_speed / self.fps)
        if drop > 0.0:
            held = [k for n, k in enumerate(self._foot_k) if feet_state[n].in_contact]
            body = np.ones(len(tg), dtype=bool)
            body[held] = False
            tg[body, 2] -= drop
            for n, k in enumerate(self._foot_k):  # a swing foot comes down, not through the floor
                tg[k, 2] = max(tg[k, 2], self.h_sole[n])
            if self.alignment.fixed_root:
                bfix = bfix + drop * Afix[:, 2]
            elif self._carrier_dz is not None:
                bq = bq.copy()
                bq[self._carrier_dz[0]] += drop * self._carrier_dz[1]
        nf = len(self._foot_k)
        for n, (k, kf) in enumerate(zip(self._ball_k, self._ball_foot, strict=True)):
            tg[k], fs = ball_target(bool(flags[nf + n]) and o.contacts, tg[kf], virt[k] - virt[kf],
                                    float(self.h_hold[nf + n]), prev_feet[nf + n], self._n_in,
                                    self._n_out, float(balls[1][n]))
            feet_state.append(fs)
        if self.alignment.fixed_root:
            tg = tg @ Afix.T + bfix
        return tg, bq, feet_state, drop

    def _crouch(self, tg: np.ndarray, legs: np.ndarray, feet: tuple[FootState, ...]) -> float:
        """How far the hips must come down (m) so that every held foot is within reach."""
        drop = 0.0
        for n, k in enumerate(self._foot_k):
            if not feet[n].in_contact or not np.isfinite(self._reach[n]):
                continue
            d = tg[k] - legs[n]
            r = self._reach[n]
            dxy2 = min(d[0] * d[0] + d[1] * d[1], (0.999 * r) ** 2)
            need = -d[2] - np.sqrt(r * r - dxy2)
            drop = max(drop, need)
        return float(drop)

    def _converged(self, error: Mapping[str, float], factor: float = 1.0) -> bool:
        """Every effector but the root within ``factor · tol`` (the root is a soft target: with
        the feet held on the ground it may have to give a few millimetres)."""
        tol = self.options.tol * factor * (1 + 1e-9)
        return all(e <= tol for s, e in error.items() if s not in self._soft)

    def _apply_edits(self, edits: RetargetEdits, tg: np.ndarray, bq: np.ndarray):
        for kind, table in (("targets", edits.targets), ("offsets", edits.offsets)):
            for site, val in table.items():
                if site not in self.effector_sites:
                    raise UnknownNameError(f"{kind} edit: {site!r} is not an effector; effectors "
                                           f"are {list(self.effector_sites)}")
                v = np.asarray(val, dtype=float)
                if v.shape != (3,) or not np.all(np.isfinite(v)):
                    raise ShapeError(f"{kind} edit of {site!r} must be 3 finite numbers, got {val!r}")
                i = self.effector_sites.index(site)
                tg[i] = v if kind == "targets" else tg[i] + v
        ref = bq
        if edits.reference:
            ref = bq.copy()
            for dof, val in edits.reference.items():
                ref[self.target.dof_index(dof)] = float(val)
            ref = np.clip(ref, self.target.lower, self.target.upper)
        return tg, ref

    # ------------------------------------------------------------------ whole clip
    def run(self, callback: Callable[[int, np.ndarray], None] | None = None) -> RetargetResult:
        """Retarget every frame of the prepared clip; returns motion, report and mapping.

        Without ``callback`` the frames are solved in one compiled call
        (:meth:`animik.ik.fik.PreparedFIK.solve_sequence`: the same solves as :meth:`step`
        frame by frame, bit for bit, without its per-frame Python); with one, or with FIK
        options that call does not take, frame by frame through :meth:`step`.

        Args:
            callback: ``callback(frame, q)`` after every frame (progress display).
        """
        if self.clip is None:
            raise OptionError("run() needs a Retargeter built from a Motion")
        t0 = time.perf_counter()
        T, n = self.n_frames, self.target.n_dof
        q = np.empty((T, n))
        targets = np.empty((T, len(self.effector_sites), 3))
        iters = np.zeros(T, dtype=np.int64)
        crouch = np.zeros(T)
        state = None
        ik = self._ik
        if callback is None and ik.sequence_supported:
            # the targets depend on no solved pose: all of them first, then every frame's FIK
            # in one compiled call (the same solves as step() frame by frame, without ~60 µs
            # of per-frame Python; tests/retarget/test_retarget_sequence.py)
            o, c = self.options, self.clip
            refs = np.empty((T, n))
            feet = tuple(FootState() for _ in self._hold_k)
            drop = None
            for t in range(T):
                targets[t], refs[t], feet, drop = self._frame_targets(
                    c["virtual"][t], c["bq"][t], c["A"][t], c["b"][t], c["leg_base"][t],
                    c["contact"][t], feet, drop, (c["ball_v"][t], c["ball_floor"][t]))
                crouch[t] = drop
            q, iters = ik.solve_sequence(targets, refs, iterations=o.iterations,
                                         first_iterations=o.first_iterations,
                                         tol=o.tol * 1.0 * (1 + 1e-9),
                                         catch_tol=o.tol * o.catch_up * (1 + 1e-9), jump=o.jump,
                                         skip_sites=self._soft)
        else:
            for t in range(T):
                q[t], state = self.step(t, state=state)
                targets[t] = state.targets
                iters[t] = state.iterations
                crouch[t] = state.crouch
                if callback is not None:
                    callback(t, q[t])
        elapsed = time.perf_counter() - t0 + self.setup_seconds
        report = self.report(q, targets, iters, elapsed, crouch)
        meta = {"retarget_source": self.motion.meta.get("source", self.source.name),
                "retarget_report": report.to_dict()}
        motion = Motion(self.target, q, self.motion.fps, meta=meta)
        return RetargetResult(motion, report, self.mapping, targets)

    def report(self, q: np.ndarray, targets: np.ndarray, iterations: np.ndarray,
               elapsed: float = 0.0, crouch: np.ndarray | None = None) -> RetargetReport:
        """Quality report of solved poses ``q (T, n)`` against the targets ``(T, k, 3)``
        (``crouch (T,)``: the hips lowering of each frame, :attr:`RetargetState.crouch`)."""
        skel = self.solve_skeleton
        al = self.alignment
        T = q.shape[0]
        finite = bool(np.all(np.isfinite(q)))
        qf = np.where(np.isfinite(q), q, 0.0)
        fk = forward_kinematics(skel, qf) if T else None
        ach = fk.site_positions[:, self._site_idx] if T else np.zeros((0, len(self._site_idx), 3))
        eff = effector_stats(self.effector_sites, self.effector_roles, ach, targets)
        err = np.linalg.norm(ach - targets, axis=-1)
        hard = [i for i, r in enumerate(self.effector_roles)
                if r != "root" and not r.endswith("_ball")]
        not_conv = int(np.sum(err[:, hard].max(axis=1) > self.options.tol * (1 + 1e-6))) \
            if T and hard else 0
        lo, hi = self.target.lower, self.target.upper
        excess = np.maximum(lo - q, 0.0) + np.maximum(q - hi, 0.0)
        viol = int(np.sum(excess > 1e-9))
        feet_sites = [self.effector_sites[i] for i in self._foot_k]
        fp = ach[:, self._foot_k]
        if al.fixed_root and T:
            Afix, bfix = self.clip["A"], self.clip["b"]
            if crouch is not None:
                bfix = bfix + crouch[:, None] * Afix[:, :, 2]
            fp = np.einsum("tba,tfb->tfa", Afix, fp - bfix[:, None, :])  # virtual world
        flags = self.clip["contact"][:, :len(feet_sites)] if self.clip is not None \
            else np.zeros((T, len(feet_sites)), bool)
        feet = foot_stats(feet_sites, fp, flags, self.h_sole)
        src = self.motion.meta.get("source", self.source.name) if self.motion is not None \
            else self.source.name
        return RetargetReport(
            source=str(src), target=self.target.name, frames=T, fps=self.fps, effectors=eff,
            feet=feet, limit_violations=viol, max_limit_excess=float(excess.max()) if T else 0.0,
            frames_not_converged=not_conv, tolerance_m=self.options.tol,
            mean_iterations=float(iterations.mean()) if T else 0.0, finite=finite,
            scale=al.scale, root_offset_z_m=float(np.mean(self.clip["dz"])) if self.clip else self._dz,
            source_rest=al.source_rest_kind, mapping=self.mapping.to_dict(), time_s=elapsed,
            frames_per_second=T / elapsed if elapsed > 0 else 0.0)


def ball_target(contact: bool, foot: np.ndarray, v: np.ndarray, h_ball: float, state: FootState,
                n_in: int, n_out: int, floor: float = -np.inf) -> tuple[np.ndarray, FootState]:
    """The target of a ball site (``BALL_SITE``) for one frame, and the next state.

    The ball rides on the foot: its target is the foot's target plus the desired foot-to-ball
    vector ``v`` (the source's, rigid on the target's foot, so the two targets are reachable
    together and the ball does not pull the foot off its own target), turned about
    the horizontal axis so that the ball is **on the ground** (``z = h_ball``) while it is in
    contact, and never below it: a flat source sole holds the target sole flat, a source heel
    off (the foot site lifted by :func:`~animik.semantics.contacts.hold_foot`) pitches it
    about the ball. The change of height is eased in / out over ``n_in`` / ``n_out`` frames.

    Args:
        contact: the ball is in contact on this frame (its own detection: low and slow).
        foot: ``(3,)`` the foot site's target this frame; ``v``: ``(3,)`` desired ball − foot.
        h_ball: the ball site's height on a flat sole (m); ``state``: the previous frame's
            (``last[0]`` the vertical offset given, ``blend_in`` / ``blend_out`` frames left).
        floor: the lowest ball-above-foot offset to ask for (m): what the ankle reaches where
            its limits stop a flat sole (``Retargeter._ball_floor``).
    """
    d = float(np.linalg.norm(v))
    free = max(float(v[2]), h_ball - float(foot[2]))  # the source's pitch, above the ground
    flat = max(h_ball - float(foot[2]), floor)
    free = max(free, floor)
    left_in, left_out = state.blend_in, state.blend_out
    prev = state.last[0] if state.last is not None else free
    if contact:
        if not state.in_contact:
            left_in, left_out = n_in, 0
        dz = flat
        if left_in > 0:
            w = _smoothstep(left_in / (n_in + 1.0))
            dz = max(flat + (prev - flat) * w, flat)
            left_in -= 1
    else:
        if state.in_contact:
            left_out, left_in = n_out, 0
        dz = free
        if left_out > 0:
            w = _smoothstep(left_out / (n_out + 1.0))
            dz = max(free + (prev - free) * w, flat)
            left_out -= 1
    dz = float(np.clip(dz, -d, d))
    h = np.array([v[0], v[1]])
    nh = float(np.linalg.norm(h))
    h = h / nh if nh > 1e-9 else np.array([1.0, 0.0])
    out = foot + np.array([*(h * np.sqrt(max(d * d - dz * dz, 0.0))), dz])
    return out, FootState(contact, state.anchor, (dz, 0.0, 0.0), left_in, left_out)


def _smoothstep(w: float) -> float:
    return w * w * (3.0 - 2.0 * w)


def retarget(source: Motion, target: Skeleton | str, mapping: Any = None, **options: Any) -> Motion:
    """Retarget a motion onto another skeleton.

    Args:
        source: the source motion (e.g. :func:`animik.io.bvh.read_bvh`).
        target: the target skeleton (or a built-in rig name / rig or BVH path).
        mapping: ``None`` (automatic joint mapping), a mapping file (TOML/JSON) path, its
            content as a dict, or a :class:`~animik.retarget.mapping.JointMapping`.
        **options: :class:`RetargetOptions` fields (``iterations``, ``tol``, ``contacts``,
            ``weights``, ``source_rest``, ``ground``, ``scale``, ``fik``, …).

    Returns:
        A :class:`~animik.motion.Motion` on ``target`` with the source's frame rate; its
        ``meta["retarget_report"]`` holds the quality report (:meth:`RetargetReport.to_dict`).
        Use :class:`Retargeter` (``.run()``) for the report object and the mapping.

    Raises:
        UnknownNameError: unknown option / joint / site names.
        FileFormatError: malformed mapping file, or skeletons that cannot be mapped.
        OptionError: bad option values. ShapeError: an empty motion.
    """
    if not isinstance(source, Motion):
        raise OptionError(f"source must be a Motion, got {type(source).__name__}")
    if source.n_frames == 0:
        raise ShapeError("source motion has no frames")
    return Retargeter(source, target, mapping, **options).run().motion


__all__ = ["DEFAULT_WEIGHTS", "ROOT_SITE", "RetargetEdits", "RetargetOptions", "RetargetResult",
           "RetargetState", "Retargeter", "retarget"]
