"""Natural posing (solve_ik's defaults): a reachable hand drag moves the hand's limb only, pins
are hard, an unreachable target leaves the pins in place (docs/fik.md §12)."""

from __future__ import annotations

import numpy as np
import pytest

import animik
from animik.ik import prepare_ik
from animik.semantics.stiffness import dof_regions, limb_dofs, posing_gains

PINS = ["l_foot", "r_foot"]
# drags the arm alone can reach from the rest (T-) pose: forward, towards the body (the test
# checks this premise independently: a solve with only the arm's DoFs free converges)
DRAGS = [("l_hand", (0.10, -0.10, 0.0)), ("l_hand", (0.10, -0.20, -0.10)),
         ("r_hand", (0.10, 0.10, 0.0)), ("r_hand", (0.15, 0.20, -0.05))]


def _moved(skel, q, q0, site):
    i = skel.site_index(site)
    return float(np.linalg.norm(animik.site_positions(skel, q)[i]
                                - animik.site_positions(skel, q0)[i]))


@pytest.mark.parametrize("rig", ["body95", "fig2"])
@pytest.mark.parametrize("site,d", DRAGS)
def test_reachable_hand_drag_moves_only_the_arm(rig, site, d):
    skel = animik.load_rig(rig)
    q0 = skel.rest_q
    goal = animik.site_positions(skel, q0)[skel.site_index(site)] + np.array(d)
    # independent premise: the arm alone (every other DoF held) reaches it
    arm = limb_dofs(skel, site)
    alone = animik.solve_ik(skel, q0, {site: goal}, pinned=PINS, dof_gains=arm.astype(float),
                            reference=None, max_iterations=300)
    assert alone.converged
    r = animik.solve_ik(skel, q0, {site: goal}, pinned=PINS)
    assert r.converged and r.error[site] <= 1e-3
    other = "r_hand" if site == "l_hand" else "l_hand"
    assert _moved(skel, r.q, q0, other) < 0.01
    assert _moved(skel, r.q, q0, "head") < 0.01
    for p in PINS:
        assert _moved(skel, r.q, q0, p) < 1e-6
    # the minimum-norm step of before spreads the motion over the body
    before = animik.solve_ik(skel, q0, {site: goal}, pinned=PINS, dof_gains=None,
                             reference=None, limits=True, hard_pins=False)
    assert before.converged
    assert _moved(skel, before.q, q0, other) + _moved(skel, before.q, q0, "head") > \
        _moved(skel, r.q, q0, other) + _moved(skel, r.q, q0, "head")


@pytest.mark.parametrize("rig", ["body95", "fig2"])
def test_unreachable_target_leaves_pins_in_place(rig):
    skel = animik.load_rig(rig)
    q0 = skel.rest_q
    hand = animik.site_positions(skel, q0)[skel.site_index("l_hand")]
    for goal in (hand + [0.0, 2.0, 0.0], hand + [1.0, 1.0, 1.0]):
        r = animik.solve_ik(skel, q0, {"l_hand": goal}, pinned=PINS)
        assert not r.converged
        assert skel.within_limits(r.q)
        for p in PINS:
            assert _moved(skel, r.q, q0, p) < 1e-6 and r.error[p] < 1e-6
        # the hand still gets as close as the pinned body allows (it moved towards the goal)
        assert r.error["l_hand"] < np.linalg.norm(goal - hand) - 0.05
    # the weighted compromise of before moved them by millimetres
    soft = animik.solve_ik(skel, q0, {"l_hand": hand + [0.0, 2.0, 0.0]}, pinned=PINS,
                           hard_pins=False, dof_gains=None, reference=None, limits=True)
    assert max(soft.error[p] for p in PINS) > 1e-4


def test_regions_from_topology_and_roles():
    skel = animik.load_rig("body95")
    reg = dict(zip(skel.dof_names, dof_regions(skel), strict=True))
    assert reg["pelvis_tx"] == "root" and reg["lumbar_flexion"] == "spine"
    assert reg["neck_flexion"] == "neck" and reg["l_elbow_flexion"] == "limb"
    v = posing_gains(skel)
    assert v[skel.dof_names.index("l_elbow_flexion")] == 1.0
    assert v[skel.dof_names.index("lumbar_flexion")] < 0.1
    # a robot without humanoid names: the topology rule still finds a trunk
    robot = animik.load_rig("wheeled20")
    regions = set(dof_regions(robot))
    assert "root" in regions and "limb" in regions
    arm = limb_dofs(skel, "l_hand")
    names = {skel.dof_names[i].split("_")[0] + "_" + skel.dof_names[i].split("_")[1]
             for i in np.flatnonzero(arm)}
    assert "l_clavicle" in names and "l_wrist" in names and not any("lumbar" in n for n in names)


def test_bench_posing_runs_and_reports_every_effector():
    from animik.bench.posing import run, table

    rows, _ = run(["fig2"], drags=1, frames=2, seed=0, peers=False)
    assert {(r.group, r.method) for r in rows} >= {("hands", "natural (default)"),
                                                   ("feet", "min-norm (before)"),
                                                   ("head", "natural (default)")}
    for r in rows:
        for drag, o in r.outcomes:
            assert drag.pins and drag.site not in drag.pins
            assert np.isfinite([o.reach, o.untouched, o.pins, o.rms_deg]).all()
    assert "goal met" in table(rows)


def _drag(skel, site, d, frames=15, pins=PINS):
    """An interactive drag as the app runs it: the target moves in a straight line, one
    warm-started 20-iteration solve per frame, the drag's start pose as the reference.
    Returns the final pose and the largest pin error of any frame."""
    q0 = np.array(skel.rest_q)
    start = animik.site_positions(skel, q0)[skel.site_index(site)]
    ik = prepare_ik(skel, q0, {site: start}, pinned=pins, dof_gains="regions",
                           limits=False)
    q, state, worst_pin, r = q0, None, 0.0, None
    for s in np.arange(1, frames + 1) / frames:
        r = ik.solve(q, targets={site: start + s * np.asarray(d)}, state=state,
                     max_iterations=20, reference=q0)
        q, state = r.q, r.state
        worst_pin = max(worst_pin, *(r.error[p] for p in pins))
    return r, worst_pin


# fig2's elbow rests straight on its lower limit: these targets are nearer the shoulder than
# the arm is long, so the arm must bend (bench posing drags 8 and 16 of seed 0)
FIG2_BEND_DRAGS = [("l_hand", (0.0093, -0.1416, -0.2152)), ("r_hand", (0.0973, 0.2724, 0.0756))]


@pytest.mark.parametrize("site,d", FIG2_BEND_DRAGS)
def test_fig2_drag_from_a_straight_elbow_moves_only_the_arm(site, d):
    skel = animik.load_rig("fig2")
    q0 = skel.rest_q
    elbow = skel.dof_names.index(f"{site[0]}_elbow_flexion")
    assert q0[elbow] == skel.lower[elbow]  # the premise: straight, on the limit
    r, worst_pin = _drag(skel, site, d)
    assert r.converged and r.error[site] <= 1e-3
    assert r.q[elbow] > 0.1  # the arm bent to shorten, rather than the trunk leaning
    other = "r_hand" if site == "l_hand" else "l_hand"
    assert _moved(skel, r.q, q0, other) < 0.01
    assert _moved(skel, r.q, q0, "head") < 0.01
    assert worst_pin < 1e-6


# drags past the arm's reach (the trunk joins): bench posing drags 9 and 13 of seed 0 ended
# converged with pins 2e-6 m off (the loop's tolerance is tol_position for every row)
@pytest.mark.parametrize("d", [(-0.0516, -0.2226, -0.0264), (-0.0693, -0.2199, 0.1046)])
def test_pins_stay_within_tol_pin_on_every_frame_of_a_drag(d):
    skel = animik.load_rig("fig2")
    r, worst_pin = _drag(skel, "l_hand", d)
    assert r.error["l_hand"] <= 1e-3
    assert worst_pin <= 1e-7
