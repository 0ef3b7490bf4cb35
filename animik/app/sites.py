"""Add and remove effector sites in the app (undoable edits of the document's skeleton).

An imported character gets its sites automatically (:func:`animik.rigs.with_auto_sites`); the
user adds one at the selected joint (Effectors panel: "Add site at <joint>") or removes the
selected one. The skeleton changes only in its sites (joints and DoFs stay), so the pose, the
mesh and the clips carry over: clips are rebound to the new skeleton and lose the effector
tracks of a removed site. No GL here.
"""

from __future__ import annotations

import dataclasses

from ..kinematics import forward_kinematics
from ..skeleton import Site, Skeleton
from .edits import USER_ERRORS, commit, describe, set_doc
from .state import FREE, AppState, Document, Effector


def _rebind(doc: Document, skel: Skeleton) -> Document:
    """``doc`` on ``skel`` (same joints and DoFs, other sites): effectors kept by site name,
    new sites free at their current position, clips rebound."""
    fk = forward_kinematics(skel, doc.q)
    old = {e.site: e for e in doc.effectors}
    effs = tuple(old.get(s) or Effector(s, FREE, fk.site_positions[i])
                 for i, s in enumerate(skel.site_names))
    keep = set(skel.site_names)
    clips = tuple(dataclasses.replace(c, skeleton=skel,
                                      effectors=tuple(t for t in c.effectors if t.site in keep))
                  for c in doc.clips)
    return doc.replace(skeleton=skel, effectors=effs, clips=clips)


def unique_site_name(skel: Skeleton, base: str) -> str:
    name, k = base, 1
    while name in skel.site_names:
        k += 1
        name = f"{base}_{k}"
    return name


def add_site(state: AppState, joint: int | str, name: str | None = None,
             offset: tuple[float, float, float] = (0.0, 0.0, 0.0)) -> str | None:
    """Add an effector site on ``joint`` (one undo step) and select it.

    Returns:
        The new site's name, or None after reporting an error in the banner.
    """
    skel = state.skeleton
    try:
        jn = skel.joint_names[skel.joint_index(joint)]
        name = unique_site_name(skel, name or f"{jn}_site")
        doc = _rebind(state.doc, skel.with_sites([Site(name, jn, offset)]))
    except USER_ERRORS as e:
        state.error(f"Cannot add a site at {joint}: {describe(e)}")
        return None
    set_doc(state, doc)
    commit(state, f"add site {name}")
    state.selected_site = name
    state.info(f"Added site {name!r} at joint {jn!r}")
    return name


def remove_site(state: AppState, site: str) -> bool:
    """Remove the effector site ``site`` (one undo step; its effector tracks go with it).

    Returns:
        True when removed (False: an error in the banner).
    """
    try:
        doc = _rebind(state.doc, state.skeleton.without_sites([site]))
    except USER_ERRORS as e:
        state.error(f"Cannot remove site {site}: {describe(e)}")
        return False
    set_doc(state, doc)
    commit(state, f"remove site {site}")
    if state.selected_site == site:
        state.selected_site = None
    if state.hover_site == site:
        state.hover_site = None
    state.info(f"Removed site {site!r}")
    return True
