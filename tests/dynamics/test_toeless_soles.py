"""Soles of toe-less BVH feet (``LeftAnkle`` -> end site): the sole ends at the end site, the
tip of the toes (docs/dynamics.md 5j, "Raw mocapbank: its soles, not the filter").

Main derived them like a toe joint with no children, the front 0.5 x the ankle-to-end-site
length *past* the end site: on raw mocapbank, whose right foot points down in the one-leg squat
with the toe tip on the floor, those front corners went 10 cm below the toe tip, the floor was
estimated there, and the standing left foot (still, its toe tip on the true floor) was never in
contact: 455 of 455 frames infeasible, and the filter moved the body 32 cm to make it feasible.
"""

from __future__ import annotations

import json

import numpy as np
from conftest import SHARED_BVH, needs_shared

from animik.cli import main
from animik.dynamics.clip import check_clip
from animik.dynamics.contacts import contact_model_for_clip, derive_soles
from animik.io.bvh import read_bvh
from animik.kinematics import forward_kinematics

MOCAPBANK = SHARED_BVH / "mocapbank" / "test_mocapbank.bvh"


@needs_shared
def test_toeless_sole_ends_at_the_end_site():
    m = read_bvh(MOCAPBANK)
    skel = m.skeleton
    fk = forward_kinematics(skel, skel.rest_q)
    soles = derive_soles(skel)
    for side, name in (("l", "LeftAnkle"), ("r", "RightAnkle")):
        f = skel.joint_index(name)
        ((j, pts),) = soles[f"{side}_foot"]
        assert j == f
        world = fk.joint_positions[f] + pts @ fk.joint_rotations[f].T
        up = fk.joint_positions[int(skel.parents[f])] - fk.joint_positions[f]
        up /= np.linalg.norm(up)
        end = fk.site_positions[[s for s in range(skel.n_sites) if skel.site_joint[s] == f]][0]
        d = end - fk.joint_positions[f]
        fwd = d - (d @ up) * up
        fwd /= np.linalg.norm(fwd)
        reach = (world - fk.joint_positions[f]) @ fwd
        # the two front corners as far ahead of the ankle as the end site (main: 1.5 x)
        assert np.allclose(np.sort(reach)[2:], d @ fwd, atol=1e-9)
        assert reach.min() < 0  # and the heel behind the ankle


@needs_shared
def test_raw_mocapbank_stance_foot_in_contact_and_filtered_close_to_the_input(tmp_path):
    m = read_bvh(MOCAPBANK)
    cm = contact_model_for_clip(m.skeleton, m.q)
    chk = check_clip(m, contacts=cm)
    left = cm.names.index("l_foot")
    # the left foot stands still through the whole clip: in contact on every frame (main: on
    # none, 7 cm above a floor estimated under the right foot's modelled toe)
    assert chk.check.in_contact[:, left].all()
    assert (~chk.feasible).sum() < 100  # main: 455 of 455
    out, rep = tmp_path / "mb.bvh", tmp_path / "mb.json"
    assert main(["filter", str(MOCAPBANK), "-o", str(out), "--plant", "--json", str(rep)]) == 0
    r = json.loads(rep.read_text())
    # close to the capture (main: RMS 26.7 deg, max 166 deg, root 32 cm, skate 0 -> 32 cm)
    assert r["rms_joint_change_deg"] < 1.0
    assert r["root_shift_cm"]["max"] < 2.0
    assert main(["feasibility", str(out), "--every", "0"]) == 0
