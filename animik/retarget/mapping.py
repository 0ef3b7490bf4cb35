"""Joint mapping between two skeletons through canonical semantic roles.

Every joint of a humanoid skeleton is classified into a **canonical role** (``hips``,
``spine`` … ``chest``, ``neck``, ``head``, ``l_clavicle``, ``l_upper_arm``, ``l_forearm``,
``l_hand``, ``l_thigh``, ``l_shin``, ``l_foot``, ``l_toe``, fingers ``l_index1`` …), first by
name, then by topology for what the names leave open:

1. **Name normalisation** (:func:`parse_name`): the namespace is stripped (``mixamorig:Hips``
   → ``Hips``, ``Bip01 L Thigh``, ``joint_Root``), the name is split into lower-case tokens at
   separators and camel-case humps (``LeftUpLeg`` → ``left up leg``, ``lShldr`` → ``l shldr``,
   ``UpperArm_L`` → ``upper arm l``, ``LUArm`` → ``l u arm``), a side token (``left``/``l``/``lt``,
   ``right``/``r``/``rt`` at either end, or ``left``/``right`` anywhere) becomes the side, and the
   rest is looked up in the alias table :data:`ALIASES` (CMU, Daz/CGSpeed, Mixamo, Bandai
   Namco, OptiTrack/Motive (``Hip Ab Chest LUArm LFArm LThigh LShin``) and the
   Adelaide/mocapbank ``Collar Shoulder Elbow Wrist Hip Knee Ankle`` style, Axis Neuron
   (``Spine3``; the ``LeftInHandIndex`` metacarpals are ignored), 3ds Max Biped, the built-in
   rigs).
2. **Context rules**: ``Shoulder`` is the clavicle when the same side also has an ``Arm`` /
   ``UpperArm`` / ``Shldr`` joint (CMU, Mixamo, Bandai), and the upper arm when it has a
   ``Collar`` / ``Clavicle`` (OptiTrack, mocapbank, ``body95``) or nothing else; a sided ``Hip``
   is the thigh (``LeftHip``, ``l_hip``), an unsided one the pelvis (Daz ``hip``).
3. **Topology**: the hips are the lowest common ancestor of the two thighs; the spine is the
   path from the hips to the neck (``spine``, ``spine1``, …, ``chest`` by order, so chains of
   different lengths still match at both ends); the neck chain runs from there to the head.
   Roles still missing (unknown naming) come from :func:`topology_roles`, which finds legs
   (the two lowest chains below the hips), the spine (the highest), arms (the two most lateral
   chains of the chest) and sides (the lateral axis from the toes, else the file convention).

Two skeletons are then paired role by role (:func:`build_mapping`); a mapping file
(:func:`read_mapping_file`, TOML or JSON) overrides pairs, ignores joints, assigns roles and
effector sites. :attr:`JointMapping.unmapped_source` / ``unmapped_target`` (and
:func:`unmapped_joints`) report what has no counterpart.
"""

from __future__ import annotations

import json
import os
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import FileFormatError
from ..semantics.roles import (
    EFFECTOR_ROLES,
    JointRoles,
    _ancestors,
    classify_joints,
    site_role,
)
from ..skeleton import Skeleton


# ----------------------------------------------------------------------------- mapping
@dataclass(frozen=True)
class JointMapping:
    """Pairs of target and source joints, and the target's effector sites.

    Attributes:
        source: source skeleton name; ``target``: target skeleton name.
        pairs: ``((target joint, source joint), ...)`` in target joint order.
        roles: ``{target joint: canonical role}`` of the paired joints (``""`` for pairs given
            by a mapping file between joints without a role).
        effectors: ``{target site: effector role}`` (``l_hand`` ... ``head``); sites of the
            target that the IK drives.
        source_roles, target_roles: the classification of each skeleton.
        unmapped_source: source joints that drive nothing (with the reason in
            ``unmapped_reason``); ``unmapped_target``: target joints with no source (their
            rotation is interpolated along the chain or held at rest).
        origin: ``"auto"`` or the mapping file's path.
    """

    source: str
    target: str
    pairs: tuple[tuple[str, str], ...]
    roles: Mapping[str, str]
    effectors: Mapping[str, str]
    source_roles: JointRoles
    target_roles: JointRoles
    unmapped_source: tuple[str, ...]
    unmapped_target: tuple[str, ...]
    unmapped_reason: Mapping[str, str] = field(default_factory=dict)
    origin: str = "auto"

    @property
    def source_of(self) -> dict[str, str]:
        """``{target joint: source joint}``."""
        return dict(self.pairs)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary (pairs with roles, effectors, unmapped joints)."""
        return {
            "source": self.source, "target": self.target, "origin": self.origin,
            "pairs": [{"target": t, "source": s, "role": self.roles.get(t, "")}
                      for t, s in self.pairs],
            "effectors": dict(self.effectors),
            "unmapped_source": list(self.unmapped_source),
            "unmapped_target": list(self.unmapped_target),
            "unmapped_reason": dict(self.unmapped_reason),
        }


def unmapped_joints(mapping: JointMapping) -> dict[str, list[str]]:
    """``{"source": [...], "target": [...]}``: joints without a counterpart."""
    return {"source": list(mapping.unmapped_source), "target": list(mapping.unmapped_target)}


@dataclass(frozen=True)
class MappingSpec:
    """The content of a mapping file (all optional).

    Attributes:
        joints: ``{source joint: target joint}``; a target ``""`` ignores the source joint.
        effectors: ``{target site: role}`` (``l_hand`` … ``head``; ``""`` drops the site).
        source_roles, target_roles: ``{joint: canonical role}`` (``""`` excludes the joint).
        auto: also pair the remaining joints automatically (default True).
        origin: where it came from.
    """

    joints: Mapping[str, str] = field(default_factory=dict)
    effectors: Mapping[str, str] = field(default_factory=dict)
    source_roles: Mapping[str, str] = field(default_factory=dict)
    target_roles: Mapping[str, str] = field(default_factory=dict)
    auto: bool = True
    origin: str = "mapping"

    def to_dict(self) -> dict[str, Any]:
        return {"joints": dict(self.joints), "effectors": dict(self.effectors),
                "source_roles": dict(self.source_roles), "target_roles": dict(self.target_roles),
                "auto": self.auto, "origin": self.origin}


_SECTIONS = ("joints", "effectors", "source_roles", "target_roles", "auto", "origin")


def mapping_spec(data: Mapping[str, Any] | MappingSpec, origin: str = "mapping") -> MappingSpec:
    """Validate a parsed mapping document (see :func:`read_mapping_file`).

    Raises:
        FileFormatError: wrong structure (the message names the key).
    """
    if isinstance(data, MappingSpec):
        return data
    if not isinstance(data, Mapping):
        raise FileFormatError(f"{origin}: a mapping must be a table/object, got {type(data).__name__}")
    if not any(k in data for k in _SECTIONS):
        data = {"joints": data}  # a flat {source: target} document
    unknown = sorted(set(data) - set(_SECTIONS))
    if unknown:
        raise FileFormatError(f"{origin}: unknown key(s) {unknown}; a mapping has "
                              f"{list(_SECTIONS[:5])} (or is a flat {{source joint: target joint}} "
                              "table)")

    def table(key: str) -> dict[str, str]:
        t = data.get(key, {})
        if not isinstance(t, Mapping):
            raise FileFormatError(f"{origin}: {key!r} must be a table of name = name, got "
                                  f"{type(t).__name__}")
        out = {}
        for k, v in t.items():
            if v is None or v is False:
                v = ""
            if not isinstance(v, str):
                raise FileFormatError(f"{origin}: {key}[{k!r}] must be a name (string), got {v!r}")
            out[str(k)] = v
        return out

    auto = data.get("auto", True)
    if not isinstance(auto, bool):
        raise FileFormatError(f"{origin}: 'auto' must be true or false, got {auto!r}")
    if isinstance(data.get("origin"), str):
        origin = data["origin"]
    spec = MappingSpec(table("joints"), table("effectors"), table("source_roles"),
                       table("target_roles"), auto, origin)
    for k, v in spec.effectors.items():
        if v and v not in EFFECTOR_ROLES:
            raise FileFormatError(f"{origin}: effectors[{k!r}] = {v!r}; effector roles are "
                                  f"{list(EFFECTOR_ROLES)} (or '' to drop the site)")
    return spec


def read_mapping_file(path: str | os.PathLike) -> MappingSpec:
    """Read a mapping file (``.toml`` or ``.json``).

    Format (every section optional; a flat ``{source: target}`` table is ``joints``)::

        [joints]                 # source joint -> target joint ("" ignores the source joint)
        "mixamorig:Hips" = "pelvis"
        "mixamorig:LeftEye" = ""
        [effectors]              # target site -> role: l_hand r_hand l_foot r_foot head ("" drops)
        l_sole = "l_foot"
        [source_roles]           # joint -> canonical role, to help the automatic pairing
        "Bip01 Ponytail1" = ""
        [target_roles]
        auto = true              # pair the remaining joints automatically (default true)

    Raises:
        FileNotFoundError: no such file. FileFormatError: malformed or wrong structure.
    """
    p = Path(path)
    text = p.read_text(encoding="utf-8")
    suffix = p.suffix.lower()
    try:
        if suffix == ".json":
            data = json.loads(text)
        elif suffix == ".toml":
            data = tomllib.loads(text)
        else:
            raise FileFormatError(f"{p}: mapping files must be .toml or .json, got {suffix!r}")
    except (json.JSONDecodeError, ValueError) as e:
        if isinstance(e, FileFormatError):
            raise
        raise FileFormatError(f"{p}: malformed {suffix[1:].upper()}: {e}") from None
    return mapping_spec(data, origin=str(p))


def _match_chain(tgt: Sequence[int], src: Sequence[int]) -> list[tuple[int, int]]:
    """Pair two chains: top with top, bottom with bottom, the middle by relative position."""
    n, m = len(tgt), len(src)
    if n == 0 or m == 0:
        return []
    pairs = [(tgt[-1], src[-1])]
    if n >= 2 and m >= 2:
        pairs.append((tgt[0], src[0]))
        used = set()
        for i in range(1, n - 1):
            f = i / (n - 1)
            best = None
            for k in range(1, m - 1):
                if k in used:
                    continue
                d = abs(k / (m - 1) - f)
                if d < 0.5 / (m - 1) + 1e-9 and (best is None or d < best[0]):
                    best = (d, k)
            if best is not None:
                used.add(best[1])
                pairs.append((tgt[i], src[best[1]]))
    return pairs


def build_mapping(source: Skeleton, target: Skeleton, spec: MappingSpec | Mapping | None = None,
                  source_pose: np.ndarray | None = None) -> JointMapping:
    """Pair the joints of two skeletons (automatic, overridable by a mapping spec).

    Args:
        source: the motion's skeleton.
        target: the skeleton to retarget onto.
        spec: a :class:`MappingSpec` (or its dict form) from a mapping file, or None.
        source_pose: pose used for the source's geometric rules (default: its rest pose).

    Returns:
        :class:`JointMapping`.

    Raises:
        UnknownNameError: the spec names a joint or site that does not exist.
        FileFormatError: a malformed spec.
    """
    spec = mapping_spec(spec) if spec is not None else MappingSpec(origin="auto")
    src_roles = classify_joints(source, source_pose, spec.source_roles)
    tgt_roles = classify_joints(target, None, spec.target_roles)
    pairs: dict[int, int] = {}  # target joint -> source joint
    role_of: dict[int, str] = {}
    if spec.auto:
        sr, tr = src_roles.roles, tgt_roles.roles
        s_spine = [source.joint_index(j) for j in src_roles.spine]
        t_spine = [target.joint_index(j) for j in tgt_roles.spine]
        s_neck = [source.joint_index(j) for j in src_roles.neck_chain]
        t_neck = [target.joint_index(j) for j in tgt_roles.neck_chain]
        for t, s in _match_chain(t_spine, s_spine) + _match_chain(t_neck, s_neck):
            pairs[t] = s
        for role, tj in tr.items():
            if role.startswith(("spine", "chest", "neck")):
                continue
            if role in sr:
                pairs[target.joint_index(tj)] = source.joint_index(sr[role])
        tb = tgt_roles.by_joint
        for t in pairs:
            role_of[t] = tb.get(target.joint_names[t], "")
    reason: dict[str, str] = {}
    for s_name, t_name in spec.joints.items():
        s = source.joint_index(s_name)
        for t, s2 in list(pairs.items()):
            if s2 == s:
                del pairs[t]
        if not t_name:
            reason[s_name] = "ignored by the mapping file"
            continue
        t = target.joint_index(t_name)
        pairs[t] = s
        role_of[t] = tgt_roles.by_joint.get(t_name, "")
    # a source joint drives at most one target joint: keep the one closest to the root
    seen: dict[int, int] = {}
    for t in sorted(pairs):
        s = pairs[t]
        if s in seen:
            del pairs[t]
        else:
            seen[s] = t
    if not pairs:
        raise FileFormatError(
            f"cannot map skeleton {source.name!r} onto {target.name!r}: no joint pairs (source "
            f"roles {sorted(src_roles.roles)}, target roles {sorted(tgt_roles.roles)}); give a "
            "mapping file")
    # effectors
    effectors: dict[str, str] = {}
    for i, sn in enumerate(target.site_names):
        role = site_role(sn)
        if role and role not in effectors.values():
            jn = target.joint_names[target.site_joint[i]]
            if target.joint_index(jn) in pairs or _has_paired_ancestor(target, target.site_joint[i], pairs):
                effectors[sn] = role
    for sn, role in spec.effectors.items():
        target.site_index(sn)
        effectors.pop(sn, None)
        if role:
            for k in [k for k, v in effectors.items() if v == role]:
                del effectors[k]
            effectors[sn] = role
    src_used = set(pairs.values())
    sb = src_roles.by_joint
    for j, nm in enumerate(source.joint_names):
        if j in src_used or nm in reason:
            continue
        role = sb.get(nm)
        if nm in src_roles.ignored:
            reason[nm] = "not a mapped body part (hip offset, end, eye, twist...)"
        elif role:
            reason[nm] = f"role {role!r} has no counterpart in {target.name!r}"
        else:
            reason[nm] = "no canonical role recognised"
    unmapped_source = tuple(nm for j, nm in enumerate(source.joint_names) if j not in src_used)
    unmapped_target = tuple(nm for j, nm in enumerate(target.joint_names) if j not in pairs)
    ordered = tuple((target.joint_names[t], source.joint_names[pairs[t]]) for t in sorted(pairs))
    return JointMapping(
        source=source.name, target=target.name, pairs=ordered,
        roles={target.joint_names[t]: role_of.get(t, "") for t in sorted(pairs)},
        effectors=effectors, source_roles=src_roles, target_roles=tgt_roles,
        unmapped_source=unmapped_source, unmapped_target=unmapped_target,
        unmapped_reason={k: reason[k] for k in unmapped_source if k in reason},
        origin=spec.origin)


def _has_paired_ancestor(skel: Skeleton, j: int, pairs: Mapping[int, int]) -> bool:
    return any(a in pairs for a in _ancestors(skel, int(j)))
