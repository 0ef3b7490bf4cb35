"""Canonical semantic roles of a humanoid's joints, by name and then by topology.

Steps 1–3 described in :mod:`animik.retarget.mapping` (name normalisation :func:`parse_name`
with the alias table :data:`ALIASES`, context rules, topology :func:`topology_roles`); the
mapping between two skeletons built on these roles lives there.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ..errors import UnknownNameError, names_hint
from ..kinematics import forward_kinematics
from ..skeleton import Site, Skeleton

SIDES = ("l", "r")
LIMB_ROLES = ("clavicle", "upper_arm", "forearm", "hand", "thigh", "shin", "foot", "toe")
FINGERS = ("thumb", "index", "middle", "ring", "little")
#: Effector roles: a target site with one of these roles becomes an IK effector.
EFFECTOR_ROLES = ("l_hand", "r_hand", "l_foot", "r_foot", "head")

#: Every canonical role name (the spine and neck chains are numbered from the hips up).
CANONICAL_ROLES: tuple[str, ...] = (
    "hips", "spine", "spine1", "spine2", "spine3", "chest", "neck", "neck1", "neck2", "head",
    *(f"{s}_{r}" for s in SIDES for r in LIMB_ROLES),
    *(f"{s}_{f}{k}" for s in SIDES for f in FINGERS for k in (1, 2, 3)),
)

# Normalised base name (side token removed, tokens joined) -> role kind. Kinds ending in "?"
# are resolved by context (see module docstring). "-" marks joints that are known and ignored
# (hip offset bones, twist/roll bones, eyes, jaw, props).
ALIASES: dict[str, str] = {
    # pelvis / root
    "hips": "hips", "pelvis": "hips", "hip": "hip?", "root": "root?", "torso": "root?",
    "cog": "root?", "centerofgravity": "root?", "reference": "root?", "bip01": "root?",
    # spine
    "spine": "spine", "abdomen": "spine", "abdomen2": "spine", "lowerback": "spine",
    "lumbar": "spine", "chest": "spine", "chest2": "spine", "chest3": "spine",
    "chest4": "spine", "upperchest": "spine", "thorax": "spine", "lowerthorax": "spine",
    "upperthorax": "spine", "back": "spine", "waist": "spine", "lowerspine": "spine",
    "middlespine": "spine", "midspine": "spine", "upperspine": "spine", "spine0": "spine",
    "spine1": "spine", "spine2": "spine", "spine3": "spine", "spine4": "spine",
    "spine5": "spine", "spine01": "spine", "spine02": "spine", "spine03": "spine",
    "torso1": "spine", "torso2": "spine", "ribcage": "spine", "stomach": "spine",
    "ab": "spine", "abs": "spine",
    # neck and head
    "neck": "neck", "neck1": "neck", "neck2": "neck", "neck01": "neck", "neck02": "neck",
    "lowerneck": "neck", "upperneck": "neck", "cervical": "neck",
    "head": "head", "skull": "head",
    # arms
    "collar": "clavicle", "clavicle": "clavicle", "clav": "clavicle", "scapula": "clavicle",
    "shoulder": "shoulder?", "shoulders": "shoulder?",
    "arm": "upper_arm", "upperarm": "upper_arm", "uparm": "upper_arm", "shldr": "upper_arm",
    "humerus": "upper_arm", "biceps": "upper_arm", "uarm": "upper_arm",
    "forearm": "forearm", "lowerarm": "forearm", "loarm": "forearm", "elbow": "forearm",
    "radius": "forearm", "farm": "forearm",
    "hand": "hand", "wrist": "hand", "palm": "hand",
    # legs
    "upleg": "thigh", "upperleg": "thigh", "thigh": "thigh", "femur": "thigh",
    "leg": "shin", "lowerleg": "shin", "loleg": "shin", "shin": "shin", "knee": "shin",
    "calf": "shin", "tibia": "shin", "shank": "shin", "crus": "shin",
    "foot": "foot", "ankle": "foot", "sole": "foot", "heel": "foot",
    "toe": "toe", "toes": "toe", "toebase": "toe", "ball": "toe", "toe0": "toe",
    "football": "toe",
    # known, not mapped
    "hipjoint": "-", "buttock": "-", "eye": "-", "eyes": "-", "jaw": "-", "tongue": "-",
    "fingerbase": "-", "handend": "-", "prop": "-", "weapon": "-",
}
#: Tokens of robot link / joint names that do not name a body part (dropped as a fallback).
_ROBOT_TOKENS = {"link", "joint", "jnt", "lnk", "pitch", "roll", "yaw", "rev", "body"}
_END_TOKENS = {"end", "nub", "tip", "top", "site", "effector", "null", "twist", "roll", "share"}
_FINGER_TOKENS = {"thumb": "thumb", "index": "index", "middle": "middle", "mid": "middle",
                  "ring": "ring", "pinky": "little", "pinkie": "little", "little": "little",
                  "finger0": "thumb", "finger1": "index", "finger2": "middle",
                  "finger3": "ring", "finger4": "little"}
_FINGER_SEGMENTS = {"cmc": 1, "mcp": 1, "meta": 1, "metacarpal": 1, "pip": 2, "ip": 2,
                    "dip": 3, "proximal": 1, "intermediate": 2, "medial": 2, "distal": 3}
_THUMB_SEGMENTS = {"cmc": 1, "meta": 1, "metacarpal": 1, "mcp": 2, "proximal": 2, "ip": 3,
                   "distal": 3}
_LEFT = {"left", "l", "lt", "lft"}
_RIGHT = {"right", "r", "rt", "rgt"}
_PREFIXES = ("mixamorig", "bip01", "bip001", "bip", "def", "jnt", "joint", "bone", "b", "cc",
             "base", "rig", "character1", "char", "sk", "mcl", "ik", "fk", "j", "bn")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")


# ----------------------------------------------------------------------------- names
@dataclass(frozen=True)
class ParsedName:
    """A joint name split for classification.

    Attributes:
        name: the original name.
        side: ``"l"``, ``"r"`` or ``""``.
        tokens: lower-case tokens without the side token and known prefixes.
        base: the tokens joined (the alias-table key).
    """

    name: str
    side: str
    tokens: tuple[str, ...]
    base: str


def parse_name(name: str) -> ParsedName:
    """Split a joint name into side and base tokens (see the module docstring)."""
    raw = re.split(r"[:|]", name)[-1].strip()
    parts = [p for p in re.split(r"[\s_.\-]+", raw) if p]
    tokens: list[str] = []
    for i, p in enumerate(parts):
        split = _CAMEL.findall(p) or [p]
        # "lShldr", "rForeArm": a lower-case l/r glued to a capitalised word is a side marker;
        # Motive's "LUArm", "RFArm": an upper-case one glued to an acronym
        if i == 0 and len(split) > 1 and 2 <= len(split[0]) <= 3 and split[0].isupper() \
                and split[0][0] in "LR":
            split = [split[0][0], split[0][1:], *split[1:]]
        tokens.extend(t.lower() for t in split)
    while len(tokens) > 1 and (tokens[0] in _PREFIXES or tokens[0].isdigit()):
        tokens = tokens[1:]
    side = ""
    if len(tokens) > 1 and tokens[0] in _LEFT | _RIGHT:
        side = "l" if tokens[0] in _LEFT else "r"
        tokens = tokens[1:]
    elif len(tokens) > 1 and tokens[-1] in _LEFT | _RIGHT:
        side = "l" if tokens[-1] in _LEFT else "r"
        tokens = tokens[:-1]
    else:
        for i, t in enumerate(tokens):
            if t in ("left", "right") and len(tokens) > 1:
                side = t[0]
                tokens = tokens[:i] + tokens[i + 1:]
                break
    return ParsedName(name, side, tuple(tokens), "".join(tokens))


def _name_kind(p: ParsedName) -> tuple[str, int]:
    """``(kind, finger segment)`` of a parsed name; kind ``""`` when unknown."""
    toks = p.tokens
    robot = "link" in toks or "joint" in toks  # "left_wrist_roll_link" is a body, not a twist bone
    if any(t in _END_TOKENS and not (robot and t == "roll") for t in toks):
        return "-", 0
    if "in" in toks and "hand" in toks:  # Axis Neuron's metacarpals ("LeftInHandIndex")
        return "-", 0
    for i, t in enumerate(toks):
        m = re.fullmatch(r"([a-z]+?)(\d*)", t)
        word = m.group(1) if m else t
        finger = _FINGER_TOKENS.get(t) or _FINGER_TOKENS.get(word)
        if finger is None:
            continue
        seg = 0
        digits = m.group(2) if m else ""
        rest = [x for x in toks[i + 1:]]
        if digits:
            seg = int(digits)
        for x in rest:
            if x.isdigit():
                seg = int(x)
            elif finger == "thumb" and x in _THUMB_SEGMENTS:
                seg = _THUMB_SEGMENTS[x]
            elif x in _FINGER_SEGMENTS:
                seg = _FINGER_SEGMENTS[x]
        if seg == 0:
            seg = 1
        return (f"finger:{finger}", seg) if 1 <= seg <= 3 else ("-", 0)
    kind = ALIASES.get(p.base)
    if kind is None and p.base and p.base[-1].isdigit():
        kind = ALIASES.get(p.base.rstrip("0123456789"))
        if kind in ("hand", "foot", "upper_arm", "forearm", "thigh", "shin", "head", "hips"):
            kind = None  # "Hand2", "Foot3": extra segments, not the main joint
    if kind is None:
        # Robot links / joints: "left_hip_pitch_link", "waist_yaw_joint", "torso_link_rev_1_0"
        # name the human joint plus the axis and the element type.
        rest = [t for t in toks if t not in _ROBOT_TOKENS and not t.isdigit()]
        if rest and len(rest) < len(toks):
            kind = ALIASES.get("".join(rest))
    return (kind or ""), 0


# ----------------------------------------------------------------------------- roles
@dataclass(frozen=True)
class JointRoles:
    """Canonical roles of one skeleton's joints.

    Attributes:
        skeleton: the skeleton's name.
        roles: ``{role: joint name}``.
        method: ``{role: "name" | "topology" | "file"}`` — how each role was found.
        ignored: joints recognised and deliberately left out (hip offsets, ends, eyes…).
        spine: the spine chain from the hips up (joint names), ``neck_chain`` the neck joints.
        forward: ``(3,)`` the character's forward direction at rest (world, unit).
    """

    skeleton: str
    roles: Mapping[str, str]
    method: Mapping[str, str]
    ignored: tuple[str, ...] = ()
    spine: tuple[str, ...] = ()
    neck_chain: tuple[str, ...] = ()

    @property
    def by_joint(self) -> dict[str, str]:
        """``{joint name: role}``."""
        return {j: r for r, j in self.roles.items()}

    def get(self, role: str) -> str | None:
        return self.roles.get(role)


def site_role(name: str) -> str:
    """The effector role a site's name says (``l_hand``, ``r_foot``, ``head``), or ""."""
    p = parse_name(name)
    kind, _ = _name_kind(p)
    if kind in ("hand", "foot") and p.side:
        return f"{p.side}_{kind}"
    if kind == "head" and not p.side:
        return "head"
    return ""


def rest_positions(skel: Skeleton, q: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """World joint and site positions ``((J, 3), (S, 3))`` at ``q`` (default: the rest pose)."""
    fk = forward_kinematics(skel, skel.rest_q if q is None else q)
    return np.asarray(fk.joint_positions), np.asarray(fk.site_positions)


def _depths(skel: Skeleton) -> np.ndarray:
    d = np.zeros(skel.n_joints, dtype=int)
    for j in range(1, skel.n_joints):
        d[j] = d[skel.parents[j]] + 1
    return d


def _ancestors(skel: Skeleton, j: int) -> list[int]:
    out = []
    while j >= 0:
        out.append(j)
        j = int(skel.parents[j])
    return out


def _lca(skel: Skeleton, a: int, b: int) -> int:
    sa = set(_ancestors(skel, a))
    for j in _ancestors(skel, b):
        if j in sa:
            return j
    return 0


def _path_down(skel: Skeleton, top: int, bottom: int) -> list[int]:
    """Joints strictly below ``top`` down to ``bottom`` inclusive (``bottom`` under ``top``)."""
    chain = []
    j = bottom
    while j >= 0 and j != top:
        chain.append(j)
        j = int(skel.parents[j])
    if j != top:
        return []
    return chain[::-1]


def _is_robot_name(name: str) -> bool:
    toks = parse_name(name).tokens
    return "link" in toks or "joint" in toks


def _last_of_robot_run(skel: Skeleton, cands: list[int]) -> int:
    """The shallowest candidate, or for a robot the last link of its run of links of the same
    kind (``hip_pitch_link -> hip_roll_link -> hip_yaw_link``): that link carries the segment
    (the thigh) whose direction the role stands for; the ones above are 1-DoF stages."""
    j = cands[0]
    if not _is_robot_name(skel.joint_names[j]):
        return j
    rest = set(cands)
    while True:
        kids = [c for c in skel.children[j] if c in rest]
        if len(kids) != 1:
            return j
        j = kids[0]


def classify_joints(skel: Skeleton, pose: np.ndarray | None = None,
                    roles: Mapping[str, str] | None = None) -> JointRoles:
    """Canonical roles of a skeleton's joints: names first, then topology.

    Args:
        skel: the skeleton.
        pose: ``(n_dof,)`` pose used for the geometric rules (default: the rest pose).
        roles: ``{joint name: role}`` given explicitly (a mapping file's ``source_roles`` /
            ``target_roles``); a role ``""`` or ``"-"`` excludes the joint.

    Returns:
        :class:`JointRoles`.

    Raises:
        UnknownNameError: an explicit role names an unknown joint or role.
    """
    names = skel.joint_names
    depth = _depths(skel)
    explicit: dict[int, str] = {}
    for jn, role in (roles or {}).items():
        j = skel.joint_index(jn)
        role = str(role or "-")
        if role != "-" and role not in CANONICAL_ROLES:
            raise UnknownNameError(f"unknown role {role!r} for joint {jn!r}; roles are "
                                   f"{names_hint(CANONICAL_ROLES, limit=40)}")
        explicit[j] = role
    kinds: dict[int, tuple[str, str, int]] = {}  # joint -> (kind, side, finger segment)
    for j, nm in enumerate(names):
        if j in explicit:
            continue
        p = parse_name(nm)
        kind, seg = _name_kind(p)
        if kind:
            kinds[j] = (kind, p.side, seg)
    found: dict[str, int] = {}
    method: dict[str, str] = {}
    ignored = [j for j, (k, _, _) in kinds.items() if k == "-"]
    for j, role in explicit.items():
        if role == "-":
            ignored.append(j)
        else:
            found[role] = j
            method[role] = "file"

    def put(role: str, j: int, how: str = "name") -> None:
        if role in found or j in found.values():
            return
        found[role] = j
        method[role] = how

    # sided limb roles: the shallowest candidate wins
    robot_runs: set[int] = set()
    for side in SIDES:
        by_kind: dict[str, list[int]] = {}
        for j, (k, s, _) in kinds.items():
            if s == side:
                by_kind.setdefault(k, []).append(j)
        if "shoulder?" in by_kind:
            if "clavicle" in by_kind:
                by_kind.setdefault("upper_arm", []).extend(by_kind["shoulder?"])
            elif "upper_arm" in by_kind:
                by_kind.setdefault("clavicle", []).extend(by_kind["shoulder?"])
            else:
                by_kind.setdefault("upper_arm", []).extend(by_kind["shoulder?"])
        if "hip?" in by_kind:
            by_kind.setdefault("thigh", []).extend(by_kind["hip?"])
        for k in LIMB_ROLES:
            cands = sorted(by_kind.get(k, []), key=lambda j: depth[j])
            if cands:
                put(f"{side}_{k}", _last_of_robot_run(skel, cands))
                # a robot's run of 1-DoF links (shoulder pitch -> roll -> yaw) is the one
                # segment its name says: topology must not give the stages above another role
                # (H1's shoulder_pitch_link taken as a clavicle froze its shoulder pitch)
                robot_runs.update(j for j in cands if _is_robot_name(names[j]))
        for j, (k, s, seg) in sorted(kinds.items(), key=lambda kv: depth[kv[0]]):
            if s == side and k.startswith("finger:"):
                put(f"{side}_{k.split(':')[1]}{seg}", j)

    # hips: the lowest common ancestor of the thighs, else by name
    if "hips" not in found:
        lt, rt = found.get("l_thigh"), found.get("r_thigh")
        hips_named = sorted([j for j, (k, s, _) in kinds.items() if k in ("hips", "hip?") and not s],
                            key=lambda j: depth[j])
        if lt is not None and rt is not None:
            put("hips", _lca(skel, lt, rt), "name" if hips_named else "topology")
        elif hips_named:
            put("hips", hips_named[0])
    # neck chain and head by name
    head = next((j for j, (k, _, _) in sorted(kinds.items(), key=lambda kv: depth[kv[0]])
                 if k == "head"), None)
    if head is not None:
        put("head", head)
    geo = None
    if any(r not in found for r in ("hips", "l_thigh", "r_thigh", "l_upper_arm", "r_upper_arm",
                                    "head", "l_hand", "r_hand", "l_foot", "r_foot")):
        geo = topology_roles(skel, pose)
        for role, j in geo.items():
            if role not in found and j not in found.values() and j not in ignored \
                    and j not in robot_runs:
                put(role, j, "topology")
    # spine and neck chains: the path from the hips to the head, split at the first neck joint
    spine: list[int] = []
    neck: list[int] = []
    hips = found.get("hips")
    top = found.get("head")
    if hips is not None and top is None:
        named_necks = [j for j, (k, _, _) in kinds.items() if k == "neck" and hips in _ancestors(skel, j)]
        if named_necks:
            top = max(named_necks, key=lambda j: depth[j])
    if hips is not None and top is None:
        arms = [found[r] for r in ("l_clavicle", "r_clavicle", "l_upper_arm", "r_upper_arm")
                if r in found]
        if len(arms) >= 2:
            top = _lca(skel, arms[0], arms[-1])
    if hips is not None and top is not None:
        path = _path_down(skel, hips, top)
        if top == found.get("head") or top == hips:
            path = path[:-1]
        explicit_chain = {j: r for j, r in explicit.items() if r != "-"}
        necks = [j for j in path if kinds.get(j, ("",))[0] == "neck"
                 or explicit_chain.get(j, "").startswith("neck")]
        if necks:
            cut = path.index(necks[0])
        else:
            # no neck by name: above the arms' branch point it is neck, below it spine
            arms = [found[r] for r in ("l_clavicle", "r_clavicle", "l_upper_arm", "r_upper_arm")
                    if r in found]
            branch = _lca(skel, arms[0], arms[-1]) if len(arms) >= 2 else None
            cut = path.index(branch) + 1 if branch in path else len(path)
        spine = [j for j in path[:cut] if j not in ignored]
        neck = [j for j in path[cut:] if j not in ignored]
        if top != found.get("head") and kinds.get(top, ("",))[0] != "neck":
            spine = spine + neck
            neck = []
    for j, role in zip(spine, chain_roles(len(spine), "spine"), strict=True):
        found.pop(role, None)
        put(role, j, method.get(role, "name" if j in kinds else "topology"))
    for j, role in zip(neck, chain_roles(len(neck), "neck"), strict=True):
        put(role, j, "name" if j in kinds else "topology")
    order = {r: i for i, r in enumerate(CANONICAL_ROLES)}
    roles_out = {r: names[j] for r, j in sorted(found.items(), key=lambda kv: order.get(kv[0], 999))}
    return JointRoles(skel.name, roles_out, {r: method[r] for r in roles_out},
                      tuple(names[j] for j in sorted(set(ignored))),
                      tuple(names[j] for j in spine), tuple(names[j] for j in neck))


def chain_roles(n: int, kind: str) -> list[str]:
    """Role names of a spine (``kind="spine"``) or neck chain of ``n`` joints, bottom up."""
    if kind == "spine":
        if n == 0:
            return []
        if n == 1:
            return ["chest"]
        return ["spine", *[f"spine{i}" for i in range(1, n - 1)], "chest"]
    return ["neck", *[f"neck{i}" for i in range(1, n)]][:n]


def character_forward(skel: Skeleton) -> np.ndarray:
    """The file convention's forward direction: BVH faces +z (world −y), animik rigs +x."""
    if "bvh_unit" in skel.meta:
        return np.array([0.0, -1.0, 0.0])
    return np.array([1.0, 0.0, 0.0])


def topology_roles(skel: Skeleton, pose: np.ndarray | None = None) -> dict[str, int]:
    """Limb, hips and head roles from the tree shape and the rest geometry alone.

    Legs are the two subtrees of the hips (the first joint below the root with several
    children) that reach lowest, the spine the one that reaches highest; at the spine's first
    branch the two most lateral subtrees are arms and the highest one is the neck. The knee
    (elbow) is the chain joint nearest half way down the leg (arm); sides come from the lateral
    axis ``up × forward``, forward from the toes if any, else :func:`character_forward`.

    Returns:
        ``{role: joint index}`` (possibly incomplete).
    """
    P, S = rest_positions(skel, pose)
    J = skel.n_joints
    ch = skel.children
    site_of = [[] for _ in range(J)]
    for i, j in enumerate(skel.site_joint):
        site_of[int(j)].append(S[i])
    sub_pts: list[np.ndarray] = [None] * J  # type: ignore[list-item]
    for j in range(J - 1, -1, -1):
        pts = [P[j][None]] + [np.asarray(site_of[j]).reshape(-1, 3)] + [sub_pts[c] for c in ch[j]]
        sub_pts[j] = np.concatenate(pts)
    height = max(float(np.ptp(sub_pts[0][:, 2])), 1e-6)
    out: dict[str, int] = {}
    hips = 0
    while len(ch[hips]) == 1:
        hips = ch[hips][0]
    if len(ch[hips]) < 2:
        return out
    out["hips"] = hips
    kids = list(ch[hips])
    low = sorted(kids, key=lambda c: sub_pts[c][:, 2].min())
    high = max(kids, key=lambda c: sub_pts[c][:, 2].max())
    legs = [c for c in low[:2] if c != high and sub_pts[c][:, 2].max() < P[hips, 2] + 0.1 * height]

    def chain(start: int, key) -> list[int]:
        c = [start]
        while ch[c[-1]]:
            c.append(max(ch[c[-1]], key=key))
        return c

    def moving(c: list[int]) -> list[int]:
        keep = [c[0]] if np.linalg.norm(P[c[0]] - P[skel.parents[c[0]]]) > 1e-3 * height else []
        keep += [b for a, b in zip(c, c[1:], strict=False) if np.linalg.norm(P[b] - P[a]) > 1e-3 * height]
        return keep

    leg_chains = []
    for c0 in legs:
        c = moving(chain(c0, lambda k: -sub_pts[k][:, 2].min()))
        if len(c) >= 3:
            top, bot = P[c[0], 2], min(P[k, 2] for k in c)
            knee = min(range(1, len(c) - 1), key=lambda i: abs(P[c[i], 2] - 0.5 * (top + bot)))
            leg_chains.append(dict(thigh=c[knee - 1], shin=c[knee], foot=c[knee + 1],
                                   toe=c[knee + 2] if knee + 2 < len(c) else None))
    fwd = character_forward(skel)
    toes = [(lc["toe"], lc["foot"]) for lc in leg_chains if lc["toe"] is not None]
    if toes:
        v = np.mean([P[t] - P[f] for t, f in toes], axis=0)
        v[2] = 0.0
        if np.linalg.norm(v) > 1e-3 * height:
            fwd = v / np.linalg.norm(v)
    left = np.cross([0.0, 0.0, 1.0], fwd)

    def side_of(j: int) -> str:
        return "l" if float((sub_pts[j].mean(axis=0) - P[hips]) @ left) > 0 else "r"

    if len(leg_chains) == 2:
        sides = [side_of(lc["thigh"]) for lc in leg_chains]
        if sides[0] == sides[1]:
            a = float((P[leg_chains[0]["thigh"]] - P[leg_chains[1]["thigh"]]) @ left)
            sides = ["l", "r"] if a > 0 else ["r", "l"]
        for lc, s in zip(leg_chains, sides, strict=True):
            for k in ("thigh", "shin", "foot", "toe"):
                if lc[k] is not None:
                    out[f"{s}_{k}"] = lc[k]
    # spine up to the first branch with arms
    j = high
    while len(ch[j]) == 1:
        j = ch[j][0]
    if len(ch[j]) >= 2:
        kids = list(ch[j])
        lat = sorted(kids, key=lambda c: -float(np.abs((sub_pts[c] - P[j]) @ left).max()))
        arms = lat[:2]
        necks = [c for c in kids if c not in arms]
        if necks:
            nk = max(necks, key=lambda c: sub_pts[c][:, 2].max())
            nc = moving(chain(nk, lambda k: sub_pts[k][:, 2].max()))
            if nc:
                bare_leaf = not ch[nc[-1]] and not site_of[nc[-1]]
                out["head"] = nc[-2] if len(nc) >= 3 and bare_leaf else nc[-1]
        for a0 in arms:
            c = moving(chain(a0, lambda k: float(np.linalg.norm(sub_pts[k] - P[j], axis=1).max())))
            # hand: first joint with several children (fingers) or the last joint
            hand_i = next((i for i, k in enumerate(c) if len(ch[k]) >= 2), len(c) - 1)
            if hand_i < 2:
                continue
            s = side_of(a0)
            out[f"{s}_hand"] = c[hand_i]
            out[f"{s}_forearm"] = c[hand_i - 1]
            out[f"{s}_upper_arm"] = c[hand_i - 2]
            if hand_i >= 3:
                out[f"{s}_clavicle"] = c[hand_i - 3]
    return out


#: The fingertip roles :func:`effector_sites` places a site on (the last segment of a finger).
FINGERTIP_ROLES: tuple[str, ...] = tuple(f"{s}_{f}3" for s in SIDES for f in FINGERS)


def effector_sites(skel: Skeleton, roles: JointRoles | None = None) -> list[Site]:
    """Effector sites for a skeleton that has none, from the same roles retargeting uses.

    One site per found role among :data:`EFFECTOR_ROLES` (named as the role: ``"l_hand"``,
    ``"r_foot"``, ``"head"``...; retargeting reads these names back as the roles) at the joint
    itself, and one per fingertip (``"l_index_tip"``...) at the end of the finger's last
    segment (its single child's offset when it has one; on a leaf, 3/4 of the previous
    segment further along its line). A skeleton with no
    humanoid role at all (a prop, a tail, a robot arm) gets a site ``"<joint>_end"`` at each leaf
    joint instead (at most 8, the farthest from the root first).

    Args:
        skel: the skeleton.
        roles: its roles (default :func:`classify_joints` of ``skel``).

    Returns:
        The sites to add (none clash with ``skel``'s site names).
    """
    roles = classify_joints(skel) if roles is None else roles
    out: list[Site] = []
    taken = set(skel.site_names)
    for role in EFFECTOR_ROLES:
        jn = roles.roles.get(role)
        if jn is not None and role not in taken:
            out.append(Site(role, jn))
    fk = None
    for role in FINGERTIP_ROLES:
        jn = roles.roles.get(role)
        name = role[:-1] + "_tip"
        if jn is None or name in taken:
            continue
        j = skel.joint_index(jn)
        kids = skel.children[j]
        if len(kids) == 1:
            offset = tuple(skel.offsets[kids[0]])
        elif not kids and j > 0:
            # a leaf: the last phalanx is ~3/4 of the one before (on its line, at rest)
            fk = forward_kinematics(skel, skel.rest_q) if fk is None else fk
            d = fk.joint_positions[j] - fk.joint_positions[skel.parents[j]]
            offset = tuple(0.75 * (fk.joint_rotations[j].T @ d))
        else:
            offset = (0.0, 0.0, 0.0)
        out.append(Site(name, jn, offset))
    if not out:
        P, _ = rest_positions(skel)
        leaves = [j for j in range(skel.n_joints) if not skel.children[j] and j > 0]
        leaves.sort(key=lambda j: -float(np.linalg.norm(P[j] - P[0])))
        out = [Site(f"{skel.joint_names[j]}_end", skel.joint_names[j]) for j in leaves[:8]
               if f"{skel.joint_names[j]}_end" not in taken]
    return out
