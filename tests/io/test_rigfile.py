"""The TOML rig file: round trips, the file's own units, and clear errors on bad files."""

from __future__ import annotations

import math
import tomllib
from collections.abc import Mapping

import numpy as np
import pytest
from conftest import random_skeleton

from animik.errors import FileFormatError
from animik.io.rigfile import dumps_rig, loads_rig, read_rig, write_rig
from animik.skeleton import Dof, Joint, Site, Skeleton

ARRAYS = ("parents", "offsets", "rest_rotations", "dof_joint", "dof_type", "dof_axis", "lower",
          "upper", "rest_q", "site_joint", "site_offsets", "site_rotations", "masses", "coms",
          "inertias")


def plain(v):
    """Meta as plain dicts and lists (the reader returns read-only mappings and tuples)."""
    if isinstance(v, Mapping):
        return {k: plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    return v


def assert_same_skeleton(a: Skeleton, b: Skeleton, tol: float = 1e-12) -> None:
    assert a.name == b.name
    assert a.joint_names == b.joint_names
    assert a.dof_names == b.dof_names
    assert a.site_names == b.site_names
    for f in ARRAYS:
        x, y = getattr(a, f), getattr(b, f)
        assert x.shape == y.shape, f
        assert np.array_equal(np.isinf(x), np.isinf(y)), f
        fin = np.isfinite(x)
        np.testing.assert_allclose(x[fin], y[fin], rtol=0, atol=tol, err_msg=f)
    assert plain(a.meta) == plain(b.meta)


# ---------------------------------------------------------------------- round trips
@pytest.mark.parametrize("seed", range(6))
def test_round_trip_random_skeletons(tmp_path, seed):
    rng = np.random.default_rng(seed)
    skel = random_skeleton(rng, n_joints=int(rng.integers(1, 15)), n_sites=int(rng.integers(0, 5)))
    path = write_rig(skel, tmp_path / "r.toml")
    back = read_rig(path)
    assert_same_skeleton(skel, back)
    # writing what was read changes nothing beyond the last bit (general axes are normalised
    # again on reading)
    assert_same_skeleton(back, loads_rig(dumps_rig(back)), tol=1e-15)


def test_round_trip_limits_rest_and_kinds(tmp_path):
    joints = [
        Joint("root", None, (0.0, 0.0, 1.0), [
            Dof("tx", "tx"), Dof("ty", "ty", -2.0, 3.5, rest=0.25), Dof("yaw", "rz"),
            Dof("slide", "t", -0.1, 0.2, axis=(1.0, 1.0, 0.0)),
        ], mass=3.0, com=(0.0, 0.0, 0.1), inertia=np.diag([0.1, 0.2, 0.3])),
        Joint("arm", "root", (0.0, 0.2, 0.0), [
            Dof("flex", "r", np.radians(-10.0), np.radians(150.0), np.radians(30.0),
                axis=(0.0, 0.0, -1.0)),
            Dof("twist", "r", -1.0, 1.0, axis=(0.3, 0.4, 0.5)),
            Dof("pinned", "ry", 0.5, 0.5),
        ], rotation=np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]),
            mass=1.0, com=(0.0, 0.1, 0.0),
            inertia=np.array([[0.01, 0.001, 0.0], [0.001, 0.02, 0.0], [0.0, 0.0, 0.03]])),
    ]
    sites = [Site("tip", "arm", (0.0, 0.3, 0.0), np.array([[1.0, 0, 0], [0, 0, -1.0], [0, 1.0, 0]]))]
    skel = Skeleton.from_joints("kinds", joints, sites, meta={"mass_source": "made up"})
    text = dumps_rig(skel)
    back = loads_rig(text)
    assert_same_skeleton(skel, back)
    # The file speaks degrees for rotations and metres for translations, checked with an
    # independent TOML parser rather than our reader.
    doc = tomllib.loads(text)
    dofs = {d["name"]: d for j in doc["joints"] for d in j.get("dofs", [])}
    assert dofs["flex"] == {"name": "flex", "kind": "-rz", "lower_deg": -10.0, "upper_deg": 150.0,
                            "rest_deg": 30.0}
    assert dofs["ty"] == {"name": "ty", "kind": "ty", "lower": -2.0, "upper": 3.5, "rest": 0.25}
    assert dofs["tx"] == {"name": "tx", "kind": "tx"}          # free: no limits written
    assert dofs["pinned"]["lower_deg"] == pytest.approx(math.degrees(0.5), abs=1e-12)
    assert dofs["twist"]["kind"] == "r" and len(dofs["twist"]["axis"]) == 3
    assert doc["joints"][0]["inertia_diag"] == [0.1, 0.2, 0.3]
    assert "inertia" in doc["joints"][1] and "rotation" in doc["joints"][1]
    assert doc["mass_source"] == "made up" and "meta" not in doc


def test_round_trip_meta_values(tmp_path):
    meta = {
        "description": 'quotes " and \\ backslash, newline\nand tab\t, unicode µ°, DEL \x7f',
        "n": 3, "flag": True, "x": -1.5e-7, "big": 1e22, "free": math.inf,
        "empty_list": [], "empty_table": {}, "matrix": [[1.0, 2.0], [3.0, 4.0]],
        "mixed": [1, "two", 3.0, [4]],
        "points": [{"name": "a", "p": [0.0, 1.0, 2.0]}, {"name": "b", "p": [3.0, 4.0, 5.0]}],
        "nested": {"soles": {"l foot": {"joint": "l_ankle", "size": [0.2, 0.1]}}, "k": "v"},
        "np_array": np.arange(3.0), "np_scalar": np.float64(2.5),
    }
    skel = Skeleton.from_joints("m", [Joint("root", None, mass=1.0)], meta=meta)
    back = read_rig(write_rig(skel, tmp_path / "m.toml"))
    expected = plain({**meta, "np_array": [0.0, 1.0, 2.0], "np_scalar": 2.5})
    assert plain(back.meta) == expected
    # read-only: nested tables and arrays cannot be changed through a (cached) skeleton
    with pytest.raises(TypeError):
        back.meta["nested"]["k"] = "w"
    assert isinstance(back.meta["matrix"], tuple)


def test_header_and_atomic_write(tmp_path):
    skel = Skeleton.from_joints("h", [Joint("root", None, mass=1.0)])
    path = tmp_path / "h.toml"
    path.write_text("old content")
    out = write_rig(skel, path, header="generated by a test\nsecond line")
    assert out == path
    text = path.read_text()
    assert text.startswith("# generated by a test\n# second line\n")
    assert [p.name for p in tmp_path.iterdir()] == ["h.toml"]   # no temporary left behind
    assert read_rig(path).name == "h"


def test_degrees_are_written_readably():
    skel = Skeleton.from_joints("d", [Joint("root", None, dofs=[
        Dof("a", "rx", np.radians(-119.5), np.radians(45.0))], mass=1.0)])
    assert 'lower_deg = -119.5, upper_deg = 45.0' in dumps_rig(skel)


def test_bone_mass_estimate_when_mass_missing():
    text = BASE.replace("mass = 1.0\n", "")
    skel = loads_rig(text)
    assert skel.masses[0] > 0 and "estimated" in skel.meta["mass_source"]


def test_unwritable_meta_value_is_named(tmp_path):
    skel = Skeleton.from_joints("bad", [Joint("root", None, mass=1.0)],
                                meta={"outer": {"inner": None}})
    with pytest.raises(FileFormatError, match=r"meta\.outer\.inner.*NoneType"):
        write_rig(skel, tmp_path / "bad.toml")
    assert not (tmp_path / "bad.toml").exists()


def test_missing_file():
    with pytest.raises(FileNotFoundError):
        read_rig("/nonexistent/rig.toml")


# ---------------------------------------------------------------------- errors
BASE = """\
format = "animik-rig"
format_version = 1
name = "t"

[[joints]]
name = "root"
offset = [0.0, 0.0, 1.0]
mass = 1.0
dofs = [
  { name = "yaw", kind = "rz", lower_deg = -90.0, upper_deg = 90.0 },
]

[[joints]]
name = "knee"
parent = "root"
offset = [0.0, 0.0, -0.4]
mass = 1.0
dofs = [
  { name = "knee_flex", kind = "ry", lower_deg = 0.0, upper_deg = 140.0 },
]

[[sites]]
name = "foot"
joint = "knee"
offset = [0.0, 0.0, -0.4]
"""


def test_base_text_is_valid():
    skel = loads_rig(BASE, source="base.toml")
    assert skel.dof_names == ("yaw", "knee_flex")
    np.testing.assert_allclose(skel.upper, np.radians([90.0, 140.0]))


BAD_CASES = [
    # (replace this, with this, error message pattern)
    ('name = "t"', 'name = "t', r"bad\.toml: malformed TOML"),
    ('name = "t"', 'name = "t"\ncolour = "red"', r"bad\.toml: unknown key\(s\) \['colour'\]"),
    ('format_version = 1', 'format_version = 7', r"unsupported format_version 7"),
    ('format = "animik-rig"', 'format = "urdf"', r"'format' must be 'animik-rig'"),
    ('name = "t"\n', '', r"missing required field 'name'"),
    ('offset = [0.0, 0.0, -0.4]\nmass', 'mass', r"joint 'knee': missing required field 'offset'"),
    ('offset = [0.0, 0.0, -0.4]\nmass', 'offset = [0.0, -0.4]\nmass',
     r"joint 'knee': 'offset' must be an array of 3 numbers"),
    ('offset = [0.0, 0.0, -0.4]\nmass', 'offset = [0.0, 0.0, "x"]\nmass',
     r"joint 'knee': 'offset' must be a number"),
    ('parent = "root"', 'parent = "root"\nlength = 0.4', r"joint 'knee': unknown key\(s\) \['length'\]"),
    ('kind = "ry"', 'kind = "rq"', r"joint 'knee', DoF 'knee_flex': unknown kind 'rq'"),
    ('kind = "ry"', 'kind = "r"', r"DoF 'knee_flex': kind 'r' needs an 'axis'"),
    ('{ name = "knee_flex", ', '{ ', r"joint 'knee', DoF #0: missing required field 'name'"),
    ('lower_deg = 0.0, upper_deg = 140.0', 'lower = 0.0, upper = 2.4',
     r"DoF 'knee_flex': rotation DoF limits are in degrees: use \['lower_deg', 'upper_deg'\]"),
    ('kind = "ry", lower_deg = 0.0, upper_deg = 140.0', 'kind = "tz", lower_deg = 0.0',
     r"DoF 'knee_flex': translation DoF values are in metres"),
    ('lower_deg = 0.0, upper_deg = 140.0', 'lower_deg = 140.0, upper_deg = 0.0',
     r"DoF 'knee_flex': lower limit above upper limit \(140.0 deg > 0.0 deg\)"),
    ('upper_deg = 140.0', 'upper_deg = 140.0, rest_deg = 170.0',
     r"DoF 'knee_flex': rest value 170.0 deg outside the limits"),
    ('upper_deg = 140.0', 'upper_deg = 140.0, stiffness = 3', r"DoF 'knee_flex': unknown key"),
    ('parent = "root"', 'parent = "hip"', r"bad\.toml: rig 't': joint 'knee': unknown parent 'hip'"),
    ('parent = "root"\n', '', r"bad\.toml: rig 't': a skeleton needs exactly one root joint"),
    ('name = "knee"', 'name = "root"', r"duplicate joint name 'root'"),
    ('joint = "knee"', 'joint = "shin"', r"site 'foot': unknown joint 'shin'"),
    ('joint = "knee"', 'joint = "knee"\nradius = 1', r"site 'foot': unknown key"),
    ('parent = "root"', 'parent = "root"\nrotation = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 1.0, 0.0]]',
     r"joint 'knee': 'rotation' must be a proper rotation matrix"),
    ('mass = 1.0\ndofs = [\n  { name = "knee', 'mass = -1.0\ndofs = [\n  { name = "knee',
     r"joint 'knee': 'mass' must be finite and >= 0"),
    ('parent = "root"', 'parent = "root"\ninertia = [[1.0, 2.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]',
     r"joint 'knee': 'inertia' must be symmetric"),
    ('[[joints]]\nname = "root"', '[[joints]]\nname = "root"\ncom = [0.0, 0.0, 0.0]\nmass = 1.0\nmass = 2.0',
     r"malformed TOML"),
]


@pytest.mark.parametrize("old, new, pattern", BAD_CASES)
def test_bad_files_raise_clear_errors(tmp_path, old, new, pattern):
    assert old in BASE
    path = tmp_path / "bad.toml"
    path.write_text(BASE.replace(old, new, 1))
    with pytest.raises(FileFormatError, match=pattern):
        read_rig(path)


def test_meta_may_not_shadow_top_level_fields():
    text = BASE.replace('name = "t"', 'name = "t"\ndescription = "a"') + '\n[meta]\ndescription = "b"\n'
    with pytest.raises(FileFormatError, match=r"'description' is given both"):
        loads_rig(text, source="x.toml")


def test_not_utf8(tmp_path):
    path = tmp_path / "latin1.toml"
    path.write_bytes(BASE.replace('name = "t"', 'name = "t\xe9"').encode("latin-1"))
    with pytest.raises(FileFormatError, match="not UTF-8"):
        read_rig(path)
