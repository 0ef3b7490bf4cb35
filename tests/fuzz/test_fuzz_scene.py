"""Fuzzing scene files (issue 15): line-level mutations of the shipped scenes (a line dropped
or repeated, a value replaced by an odd TOML literal, a stray line) load as a Scene or raise an
AnimikError, within the bound of tests/fuzz/_fuzz.py."""

from __future__ import annotations

from _fuzz import FUZZ, ROOT, report, run_case
from hypothesis import given
from hypothesis import strategies as st

from animik.scene import Scene, loads_scene

SCENES = sorted((ROOT / "scenes").glob("*.toml"))
TEXTS = [p.read_text(encoding="utf-8") for p in SCENES]

LITERALS = ['"x"', '""', "-1", "0", "1", "1e308", "-1e308", "nan", "inf", "-inf", "[]", "{}",
            '["fik"]', "[1, 2]", "[0.0, 0.0, 1e308]", "[nan, 0, 0]", "true", '"' + "x" * 300 + '"',
            '"../../etc/passwd"', '"/dev/zero"', '"scenes/default.toml"', "9999999999999999999",
            '"fik_fixed"', '"dls"', '{ bogus = 1 }', "1979-05-27", '"a\\u0000b"']
STRAY = ["[solver]", "[solver.options]", "[[targets]]", "[[clips]]", "[camera]", 'bogus = 1',
         'rig = "body95"', 'name = ["fik"]', "[scene]", "[pose]", 'site = "tail"', "x = [",
         'max_iterations = -5', 'gain = "hinf"', 'tuning = "nope.toml"']

mutation = st.tuples(st.sampled_from(["delete", "duplicate", "value", "stray"]),
                     st.integers(0, 2**31), st.integers(0, 2**31))


def _apply(text: str, muts) -> str:
    lines = text.splitlines()
    for op, pos, pick in muts:
        if not lines:
            break
        i = pos % len(lines)
        if op == "delete":
            del lines[i]
        elif op == "duplicate":
            lines.insert(i, lines[i])
        elif op == "value" and "=" in lines[i]:
            lines[i] = lines[i].split("=", 1)[0] + "= " + LITERALS[pick % len(LITERALS)]
        elif op == "stray":
            lines.insert(i, STRAY[pick % len(STRAY)])
    return "\n".join(lines) + "\n"


def _valid(sc) -> None:
    assert isinstance(sc, Scene)


@FUZZ
@given(scene=st.sampled_from(range(len(TEXTS))), muts=st.lists(mutation, min_size=1, max_size=3))
def _mutated_scene(scene, muts):
    text = _apply(TEXTS[scene], muts)
    run_case("scene", lambda: loads_scene(text, base_dir=ROOT / "scenes",
                                          source=str(SCENES[scene])),
             _valid)


def test_mutated_scene_loads_or_fails_cleanly():
    _mutated_scene()
    print(report("scene"))
