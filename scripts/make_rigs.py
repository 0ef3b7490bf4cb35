#!/usr/bin/env python
"""Build animik's built-in rigs and write them to ``assets/rigs/*.toml``.

    python scripts/make_rigs.py            # (re)write assets/rigs/{fig2,body95,wheeled20,biped12}.toml
    python scripts/make_rigs.py --check    # exit 1 if the committed files differ from what this builds
    python scripts/make_rigs.py --out DIR  # write elsewhere

The rigs are built here, in code: left/right symmetry by mirroring (never typed twice) and the
anthropometric tables written out below with their citations. docs/rigs.md describes the
results. All frames at the zero pose are aligned with the world (x forward, y left, z up) except
the thumbs, so joint positions are given in world coordinates and converted to parent offsets.

Degrees appear here only as ``*_deg`` literals (joint-limit tables); they are converted once.
"""

from __future__ import annotations

import argparse
import math
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from animik.io._atomic import atomic_write
from animik.io.rigfile import dumps_rig
from animik.kinematics import forward_kinematics
from animik.skeleton import Dof, Joint, Site, Skeleton

ROOT = Path(__file__).resolve().parents[1]
RIG_DIR = ROOT / "assets" / "rigs"
MIRROR = np.diag([1.0, -1.0, 1.0])  # reflection y -> -y (left <-> right)
EX, EY, EZ = (1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0)
NEG_X, NEG_Y, NEG_Z = (-1.0, 0.0, 0.0), (0.0, -1.0, 0.0), (0.0, 0.0, -1.0)
TISSUE_DENSITY = 1100.0  # kg/m^3, Dempster (1955) segment densities are 1.05-1.16 g/cm^3

# =====================================================================================
# Anthropometric tables
# =====================================================================================

# Drillis & Contini (1966), "Body segment parameters", Tech. Rep. 1166.03, New York Univ., as
# drawn in Winter (2009), Biomechanics and Motor Control of Human Movement, 4th ed., Fig. 4.1:
# heights above the floor as fractions of stature H.
HEIGHT_FRACTION = {
    "ankle": 0.039,      # ankle joint centre
    "knee": 0.285,       # knee joint centre
    "hip": 0.530,        # hip joint (greater trochanter level)
    "shoulder": 0.818,   # shoulder (glenohumeral) level
    "eye": 0.936,
}
HAND_LENGTH_FRACTION = 0.108  # wrist crease to tip of the middle finger (same figure)
FOOT_WIDTH_FRACTION = 0.055   # same figure

# de Leva (1996), "Adjustments to Zatsiorsky-Seluyanov's segment inertia parameters",
# J. Biomech. 29(9):1223-1230, Table 4 (males; mean stature 1741 mm, mass 73.0 kg) and Table 1
# (segment lengths, mm). Per segment: origin and other end landmark, length (mm), mass fraction
# of body mass, COM position from the origin as a fraction of the length, radii of gyration as
# fractions of the length about the sagittal (antero-posterior, x), transverse (medio-lateral,
# y) and longitudinal axes.
DE_LEVA_STATURE_MM = 1741.0


@dataclass(frozen=True)
class DeLeva:
    origin: str
    other: str
    length_mm: float
    mass: float
    com: float
    r_sag: float
    r_trans: float
    r_long: float


DE_LEVA = {
    "head": DeLeva("VERT", "CERV", 242.9, 0.0694, 0.5002, 0.303, 0.315, 0.261),
    "upper_trunk": DeLeva("SUPR", "XYPH", 170.7, 0.1596, 0.2999, 0.716, 0.454, 0.659),
    "middle_trunk": DeLeva("XYPH", "OMPH", 215.5, 0.1633, 0.4502, 0.482, 0.383, 0.468),
    "lower_trunk": DeLeva("OMPH", "MIDH", 145.7, 0.1117, 0.6115, 0.615, 0.551, 0.587),
    "upper_arm": DeLeva("SJC", "EJC", 281.7, 0.0271, 0.5772, 0.285, 0.269, 0.158),
    "forearm": DeLeva("EJC", "WJC", 268.9, 0.0162, 0.4574, 0.276, 0.265, 0.121),
    "hand": DeLeva("WJC", "MET3", 86.2, 0.0061, 0.7900, 0.628, 0.513, 0.401),
    "thigh": DeLeva("HJC", "KJC", 422.2, 0.1416, 0.4095, 0.329, 0.329, 0.149),
    "shank": DeLeva("KJC", "AJC", 434.0, 0.0433, 0.4395, 0.251, 0.246, 0.102),
    "foot": DeLeva("HEEL", "TTIP", 258.1, 0.0137, 0.4415, 0.257, 0.245, 0.124),
}
DE_LEVA_VERT_MIDG_MM = 203.3  # vertex to mid-gonion (head joint height), Table 1

# Buchholz, Armstrong & Goldstein (1992), "Anthropometric data for describing the kinematics of
# the human hand", Ergonomics 35(3):261-273: segment lengths (joint centre to joint centre, the
# last one to the tip) as fractions of hand length. Thumb: metacarpal, proximal, distal.
# Fingers: metacarpal, proximal, middle, distal.
BUCHHOLZ = {
    "thumb": (0.251, 0.196, 0.158),
    "index": (0.374, 0.265, 0.143, 0.097),
    "middle": (0.373, 0.277, 0.170, 0.108),
    "ring": (0.336, 0.259, 0.165, 0.107),
    "little": (0.295, 0.206, 0.117, 0.093),
}
# Phalanx radii (m) for the finger cylinders (half the typical adult male finger breadths).
FINGER_RADII = {"thumb": (0.012, 0.0105, 0.0095), "index": (0.0095, 0.0085, 0.0075),
                "middle": (0.0095, 0.0085, 0.0075), "ring": (0.009, 0.008, 0.007),
                "little": (0.008, 0.007, 0.0065)}
FINGER_ACROSS = {"index": 0.03, "middle": 0.01, "ring": -0.01, "little": -0.03}  # m, +x = thumb side

# Joint ranges of motion in degrees: AAOS (1965), "Joint motion: method of measuring and
# recording", as tabulated by Norkin & White, Measurement of Joint Motion (5th ed., Appendix A);
# spinal totals split by region after White & Panjabi (1990), Clinical Biomechanics of the Spine
# (2nd ed.), and Kapandji, The Physiology of the Joints, where AAOS gives no value (clavicle,
# thumb CMC/MCP abduction, finger MCP deviation). Positive directions: see docs/rigs.md.
ROM_DEG = {
    # spine: (flexion, extension, lateral bend each side, axial rotation each side)
    "lumbar": (35, 12, 15, 10),
    "lower_thorax": (25, 8, 12, 15),
    "upper_thorax": (20, 5, 8, 20),           # thoracolumbar totals 80 / 25 / 35 / 45 (AAOS)
    "neck": (30, 25, 40, 30),
    "head": (15, 20, 5, 30),                  # cervical totals 45 / 45 / 45 / 60 (AAOS)
    "clavicle": {"elevation": (-10, 40), "protraction": (-25, 30)},
    # shoulder from the T-pose: horizontal flexion 135 / extension 45; elevation above T 90 and
    # down to the side 90 (abduction 0-180); internal rotation 70, external 90
    "shoulder": {"horizontal_flexion": (-45, 135), "abduction": (-90, 90), "rotation": (-90, 70)},
    "elbow_flexion": (0, 150),
    "forearm_pronation": (-80, 80),            # supination 80, pronation 80
    "wrist": {"flexion": (-70, 80), "deviation": (-30, 20)},   # ext 70/flex 80; ulnar 30/radial 20
    "thumb": {"cmc_abduction": (-10, 70), "cmc_flexion": (-20, 40), "mcp_abduction": (-10, 10),
              "mcp_flexion": (0, 50), "ip_flexion": (-20, 80)},
    "finger": {"mcp_flexion": (-45, 90), "mcp_deviation": (-20, 20), "pip_flexion": (0, 100),
               "dip_flexion": (-10, 90)},
    "hip": {"flexion": (-30, 120), "abduction": (-30, 45), "rotation": (-45, 45)},
    "knee_flexion": (0, 135),
    "ankle": {"dorsiflexion": (-50, 20), "inversion": (-15, 35)},
    "toe_extension": (-45, 70),
}

# =====================================================================================
# Mass properties (world frame at the zero pose)
# =====================================================================================


@dataclass(frozen=True)
class Mass:
    """A rigid body: mass (kg), COM (m) and inertia about the COM (kg m^2), world axes."""

    m: float
    c: np.ndarray
    inertia: np.ndarray

    def mirrored(self) -> Mass:
        return Mass(self.m, MIRROR @ self.c, MIRROR @ self.inertia @ MIRROR)


def combine(*parts: Mass) -> Mass:
    m = sum(p.m for p in parts)
    c = sum(p.m * p.c for p in parts) / m
    inertia = np.zeros((3, 3))
    for p in parts:
        d = p.c - c
        inertia += p.inertia + p.m * (d @ d * np.eye(3) - np.outer(d, d))
    return Mass(m, c, inertia)


def subtract(whole: Mass, *parts: Mass, what: str) -> Mass:
    """The remainder of ``whole`` once ``parts`` are cut out (exact: combine(rest, *parts) ==
    whole)."""
    mp = sum(p.m for p in parts)
    m = whole.m - mp
    c = (whole.m * whole.c - sum(p.m * p.c for p in parts)) / m
    inertia = whole.inertia.copy()
    d = whole.c - c
    inertia -= m * (d @ d * np.eye(3) - np.outer(d, d))
    for p in parts:
        d = p.c - whole.c
        inertia -= p.inertia + p.m * (d @ d * np.eye(3) - np.outer(d, d))
    if m <= 0 or np.min(np.linalg.eigvalsh(inertia)) <= 0:
        raise ValueError(f"{what}: cutting out the parts leaves no physical body")
    return Mass(m, c, inertia)


def principal(m: float, c, radii_xyz) -> Mass:
    """Body with principal axes along the world axes and the given radii of gyration (m)."""
    return Mass(m, np.asarray(c, float), m * np.diag(np.square(radii_xyz)))


def cylinder(p0, p1, radius: float, density: float = TISSUE_DENSITY) -> Mass:
    p0, p1 = np.asarray(p0, float), np.asarray(p1, float)
    axis = p1 - p0
    length = float(np.linalg.norm(axis))
    m = density * math.pi * radius**2 * length
    u = axis / length
    i_ax, i_tr = 0.5 * m * radius**2, m * (3 * radius**2 + length**2) / 12.0
    return Mass(m, 0.5 * (p0 + p1), i_tr * np.eye(3) + (i_ax - i_tr) * np.outer(u, u))


def box(center, size, mass: float | None = None, density: float = TISSUE_DENSITY) -> Mass:
    sx, sy, sz = size
    m = density * sx * sy * sz if mass is None else mass
    return Mass(m, np.asarray(center, float),
                m / 12.0 * np.diag([sy**2 + sz**2, sx**2 + sz**2, sx**2 + sy**2]))


def de_leva(seg: str, body_mass: float, origin, other, axes: str) -> Mass:
    """de Leva segment between two landmarks (world points). ``axes`` names the world axes that
    carry the sagittal, transverse and longitudinal radii, e.g. ``"xyz"`` for a vertical
    segment."""
    t = DE_LEVA[seg]
    origin, other = np.asarray(origin, float), np.asarray(other, float)
    length = float(np.linalg.norm(other - origin))
    radii = np.zeros(3)
    for r, ax in zip((t.r_sag, t.r_trans, t.r_long), axes, strict=True):
        radii["xyz".index(ax)] = r * length
    return principal(t.mass * body_mass, origin + t.com * (other - origin), radii)


# =====================================================================================
# A small rig builder: joints at world positions (zero pose), mirrored by code
# =====================================================================================


@dataclass
class D:
    """A DoF spec: rotation limits in degrees, translation limits in metres."""

    name: str
    axis: tuple[float, float, float]
    lower: float = -math.inf
    upper: float = math.inf
    rest: float = 0.0
    translation: bool = False


@dataclass
class J:
    name: str
    parent: str | None
    p: np.ndarray                      # world position at the zero pose
    dofs: list[D]
    rot: np.ndarray = field(default_factory=lambda: np.eye(3))   # world rotation at zero pose
    mass: Mass | None = None


def _mirror_name(s: str) -> str:
    return "r_" + s[2:] if s.startswith("l_") else s


def _mirror_dof(d: D, anatomical: bool) -> D:
    a = np.asarray(d.axis)
    if d.translation:  # a translation along M a mirrors a translation along a
        return D(_mirror_name(d.name), tuple(MIRROR @ a), d.lower, d.upper, d.rest, True)
    if anatomical:
        # A rotation by t about a mirrors into a rotation by t about -M a: the same value gives
        # the mirrored motion, so both sides share limits (positive = flexion on both sides).
        return D(_mirror_name(d.name), tuple(float(x) + 0.0 for x in -MIRROR @ a),
                 d.lower, d.upper, d.rest)
    # Robot convention: same axis on both sides; about x or z the motion mirrors with -t.
    if np.allclose(MIRROR @ a, -a):
        return D(_mirror_name(d.name), d.axis, d.lower, d.upper, d.rest)
    return D(_mirror_name(d.name), d.axis, -d.upper, -d.lower, -d.rest + 0.0)


class Rig:
    def __init__(self, name: str, anatomical: bool):
        self.name = name
        self.anatomical = anatomical
        self.joints: dict[str, J] = {}
        self.sites: list[tuple[str, str, np.ndarray, np.ndarray]] = []

    def joint(self, name, parent, p, dofs=(), rot=None, mass=None) -> J:
        jt = J(name, parent, np.asarray(p, float), list(dofs),
               np.eye(3) if rot is None else np.asarray(rot, float), mass)
        self.joints[name] = jt
        return jt

    def site(self, name, joint, p, rot=None) -> None:
        self.sites.append((name, joint, np.asarray(p, float),
                           np.eye(3) if rot is None else np.asarray(rot, float)))

    def mirror_left(self) -> None:
        """Add the r_ twin of every l_ joint and site."""
        for jt in list(self.joints.values()):
            if jt.name.startswith("l_"):
                self.joint(_mirror_name(jt.name), _mirror_name(jt.parent), MIRROR @ jt.p,
                           [_mirror_dof(d, self.anatomical) for d in jt.dofs],
                           MIRROR @ jt.rot @ MIRROR, None if jt.mass is None else jt.mass.mirrored())
        for name, joint, p, rot in list(self.sites):
            if name.startswith("l_"):
                self.site(_mirror_name(name), _mirror_name(joint), MIRROR @ p, MIRROR @ rot @ MIRROR)

    def order(self) -> list[str]:
        """Joints depth-first, left before right (from_joints keeps sibling order)."""
        def key(n):
            return (1 if n.startswith("r_") else 0, list(self.joints).index(_mirror_name(n)))
        return sorted(self.joints, key=key)

    def skeleton(self, meta: dict) -> Skeleton:
        # Offsets, COMs and masses are rounded (to the micrometre / 6 significant digits) so the
        # TOML stays readable; rotations are kept exact so they stay orthonormal.
        joints = []
        for name in self.order():
            jt = self.joints[name]
            if jt.parent is None:
                offset, rest_rot = jt.p, jt.rot
            else:
                par = self.joints[jt.parent]
                offset = par.rot.T @ (jt.p - par.p)
                rest_rot = par.rot.T @ jt.rot
            dofs = [
                Dof(d.name, "t" if d.translation else "r",
                    d.lower if d.translation else _rad(d.lower),
                    d.upper if d.translation else _rad(d.upper),
                    d.rest if d.translation else _rad(d.rest), tuple(d.axis))
                for d in jt.dofs
            ]
            mass = com = inertia = None
            if jt.mass is not None:
                mass = _sig(jt.mass.m)
                com = _round_vec(jt.rot.T @ (jt.mass.c - jt.p))
                inertia = jt.rot.T @ jt.mass.inertia @ jt.rot
                inertia = 0.5 * (inertia + inertia.T)
                # drop round-off left by the parallel-axis sums (products of ~1e-19)
                inertia[np.abs(inertia) < 1e-12 * np.abs(inertia).max()] = 0.0
                inertia = np.vectorize(_sig)(inertia)
            joints.append(Joint(name, jt.parent, _round_vec(offset),
                                dofs, None if np.allclose(rest_rot, np.eye(3), rtol=0, atol=1e-14)
                                else rest_rot,
                                mass, com, inertia))
        sites = []
        for name, joint, p, rot in self.sites:
            jt = self.joints[joint]
            off = jt.rot.T @ (p - jt.p)
            srot = jt.rot.T @ rot
            sites.append(Site(name, joint, _round_vec(off),
                              None if np.allclose(srot, np.eye(3), atol=1e-15) else srot))
        return Skeleton.from_joints(self.name, joints, sites, meta=meta)


def _rad(deg: float) -> float:
    return float(np.radians(deg))


def _sig(x: float, digits: int = 6) -> float:
    """Round to significant digits, so the TOML files stay readable."""
    return float(f"{float(x):.{digits}g}") + 0.0


def _round_vec(v) -> tuple[float, ...]:
    return tuple(round(float(x), 6) + 0.0 for x in v)


def rot_z(deg: float) -> np.ndarray:
    c, s = math.cos(_rad(deg)), math.sin(_rad(deg))
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


# =====================================================================================
# The human body model shared by body95 and fig2
# =====================================================================================

STATURE = 1.75    # m
BODY_MASS = 75.0  # kg


@dataclass
class Human:
    """Landmarks (world, T-pose) and segment masses of the 1.75 m / 75 kg adult."""

    pts: dict[str, np.ndarray]
    seg: dict[str, Mass]
    lengths: dict[str, float]


def human_model(H: float = STATURE, M: float = BODY_MASS) -> Human:
    s = H / (DE_LEVA_STATURE_MM / 1000.0)          # de Leva lengths scaled to this stature
    L = {k: t.length_mm / 1000.0 * s for k, t in DE_LEVA.items()}
    z = {k: f * H for k, f in HEIGHT_FRACTION.items()}
    # Trunk landmarks: de Leva's subdivision (OMPH, XYPH) of the hip-to-suprasternale span.
    trunk = z["shoulder"] - z["hip"]
    parts = DE_LEVA["lower_trunk"].length_mm, DE_LEVA["middle_trunk"].length_mm, \
        DE_LEVA["upper_trunk"].length_mm
    z_omph = z["hip"] + trunk * parts[0] / sum(parts)
    z_xyph = z_omph + trunk * parts[1] / sum(parts)
    z_midg = H - DE_LEVA_VERT_MIDG_MM / 1000.0 * s
    z_cerv = H - L["head"]
    hl = HAND_LENGTH_FRACTION * H
    y_sh = 0.18   # glenohumeral centres: biacromial breadth ~0.40 m less ~0.02 m a side
    y_hip = 0.09  # hip joint centres 0.36 x inter-ASIS breadth (~0.25 m) from the midline
    r6 = lambda v: np.round(np.asarray(v, float), 6) + 0.0  # noqa: E731
    P = {
        "pelvis": r6([0, 0, z["hip"]]),
        "lumbar": r6([0, 0, z_omph]),
        "lower_thorax": r6([0, 0, 0.5 * (z_omph + z_xyph)]),
        "upper_thorax": r6([0, 0, z_xyph]),
        "neck": r6([0, 0, z["shoulder"]]),
        "head": r6([0, 0, z_midg]),
        "head_site": r6([0, 0, z["eye"]]),
        "head_top": r6([0, 0, H]),
        "l_clavicle": r6([0, 0.02, z["shoulder"]]),
        "l_shoulder": r6([0, y_sh, z["shoulder"]]),
        "l_elbow": r6([0, y_sh + L["upper_arm"], z["shoulder"]]),
        "l_wrist": r6([0, y_sh + L["upper_arm"] + L["forearm"], z["shoulder"]]),
        "l_hip": r6([0, y_hip, z["hip"]]),
        "l_knee": r6([0, y_hip, z["knee"]]),
        "l_ankle": r6([0, y_hip, z["ankle"]]),
        "l_foot_site": r6([0, y_hip, 0]),
    }
    W = P["l_wrist"]
    P["l_hand_site"] = r6(W + [0, 0.5 * L["hand"], 0])
    carpal = L["hand"] - BUCHHOLZ["middle"][0] * hl   # wrist centre to the metacarpal bases
    for f in ("index", "middle", "ring", "little"):
        mc, p1, p2, p3 = (r * hl for r in BUCHHOLZ[f])
        base = W + [FINGER_ACROSS[f], carpal + mc, 0]
        P[f"l_{f}_mcp"] = r6(base)
        P[f"l_{f}_pip"] = r6(base + [0, p1, 0])
        P[f"l_{f}_dip"] = r6(base + [0, p1 + p2, 0])
        P[f"l_{f}_tip"] = r6(base + [0, p1 + p2 + p3, 0])
    # Thumb: the CMC joint on the radial side of the carpus; the thumb rests 45 deg from the
    # fingers in the palm plane (its own frame is turned by Rz(-45 deg): local +y along it).
    thumb_rot = rot_z(-45.0)
    mc, p1, p2 = (r * hl for r in BUCHHOLZ["thumb"])
    cmc = W + [0.02, 0.02, -0.01]
    P["l_thumb_cmc"] = r6(cmc)
    P["l_thumb_mcp"] = r6(cmc + thumb_rot @ [0, mc, 0])
    P["l_thumb_ip"] = r6(cmc + thumb_rot @ [0, mc + p1, 0])
    P["l_thumb_tip"] = r6(cmc + thumb_rot @ [0, mc + p1 + p2, 0])
    # Foot: heel 0.05 m behind the ankle, toe tip one de Leva foot length ahead of the heel;
    # metatarsophalangeal joints at 73 % of the foot length.
    heel_x = -0.05
    P["l_heel"] = r6([heel_x, y_hip, 0])
    P["l_toe_tip"] = r6([heel_x + L["foot"], y_hip, 0])
    P["l_toe"] = r6([heel_x + 0.73 * L["foot"], y_hip, 0.025])

    seg: dict[str, Mass] = {}
    # trunk, head (vertical: sagittal x, transverse y, longitudinal z)
    seg["lower_trunk"] = de_leva("lower_trunk", M, P["lumbar"], P["pelvis"], "xyz")
    mid = de_leva("middle_trunk", M, P["upper_thorax"], P["lumbar"], "xyz")
    # The middle trunk is cut at mid-height into two equal halves that together keep its mass,
    # COM and inertia exactly: halves' COMs a quarter length either side of the segment COM.
    q = 0.25 * (P["upper_thorax"] - P["lumbar"])
    half = 0.5 * mid.m
    i_half = 0.5 * (mid.inertia - 2 * half * ((q @ q) * np.eye(3) - np.outer(q, q)))
    seg["lumbar"] = Mass(half, mid.c - q, i_half)
    seg["lower_thorax"] = Mass(half, mid.c + q, i_half)
    upper = de_leva("upper_trunk", M, P["neck"], P["upper_thorax"], "xyz")
    seg["l_clavicle"] = cylinder(P["l_clavicle"], P["l_shoulder"], 0.03)
    seg["upper_thorax"] = subtract(upper, seg["l_clavicle"], seg["l_clavicle"].mirrored(),
                                   what="upper trunk minus clavicles")
    head = de_leva("head", M, P["head_top"], [0, 0, z_cerv], "xyz")
    # The neck (suprasternal level to the head joint) is a tissue cylinder whose mass is taken
    # from de Leva's head+neck segment; the head keeps that segment's COM and radii.
    seg["neck"] = cylinder(P["neck"], P["head"], 0.05)
    seg["head"] = Mass(head.m - seg["neck"].m, head.c,
                       head.inertia * (head.m - seg["neck"].m) / head.m)
    # arm in the T-pose, palms down: long axis y; the upper arm keeps its anatomical x/z axes,
    # the forearm and hand are pronated 90 deg (palm normal = z carries the sagittal radius).
    seg["l_upper_arm"] = de_leva("upper_arm", M, P["l_shoulder"], P["l_elbow"], "xzy")
    seg["l_forearm"] = de_leva("forearm", M, P["l_elbow"], P["l_wrist"], "zxy")
    hand = de_leva("hand", M, W, W + [0, L["hand"], 0], "zxy")
    fingers = []
    for f in ("index", "middle", "ring", "little"):
        ends = [P[f"l_{f}_{k}"] for k in ("mcp", "pip", "dip", "tip")]
        for k, (a, b, r) in enumerate(zip(ends[:-1], ends[1:], FINGER_RADII[f], strict=True)):
            seg[f"l_{f}_{('mcp', 'pip', 'dip')[k]}"] = cylinder(a, b, r)
            fingers.append(seg[f"l_{f}_{('mcp', 'pip', 'dip')[k]}"])
    ends = [P[f"l_thumb_{k}"] for k in ("cmc", "mcp", "ip", "tip")]
    for k, (a, b, r) in enumerate(zip(ends[:-1], ends[1:], FINGER_RADII["thumb"], strict=True)):
        seg[f"l_thumb_{('cmc', 'mcp', 'ip')[k]}"] = cylinder(a, b, r)
        fingers.append(seg[f"l_thumb_{('cmc', 'mcp', 'ip')[k]}"])
    seg["l_palm"] = subtract(hand, *fingers, what="hand minus fingers")
    # legs (vertical)
    seg["l_thigh"] = de_leva("thigh", M, P["l_hip"], P["l_knee"], "xyz")
    seg["l_shank"] = de_leva("shank", M, P["l_knee"], P["l_ankle"], "xyz")
    # foot: long axis x; sagittal radius about the vertical, transverse about y. Its line of
    # centres is put at half the ankle height.
    lift = np.array([0, 0, 0.5 * z["ankle"]])
    foot = de_leva("foot", M, P["l_heel"] + lift, P["l_toe_tip"] + lift, "zyx")
    toe_len = P["l_toe_tip"][0] - P["l_toe"][0]
    width = FOOT_WIDTH_FRACTION * H
    seg["l_toes"] = box(P["l_toe"] + [0.5 * toe_len, 0, -0.0125 + 0.0], (toe_len, 0.9 * width, 0.025))
    seg["l_foot"] = subtract(foot, seg["l_toes"], what="foot minus toes")
    lengths = {"hand": hl, "palm": L["hand"], "foot": L["foot"], "foot_width": width,
               "heel_x": heel_x, "upper_arm": L["upper_arm"], "forearm": L["forearm"]}
    return Human(P, seg, lengths)


def _spine_dofs(j: str) -> list[D]:
    flex, ext, lat, rot = ROM_DEG[j]
    return [D(f"{j}_flexion", EY, -ext, flex),       # + bends forward
            D(f"{j}_lateral", NEG_X, -lat, lat),     # + bends to the left
            D(f"{j}_rotation", EZ, -rot, rot)]       # + turns to the left


def _shoulder_dofs() -> list[D]:
    sh = ROM_DEG["shoulder"]
    # zxy: horizontal swing, elevation, twist about the arm (gimbal lock with the arm straight
    # up or down, at the ends of the elevation range)
    return [D("l_shoulder_horizontal_flexion", NEG_Z, *sh["horizontal_flexion"]),
            D("l_shoulder_abduction", EX, *sh["abduction"]),
            D("l_shoulder_rotation", EY, *sh["rotation"])]          # + internal


def _hip_dofs() -> list[D]:
    hp = ROM_DEG["hip"]
    return [D("l_hip_flexion", NEG_Y, *hp["flexion"]),
            D("l_hip_abduction", EX, *hp["abduction"]),
            D("l_hip_rotation", NEG_Z, *hp["rotation"])]            # + internal


def _root_dofs(j: str) -> list[D]:
    return [D(f"{j}_tx", EX, translation=True), D(f"{j}_ty", EY, translation=True),
            D(f"{j}_tz", EZ, translation=True),
            D(f"{j}_rz", EZ), D(f"{j}_ry", EY), D(f"{j}_rx", EX)]


HUMAN_SOURCES = """\
Segment lengths: stature fractions of Drillis & Contini (1966) as given by Winter (2009),
  Biomechanics and Motor Control of Human Movement, Fig. 4.1 (ankle 0.039 H, knee 0.285 H,
  hip 0.530 H, shoulder 0.818 H, eyes 0.936 H, hand 0.108 H, foot width 0.055 H); arm, foot,
  head and trunk-subdivision lengths of de Leva (1996) Table 1 scaled to 1.75 m; finger
  segments of Buchholz, Armstrong & Goldstein (1992), Ergonomics 35:261.
Masses, centres of mass, radii of gyration: de Leva (1996), J. Biomech. 29:1223, Table 4
  (males, adjusting Zatsiorsky-Seluyanov), body mass 75 kg. Fingers, thumb, toes, neck and
  clavicles are uniform tissue solids (1100 kg/m^3) cut out of the de Leva hand, foot,
  head and upper trunk so the totals are kept.
Joint limits: AAOS (1965) ranges of motion as tabulated by Norkin & White; spinal totals split
  by region after White & Panjabi (1990); Kapandji where AAOS gives none."""


def _human_meta(hm: Human, description: str, head_joint: tuple[str, str],
                foot_joint: str) -> dict:
    """``head_joint``: (joint name, landmark key of its position)."""
    P, ln = hm.pts, hm.lengths
    soles = {}
    for side in ("l", "r"):
        joint = f"{side}_{foot_joint}"
        sign = 1.0 if side == "l" else -1.0
        jp = P[f"l_{foot_joint}"] * [1.0, sign, 1.0]
        centre = np.array([ln["heel_x"] + 0.5 * ln["foot"], sign * P["l_ankle"][1], 0.0]) - jp
        soles[f"{side}_foot"] = {"joint": joint, "center": [round(float(x), 6) + 0.0 for x in centre],
                                 "size": [round(ln["foot"], 6), round(ln["foot_width"], 6)]}
    return {
        "description": description,
        "mass_source": "de Leva (1996) Table 4, males (adjusted Zatsiorsky-Seluyanov), scaled "
                       "to 75 kg; see the header of this file",
        "height": STATURE,
        "body_mass": BODY_MASS,
        "rest_pose": "T-pose: arms horizontal along +-y, palms down, thumbs forward; legs "
                     "straight; soles flat on z = 0; facing +x",
        "dof_convention": "anatomical: l_/r_ pairs mirror each other at equal values "
                          "(positive = flexion, abduction, internal rotation, pronation, "
                          "dorsiflexion, inversion, radial deviation); central joints: "
                          "positive = bending forward, bending and turning to the left",
        "landmarks": {"head_top": {"joint": head_joint[0], "offset": [
            0.0, 0.0, round(STATURE - float(P[head_joint[1]][2]), 6)]}},
        "soles": soles,
    }


def build_body95() -> Skeleton:
    hm = human_model()
    P, S = hm.pts, hm.seg
    rig = Rig("body95", anatomical=True)
    rig.joint("pelvis", None, P["pelvis"], _root_dofs("pelvis"), mass=S["lower_trunk"])
    rig.joint("lumbar", "pelvis", P["lumbar"], _spine_dofs("lumbar"), mass=S["lumbar"])
    rig.joint("lower_thorax", "lumbar", P["lower_thorax"], _spine_dofs("lower_thorax"),
              mass=S["lower_thorax"])
    rig.joint("upper_thorax", "lower_thorax", P["upper_thorax"], _spine_dofs("upper_thorax"),
              mass=S["upper_thorax"])
    rig.joint("neck", "upper_thorax", P["neck"], _spine_dofs("neck"), mass=S["neck"])
    # The head segment's joint is called "skull" so that no joint and site share a name (the
    # URDF export turns both into links).
    rig.joint("skull", "neck", P["head"], _spine_dofs("head"), mass=S["head"])
    rig.site("head", "skull", P["head_site"])

    cl = ROM_DEG["clavicle"]
    rig.joint("l_clavicle", "upper_thorax", P["l_clavicle"],
              [D("l_clavicle_protraction", NEG_Z, *cl["protraction"]),
               D("l_clavicle_elevation", EX, *cl["elevation"])], mass=S["l_clavicle"])
    rig.joint("l_shoulder", "l_clavicle", P["l_shoulder"], _shoulder_dofs(),
              mass=S["l_upper_arm"])
    rig.joint("l_elbow", "l_shoulder", P["l_elbow"],
              [D("l_elbow_flexion", NEG_Z, *ROM_DEG["elbow_flexion"]),
               D("l_forearm_pronation", EY, *ROM_DEG["forearm_pronation"])], mass=S["l_forearm"])
    wr = ROM_DEG["wrist"]
    rig.joint("l_wrist", "l_elbow", P["l_wrist"],
              [D("l_wrist_flexion", NEG_X, *wr["flexion"]),
               D("l_wrist_deviation", NEG_Z, *wr["deviation"])], mass=S["l_palm"])
    rig.site("l_hand", "l_wrist", P["l_hand_site"])
    th = ROM_DEG["thumb"]
    trot = rot_z(-45.0)
    rig.joint("l_thumb_cmc", "l_wrist", P["l_thumb_cmc"],
              [D("l_thumb_cmc_abduction", NEG_X, *th["cmc_abduction"]),
               D("l_thumb_cmc_flexion", EZ, *th["cmc_flexion"])], rot=trot, mass=S["l_thumb_cmc"])
    rig.joint("l_thumb_mcp", "l_thumb_cmc", P["l_thumb_mcp"],
              [D("l_thumb_mcp_abduction", NEG_X, *th["mcp_abduction"]),
               D("l_thumb_mcp_flexion", EZ, *th["mcp_flexion"])], rot=trot, mass=S["l_thumb_mcp"])
    rig.joint("l_thumb_ip", "l_thumb_mcp", P["l_thumb_ip"],
              [D("l_thumb_ip_flexion", EZ, *th["ip_flexion"])], rot=trot, mass=S["l_thumb_ip"])
    rig.site("l_thumb_tip", "l_thumb_ip", P["l_thumb_tip"], trot)
    fg = ROM_DEG["finger"]
    for f in ("index", "middle", "ring", "little"):
        rig.joint(f"l_{f}_mcp", "l_wrist", P[f"l_{f}_mcp"],
                  [D(f"l_{f}_mcp_deviation", NEG_Z, *fg["mcp_deviation"]),   # + radial
                   D(f"l_{f}_mcp_flexion", NEG_X, *fg["mcp_flexion"])], mass=S[f"l_{f}_mcp"])
        rig.joint(f"l_{f}_pip", f"l_{f}_mcp", P[f"l_{f}_pip"],
                  [D(f"l_{f}_pip_flexion", NEG_X, *fg["pip_flexion"])], mass=S[f"l_{f}_pip"])
        rig.joint(f"l_{f}_dip", f"l_{f}_pip", P[f"l_{f}_dip"],
                  [D(f"l_{f}_dip_flexion", NEG_X, *fg["dip_flexion"])], mass=S[f"l_{f}_dip"])
        rig.site(f"l_{f}_tip", f"l_{f}_dip", P[f"l_{f}_tip"])

    rig.joint("l_hip", "pelvis", P["l_hip"], _hip_dofs(), mass=S["l_thigh"])
    rig.joint("l_knee", "l_hip", P["l_knee"], [D("l_knee_flexion", EY, *ROM_DEG["knee_flexion"])],
              mass=S["l_shank"])
    an = ROM_DEG["ankle"]
    rig.joint("l_ankle", "l_knee", P["l_ankle"],
              [D("l_ankle_dorsiflexion", NEG_Y, *an["dorsiflexion"]),
               D("l_ankle_inversion", NEG_X, *an["inversion"])], mass=S["l_foot"])
    rig.site("l_foot", "l_ankle", P["l_foot_site"])
    rig.joint("l_toe", "l_ankle", P["l_toe"],
              [D("l_toe_extension", NEG_Y, *ROM_DEG["toe_extension"])], mass=S["l_toes"])
    rig.mirror_left()
    # sites in a readable order: head, hands, feet, then the fingertips
    order = ["head", "l_hand", "r_hand", "l_foot", "r_foot"] + [
        f"{s}_{f}_tip" for s in ("l", "r") for f in ("thumb", "index", "middle", "ring", "little")]
    rig.sites.sort(key=lambda t: order.index(t[0]))

    meta = _human_meta(
        hm,
        "Adult male, 1.75 m, 75 kg: free-floating pelvis, 3-joint spine, neck, head, clavicles, "
        "arms with forearm twist, wrists, five-fingered hands, legs with ankles and toes. "
        "95 DoF, 52 joints, 15 effector sites.",
        head_joint=("skull", "head"), foot_joint="ankle")
    return rig.skeleton(meta)


def build_fig2() -> Skeleton:
    """Seed A Fig. 2: 10 joints and 5 end effectors, the body95 person with merged segments."""
    hm = human_model()
    P, S = hm.pts, hm.seg
    rig = Rig("fig2", anatomical=True)
    trunk = combine(S["lower_trunk"], S["lumbar"], S["lower_thorax"], S["upper_thorax"],
                    S["l_clavicle"], S["l_clavicle"].mirrored())
    rig.joint("pelvis", None, P["pelvis"], _root_dofs("pelvis"), mass=trunk)
    # The neck joint takes the whole cervical range (AAOS totals).
    rig.joint("neck", "pelvis", P["neck"],
              [D("neck_flexion", EY, -45, 45), D("neck_lateral", NEG_X, -45, 45),
               D("neck_rotation", EZ, -60, 60)], mass=combine(S["neck"], S["head"]))
    rig.site("head", "neck", P["head_site"])
    rig.joint("l_shoulder", "pelvis", P["l_shoulder"], _shoulder_dofs(), mass=S["l_upper_arm"])
    hand = [S[k] for k in S if k.startswith(("l_thumb", "l_index", "l_middle", "l_ring",
                                              "l_little"))]
    rig.joint("l_elbow", "l_shoulder", P["l_elbow"],
              [D("l_elbow_flexion", NEG_Z, *ROM_DEG["elbow_flexion"])],
              mass=combine(S["l_forearm"], S["l_palm"], *hand))
    rig.site("l_hand", "l_elbow", P["l_hand_site"])
    rig.joint("l_hip", "pelvis", P["l_hip"], _hip_dofs(), mass=S["l_thigh"])
    rig.joint("l_knee", "l_hip", P["l_knee"], [D("l_knee_flexion", EY, *ROM_DEG["knee_flexion"])],
              mass=combine(S["l_shank"], S["l_foot"], S["l_toes"]))
    rig.site("l_foot", "l_knee", P["l_foot_site"])
    rig.mirror_left()
    order = ["head", "l_hand", "r_hand", "l_foot", "r_foot"]
    rig.sites.sort(key=lambda t: order.index(t[0]))
    meta = _human_meta(
        hm,
        "Seed A Fig. 2 figure: 10 joints (pelvis with a free 6-DoF joint, neck, shoulders, "
        "elbows, hips, knees) and 5 end effectors (head, hands, feet); 25 DoF. Same person as "
        "body95, segments merged.",
        head_joint=("neck", "neck"), foot_joint="knee")
    return rig.skeleton(meta)


# =====================================================================================
# wheeled20: seed E's wheeled humanoid (Pepper-like)
# =====================================================================================

WHEELED_HEIGHT = 1.37
WHEELED_MASS = 30.0
# Pepper's joint ranges (Aldebaran / SoftBank, NAOqi 2.x "Pepper - Joints"; the same values are
# in ros-naoqi/pepper_robot's URDF), degrees.
PEPPER_DEG = {
    "head_yaw": (-119.5, 119.5), "head_pitch": (-40.5, 36.5),
    "hip_roll": (-29.5, 29.5), "hip_pitch": (-59.5, 59.5), "knee_pitch": (-29.5, 29.5),
    "shoulder_pitch": (-119.5, 119.5), "l_shoulder_roll": (0.5, 89.5),
    "elbow_yaw": (-119.5, 119.5), "l_elbow_roll": (-89.5, -0.5), "wrist_yaw": (-104.5, 104.5),
}
WRIST_PITCH_DEG = (-60.0, 60.0)  # the 6th arm DoF of seed E; Pepper has none: our choice


def build_wheeled20() -> Skeleton:
    # Pepper's URDF link offsets (1.21 m robot) scaled by 1.132 to the 1.37 m of seed E.
    z_knee, shin, pelvis, torso_to_neck = 0.38, 0.303, 0.089, 0.349
    z_hipp = z_knee + shin
    z_torso = z_hipp + pelvis
    neck = np.array([-0.043, 0.0, z_torso + torso_to_neck])
    head_top = WHEELED_HEIGHT - neck[2]
    shoulder = np.array([-0.065, 0.17, z_torso + 0.256])
    elbow = shoulder + [0.205, 0.017, 0.0]
    wrist = elbow + [0.17, 0.0, 0.0]
    l_base = 0.15  # base COM height (batteries and motors low in the base)

    rig = Rig("wheeled20", anatomical=False)
    # Joints "base_link" / "head_link" (ROS names) leave the names "base" / "head" to the sites.
    rig.joint("base_link", None, [0, 0, 0],
              [D("base_x", EX, translation=True), D("base_y", EY, translation=True),
               D("base_yaw", EZ)],
              mass=_scaled(cylinder([0, 0, 0], [0, 0, 2 * l_base], 0.24), 15.0))
    rig.site("base", "base_link", [0, 0, l_base])
    pd = PEPPER_DEG
    rig.joint("knee", "base_link", [0, 0, z_knee], [D("knee_pitch", EY, *pd["knee_pitch"])],
              mass=_scaled(cylinder([0, 0, z_knee], [0, 0, z_hipp], 0.07), 2.2))
    rig.joint("hip", "knee", [0, 0, z_hipp], [D("hip_pitch", EY, *pd["hip_pitch"])],
              mass=box([0, 0, z_hipp + 0.045], (0.16, 0.20, 0.09), mass=1.8))
    rig.joint("torso", "hip", [0, 0, z_torso], [D("hip_roll", EX, *pd["hip_roll"])],
              mass=box([-0.02, 0, z_torso + 0.2], (0.22, 0.30, 0.36), mass=5.2))
    rig.joint("neck", "torso", neck, [D("head_yaw", EZ, *pd["head_yaw"])],
              mass=_scaled(cylinder(neck - [0, 0, 0.03], neck + [0, 0, 0.03], 0.03), 0.3))
    rig.joint("head_link", "neck", neck, [D("head_pitch", EY, *pd["head_pitch"])],
              mass=Mass(1.7, neck + [0.01, 0, 0.12], 0.4 * 1.7 * 0.12**2 * np.eye(3)))
    rig.site("head", "head_link", neck + [0.06, 0, 0.12])
    # Zero pose (Pepper's): arms horizontal, pointing forward. Rest: arms hanging, 8 deg out.
    rig.joint("l_shoulder", "torso", shoulder,
              [D("l_shoulder_pitch", EY, *pd["shoulder_pitch"], rest=90.0),
               D("l_shoulder_roll", EZ, *pd["l_shoulder_roll"], rest=8.0)],
              mass=_scaled(cylinder(shoulder, elbow, 0.045), 0.9))
    rig.joint("l_elbow", "l_shoulder", elbow,
              [D("l_elbow_yaw", EX, *pd["elbow_yaw"]),
               D("l_elbow_roll", EZ, *pd["l_elbow_roll"], rest=-0.5)],
              mass=_scaled(cylinder(elbow, wrist, 0.04), 0.65))
    rig.joint("l_wrist", "l_elbow", wrist,
              [D("l_wrist_yaw", EX, *pd["wrist_yaw"]), D("l_wrist_pitch", EY, *WRIST_PITCH_DEG)],
              mass=box(wrist + [0.05, 0, 0], (0.10, 0.06, 0.03), mass=0.35))
    rig.site("l_hand", "l_wrist", wrist + [0.08, 0, 0])
    rig.mirror_left()
    rig.sites.sort(key=lambda t: ["head", "l_hand", "r_hand", "base"].index(t[0]))

    a = 0.422                      # side of the wheel-contact triangle (seed E: base 0.422 m)
    R = a / math.sqrt(3.0)         # circumradius; the centroid is the base origin
    wheels = [[round(R / 2, 6), round(a / 2, 6), 0.0], [round(R / 2, 6), round(-a / 2, 6), 0.0],
              [round(-R, 6), 0.0, 0.0]]
    meta = {
        "description": "Seed E's wheeled humanoid (Pepper-like): omnidirectional 3-wheel base "
                       "(planar root x, y, yaw), leg 3 (knee pitch, hip pitch, hip roll), head 2, "
                       "arms 2 x 6; 20 DoF, 1.37 m, 30 kg, half of it in the base.",
        "mass_source": "engineering estimate: seed E's 30 kg with 15 kg in the base, the rest "
                       "split over the links by the rig author; inertias of uniform "
                       "boxes/cylinders/spheres of the link sizes",
        "height": WHEELED_HEIGHT,
        "total_mass": WHEELED_MASS,
        "rest_pose": "arms hanging (shoulder pitch 90 deg, roll 8 deg out), everything else 0; "
                     "zero pose = Pepper's: arms horizontal pointing forward",
        "dof_convention": "Pepper's: the same axis on both sides; l_/r_ roll and yaw DoFs "
                          "(about x, z) mirror with opposite signs, pitch DoFs with equal values",
        "seed_e_dimensions": {"height": 1.37, "width": 0.65, "depth": 0.40},
        "landmarks": {"head_top": {"joint": "head_link",
                                   "offset": [0.0, 0.0, round(head_top, 6)]}},
        "wheel_contacts": wheels,
        "wheel_triangle_side": a,
        "support_radius": round(R / 2, 6),
        "base_mass": 15.0,
        "upper_body_mass": 15.0,
        "base_com_height": l_base,
        "upper_body_com_height": 0.0,   # filled in below from the rest pose
        "max_base_speed": 1.4,
        "max_base_acceleration": 1.7,
        "nominal_base_speed": 0.5,
        "nominal_base_acceleration": 1.0,
    }
    skel = rig.skeleton(meta)
    meta["upper_body_com_height"] = round(_upper_body_com(skel)[2], 6)
    return skel.replace(meta=meta)


def _scaled(m: Mass, mass: float) -> Mass:
    return Mass(mass, m.c, m.inertia * mass / m.m)


def _upper_body_com(skel: Skeleton) -> np.ndarray:
    fk = forward_kinematics(skel, skel.rest_q)
    R, p = fk.joint_rotations, fk.joint_positions
    com = np.einsum("jab,jb->ja", R, skel.coms) + p
    w = skel.masses.copy()
    w[skel.joint_index("base_link")] = 0.0
    return (w[:, None] * com).sum(0) / w.sum()


# =====================================================================================
# biped12: seed C's biped
# =====================================================================================

BIPED_TORSO_Z = 0.85
BIPED_HIP = (0.0, 0.10, -0.10)     # from the torso root
BIPED_THIGH = BIPED_SHANK = 0.40
BIPED_ANKLE_H = 0.06
BIPED_SOLE = (0.22, 0.10)
BIPED_BODY_MASS = 60.0
SEED_C_TARGETS = {"l_sole": [-0.25, 0.35, 0.0], "r_sole": [0.25, -0.35, 0.0]}
BIPED_DEG = {"hip_yaw": (-45, 45), "l_hip_roll": (-30, 45), "hip_pitch": (-120, 30),
             "knee_pitch": (0, 150), "ankle_pitch": (-45, 45), "ankle_roll": (-30, 30)}


def build_biped12() -> Skeleton:
    torso = np.array([0.0, 0.0, BIPED_TORSO_Z])
    hip = torso + BIPED_HIP
    knee = hip - [0, 0, BIPED_THIGH]
    ankle = knee - [0, 0, BIPED_SHANK]
    sole = ankle - [0, 0, BIPED_ANKLE_H]
    M = BIPED_BODY_MASS
    H_equiv = (BIPED_THIGH + BIPED_SHANK) / (HEIGHT_FRACTION["hip"] - HEIGHT_FRACTION["ankle"])
    hat_len = (HEIGHT_FRACTION["shoulder"] - HEIGHT_FRACTION["hip"]) * H_equiv
    leg = DE_LEVA["thigh"].mass + DE_LEVA["shank"].mass + DE_LEVA["foot"].mass
    hat = box([0, 0, hip[2] + 0.626 * hat_len], (0.20, 0.34, 0.60), mass=(1 - 2 * leg) * M)

    rig = Rig("biped12", anatomical=False)
    rig.joint("torso", None, torso, [], mass=hat)
    b = BIPED_DEG
    rig.joint("l_hip", "torso", hip,
              [D("l_hip_yaw", EZ, *b["hip_yaw"]), D("l_hip_roll", EX, *b["l_hip_roll"]),
               D("l_hip_pitch", EY, *b["hip_pitch"])],
              mass=de_leva("thigh", M, hip, knee, "xyz"))
    rig.joint("l_knee", "l_hip", knee, [D("l_knee_pitch", EY, *b["knee_pitch"])],
              mass=de_leva("shank", M, knee, ankle, "xyz"))
    rig.joint("l_ankle", "l_knee", ankle,
              [D("l_ankle_pitch", EY, *b["ankle_pitch"]), D("l_ankle_roll", EX, *b["ankle_roll"])],
              mass=box(ankle + [0.03, 0, -0.03], (BIPED_SOLE[0], BIPED_SOLE[1], 0.06),
                       mass=DE_LEVA["foot"].mass * M))
    rig.site("l_sole", "l_ankle", sole)
    rig.mirror_left()
    meta = {
        "description": "Seed C's biped: two 6-DoF legs (hip yaw, roll, pitch; knee pitch; "
                       "ankle pitch, roll) under a fixed torso root link; 12 DoF. Legs straight "
                       "at rest (the singular pose of seed C).",
        "mass_source": f"legs: de Leva (1996) Table 4 male fractions of a {M:g} kg body; torso: "
                       "head-arms-trunk lumped, COM 0.626 of the hip-to-shoulder length above "
                       "the hips (Winter 2009, Table 4.1, HAT), uniform 0.20 x 0.34 x 0.60 m box",
        "rest_pose": "legs straight and vertical, soles parallel to the ground plane, torso "
                     f"fixed at z = {BIPED_TORSO_Z} m; the soles hang {-sole[2]:.2f} m below "
                     "z = 0 so that seed C's sole targets on z = 0 are reachable",
        "dof_convention": "robot: the same axis on both sides; roll and yaw (about x, z) mirror "
                          "with opposite signs, pitch with equal values; knee pitch > 0 bends",
        "torso_height": BIPED_TORSO_Z,
        "leg_length": round(BIPED_THIGH + BIPED_SHANK + BIPED_ANKLE_H, 6),
        "rest_sole_height": round(float(sole[2]), 6),
        "soles": {s: {"joint": f"{s[0]}_ankle", "center": [0.0, 0.0, -BIPED_ANKLE_H],
                      "size": list(BIPED_SOLE)} for s in ("l_sole", "r_sole")},
        "seed_c_targets": SEED_C_TARGETS,
        "seed_c_note": "seed C's targets in this world frame: left sole to [-0.25, 0.35, 0], "
                       "right sole to [0.25, -0.35, 0] (y is left here; the literal assignment "
                       "would cross the legs), soles parallel to the ground, torso fixed",
    }
    return rig.skeleton(meta)


# =====================================================================================
# Writing
# =====================================================================================

HEADERS = {
    "fig2": "Seed A, Fig. 2: 10 joints, 5 end effectors, 25 DoF.\n" + HUMAN_SOURCES,
    "body95": "Adult male 1.75 m / 75 kg, 95 DoF, 15 effector sites.\n" + HUMAN_SOURCES,
    "wheeled20": """\
Seed E's wheeled humanoid (Pepper-like), 20 DoF, 1.37 m, 30 kg (15 kg in the base).
Dimensions: seed E (height 1.37 m, base triangle 0.422 m); link offsets from Pepper's URDF
  (ros-naoqi/pepper_robot, 1.21 m robot) scaled by 1.132.
Joint limits: Pepper's published ranges (NAOqi 2.x documentation "Pepper - Joints"); the wrist
  pitch (the 6th arm DoF of seed E) has no Pepper counterpart: +-60 deg chosen here.
Masses: engineering estimate (see mass_source); base and balance data in [meta] for the MPC.""",
    "biped12": """\
Seed C's biped: two 6-DoF legs under a fixed torso, 12 DoF; legs straight at rest.
Dimensions chosen: thigh = shank = 0.40 m, ankle 0.06 m above the sole, hips 0.20 m apart
  and 0.10 m below the torso root at z = 0.85 m, soles 0.22 x 0.10 m; seed C's targets are
  then reachable with the knees bent ~29 deg (checked by tests/test_rigs.py).
Masses: de Leva (1996) leg fractions; torso lumped (see mass_source).""",
}

BUILDERS = {"fig2": build_fig2, "body95": build_body95, "wheeled20": build_wheeled20,
            "biped12": build_biped12}


def build_all() -> dict[str, Skeleton]:
    return {name: fn() for name, fn in BUILDERS.items()}


def render(name: str, skel: Skeleton) -> str:
    header = (f"animik built-in rig {name!r}.\n"
              "GENERATED by scripts/make_rigs.py -- edit that script, not this file.\n"
              "Units: metres, kilograms, kg m^2 (about the COM, joint frame); rotation limits "
              "in degrees.\n" + HEADERS[name])
    return dumps_rig(skel, header=header)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=RIG_DIR, help="output folder (assets/rigs)")
    ap.add_argument("--check", action="store_true",
                    help="compare with the files in --out instead of writing")
    args = ap.parse_args(argv)
    stale = []
    for name, skel in build_all().items():
        text = render(name, skel)
        path = args.out / f"{name}.toml"
        if args.check:
            if not path.is_file() or path.read_text(encoding="utf-8") != text:
                stale.append(str(path))
        else:
            args.out.mkdir(parents=True, exist_ok=True)
            atomic_write(path, text)
            path.chmod(0o644)  # atomic_write's temporary file is private (0600)
            print(f"wrote {path}: {skel!r}")
    if stale:
        print("out of date (run scripts/make_rigs.py):", *stale, sep="\n  ")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
