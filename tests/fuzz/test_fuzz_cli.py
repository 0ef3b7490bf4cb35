"""Fuzzing command arguments (issue 15): numeric and unit options of `animik convert`,
`animik export`, `animik info`, `animik solve` and `animik tune` given arbitrary text exit with
0 (written), 2 (bad usage) or 3/4 — never a traceback (exit 1), within the bound of
tests/fuzz/_fuzz.py. Tallied as valid results (exit 0) and clean errors (2, 3, 4)."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from _fuzz import FUZZ, TALLY, bounded, report
from hypothesis import given, settings
from hypothesis import strategies as st

from animik import anim
from animik.cli import main
from animik.io.bvh_compat import write_bvh_compatible
from animik.motion import Motion
from animik.rigs import load_rig

#: Each case runs a whole command (a file written): fewer cases than the readers' fuzz.
FUZZ_CLI = settings(FUZZ, max_examples=100)

numbers = st.one_of(
    st.sampled_from(["0", "-0", "1", "-1", "1e9", "1e-320", "1e308", "nan", "inf", "-inf", "1e999",
                     "30", "0.001", "10000", "10001", "cm", "m", "inch", "furlong", "", " ", "1,5",
                     "0x10", "1_000", "9" * 40]),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.integers(-10**12, 10**12).map(str), st.text(max_size=6))


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("cli")
    skel = load_rig("fig2")
    bvh = d / "a.bvh"
    write_bvh_compatible(Motion(skel, np.repeat(skel.rest_q[None], 3, axis=0), 30.0), bvh)
    q1 = np.array(skel.rest_q)
    q1[skel.dof_index("l_shoulder_abduction")] = 1.0
    wave = anim.clip_from_poses(skel, [0.0, 1.0], [skel.rest_q, q1], name="wave", fps=20)
    scene = d / "scene.toml"
    scene.write_text('format = "animik-scene"\nformat_version = 1\n\n[scene]\nname = "t"\n'
                     'rig = "fig2"\n\n' + anim.clips_to_toml([wave]), encoding="utf-8")
    return d, bvh, scene


def _argv(kind: str, value: str, d, bvh, scene) -> list[str]:
    out = str(d / ("o.glb" if kind == "export-glb" else "o.bvh"))
    return {
        "convert-unit": ["convert", str(bvh), out, "--unit", value],
        "export-fps": ["export", str(scene), "-o", str(d / "o.glb"), "--fps", value],
        "export-unit": ["export", str(scene), "-o", out, "--unit", value],
        "solve-tol": ["solve", "fig2", "--targets", str(d / "none.json"), "--tol", value],
        "solve-iter": ["solve", "fig2", "--targets", str(d / "none.json"),
                       "--max-iterations", value],
        "tune-problems": ["tune", "fig2", "--dry-run", "--problems", value, "--frames", "-1"],
    }[kind]


@FUZZ_CLI
@given(kind=st.sampled_from(["convert-unit", "export-fps", "export-unit", "solve-tol",
                             "solve-iter", "tune-problems"]), value=numbers)
def _arguments(files, kind, value):
    tally = TALLY.setdefault("cli arguments", Counter())
    tally["cases"] += 1
    argv = _argv(kind, value, *files)
    with bounded():
        try:
            rc = main(argv)
        except SystemExit as e:  # argparse: bad usage
            rc = e.code
    assert rc in (0, 2, 3, 4), (argv, rc)
    tally["valid results" if rc == 0 else "clean errors"] += 1


def test_arguments_exit_cleanly(files, capsys):
    _arguments(files)
    with capsys.disabled():
        print(report("cli arguments"))
