"""Issue 15 item 11, scene files: an over-long rig name, a solver name that is not a string and
bad solver options are FileFormatError / RigNotFoundError when the scene loads."""

from __future__ import annotations

import pytest

from animik.errors import FileFormatError, RigNotFoundError
from animik.scene import loads_scene

BASE = 'format = "animik-scene"\nformat_version = 1\n[scene]\nrig = "%s"\n'


@pytest.mark.parametrize("rig", ["x" * 300, "x" * 300 + ".toml", "a/" * 200 + "b.bvh"])
def test_overlong_rig_name_is_rig_not_found(rig):
    with pytest.raises(RigNotFoundError):
        loads_scene(BASE % rig)


@pytest.mark.parametrize("solver, match", [
    ('[solver]\nname = ["fik"]\n', "name"),
    ('[solver]\nname = 3\n', "name"),
    ('[solver]\nname = "fik"\n[solver.options]\nbogus = 1\n', "bogus"),
    ('[solver]\nname = "fik_fixed"\n[solver.options]\nbogus = 1\n', "bogus"),
    ('[solver]\nname = "dls"\n[solver.options]\nmax_iterations = -3\n', "max_iterations"),
    ('[solver]\nname = "jt"\n[solver.options]\ntol_position = "small"\n', "tol_position"),
    ('[solver]\nname = "fik"\n[solver.options]\ndof_gains = "x"\n', "dof_gains"),
])
def test_solver_settings_checked_when_the_scene_loads(solver, match):
    with pytest.raises(FileFormatError, match=match):
        loads_scene(BASE % "fig2" + solver)


def test_good_solver_options_still_load():
    sc = loads_scene(BASE % "fig2" + '[solver]\nname = "fik"\n[solver.options]\nmax_iterations = 30\n')
    assert sc.solver_options["max_iterations"] == 30
    assert isinstance(sc.solver, str)
