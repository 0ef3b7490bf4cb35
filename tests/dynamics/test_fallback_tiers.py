"""plant_and_correct's tiers scheduled (animik/dynamics/correct.py ``_run_tiers``,
docs/dynamics.md 6h): the plain tier's first passes alone, then the tiers take turns and the
first feasible pass ends the filter. The result equals the tiers run one after the other (each
tier's passes depend on nothing another tier does); only the passes of tiers that lose are
skipped."""

from __future__ import annotations

import numpy as np
from conftest import SHARED_BVH, needs_shared

import animik.dynamics.correct as C
from animik.cli import main
from animik.dynamics.filter import FilterOptions
from animik.dynamics.model import with_model_of
from animik.io.bvh import read_bvh
from animik.motion import Motion
from animik.rigs import load_rig


class _Check:
    def __init__(self, bad: int):
        self.feasible = np.arange(20) >= bad


class _Res:
    def __init__(self, bad: int):
        self.check = _Check(bad)


class _Stub:
    """A tier whose passes leave the given infeasible counts (C._Tier's stopping rules)."""

    def __init__(self, name, counts, hip, log):
        self.name, self.counts, self.hip, self.log = name, list(counts), hip, log
        self.k, self.done, self.improving, self.best, self.plants = 0, False, True, None, []

    @property
    def solved(self):
        return self.best is not None and bool(self.best.check.feasible.all())

    def step(self, progress=None):
        n = self.counts[self.k]
        self.k += 1
        self.log.append((self.name, n))
        self.plants.append(self.name)
        self.done = self.k >= len(self.counts)
        if self.best is not None and n >= (~self.best.check.feasible).sum():
            self.improving = False
            self.done = self.done or not self.hip
            return
        self.improving, self.best = True, _Res(n)
        self.done = self.done or n == 0


def _tiers(plain, hip, hover):
    log: list = []
    return [_Stub("plain", plain, False, log), _Stub("hip", hip, True, log),
            _Stub("hover", hover, True, log)], log


def test_a_tier_that_wins_ends_the_losers_early():
    # mocapbank's counts (docs/dynamics.md 6h): the plain tier creeps down and stalls at 3,
    # the hip tier's first pass is feasible
    tiers, log = _tiers([17, 15, 12, 9, 3, 3], [0], [9, 9])
    best, plants = C._run_tiers(tiers)
    assert not (~best.check.feasible).any() and plants == ["hip"]
    assert log == [("plain", 17), ("plain", 15), ("hip", 0)]
    # the pirouette's: hip 12, 19, 16, 10, 16; hover 19, 14, 5, 0 -- the hip tier waits
    # once its pass does not improve, the hover tier goes on to 0
    tiers, log = _tiers([19, 18, 17, 18], [12, 19, 16, 10, 16], [19, 14, 5, 0])
    best, plants = C._run_tiers(tiers)
    assert plants == ["hover"] * 4 and not (~best.check.feasible).any()
    assert [n for t, n in log if t == "hip"] == [12, 19]
    assert log[:5] == [("plain", 19), ("plain", 18), ("hip", 12), ("hover", 19), ("plain", 17)]


def test_clips_the_plain_passes_solve_start_no_fallback():
    tiers, log = _tiers([9, 0], [0], [0])
    best, plants = C._run_tiers(tiers)
    assert plants == ["plain", "plain"] and log == [("plain", 9), ("plain", 0)]


def test_when_no_tier_wins_every_pass_runs_and_the_best_is_kept():
    # the serial order's answer: fewest infeasible frames, the earlier tier on a tie
    tiers, log = _tiers([9, 7, 8], [7, 12, 4, 4, 6], [15, 4, 9, 9, 9])
    best, plants = C._run_tiers(tiers)
    assert len(log) == 3 + 5 + 5
    assert (~best.check.feasible).sum() == 4 and plants == ["hip"] * 5


@needs_shared
def test_mocapbank_written_as_the_tiers_run_alone_with_fewer_passes(tmp_path):
    """The Mocapbank clip retargeted onto body95 needs a fallback tier (its plain passes stall,
    the hip tier's first pass is feasible): the scheduled filter returns the serial tiers' clip
    bit for bit, feasible, with no more plain passes than the plain tier runs alone and no
    hover pass. (On the tiptoe retarget before the toe-less feet stood flat, the plain tier
    alone ran 5 passes and the schedule 2; on the flat-footed one it stalls after 2 either
    way: the stub tests above keep the schedule's counts.)"""
    src = SHARED_BVH / "mocapbank" / "test_mocapbank.bvh"
    assert main(["retarget", str(src), "--to", "body95", "--out", str(tmp_path), "--quiet"]) == 0
    m = read_bvh(tmp_path / "test_mocapbank.bvh")
    m = Motion(with_model_of(m.skeleton, load_rig("body95")), m.q, m.fps)
    opt = FilterOptions().checked()
    steps: list = []
    step = C._Tier.step

    def counted(self, progress=None):
        steps.append((self.hip, self.hover))
        step(self, progress)

    C._Tier.step = counted
    try:
        res, plants = C.plant_and_correct(m, opt)
        scheduled = list(steps)
        steps.clear()
        cm = res.check.contacts
        serial, _ = C._plant_passes(m, opt, 8, cm, C.W_SMOOTH)  # main's order: plain, then hip
        assert not serial.check.feasible.all()
        hip, hip_plants = C._plant_passes(m, opt, C.HIP_PASSES, cm, C.W_SMOOTH, hip=True)
        alone = list(steps)
    finally:
        C._Tier.step = step
    assert res.check.feasible.all() and len(plants) == len(hip_plants) == 1
    assert np.array_equal(res.motion.q, hip.motion.q)
    assert scheduled.count((True, False)) == 1 and (True, True) not in scheduled
    assert scheduled.count((False, False)) <= alone.count((False, False))
