"""Fuzzing the glTF character reader (issue 12): the mutations of tests/fuzz/test_fuzz_gltf.py
applied to the skinned Khronos samples and to a character animik exports — every case loads a
consistent Character or raises an AnimikError, within the bound of tests/fuzz/_fuzz.py."""

from __future__ import annotations

import numpy as np
from _fuzz import FUZZ, report, run_case
from hypothesis import given
from hypothesis import strategies as st
from test_fuzz_gltf import _glb_bytes, _mutate, _shared_glbs, _split, mutation

from animik.character import Character
from animik.io.gltf import dumps_glb
from animik.io.gltf_character import loads_character


def _seeds() -> list[tuple[dict, bytes]]:
    out = []
    for name, data in _shared_glbs():
        out.append(_split(data))
        ch = loads_character(data, source=name)
        out.append(_split(dumps_glb(ch.clips[0], mesh=ch)))
    return out


SEEDS = _seeds()


def _valid(ch: Character) -> None:
    assert isinstance(ch, Character) and ch.mesh is not None
    m = ch.mesh
    assert np.all(np.isfinite(m.positions)) and np.all(np.isfinite(m.inverse_bind))
    assert np.allclose(m.weights.sum(axis=1), 1.0, atol=1e-3)
    for c in ch.clips:
        assert np.all(np.isfinite(c.q)) and c.q.shape == (c.n_frames, ch.skeleton.n_dof)


@FUZZ
@given(seed=st.integers(0, 3), muts=st.lists(mutation, min_size=1, max_size=3))
def _mutated_character(seed, muts):
    if not SEEDS:
        return
    js, blob = _mutate(*SEEDS[seed % len(SEEDS)], muts)
    data = _glb_bytes(js, blob)
    run_case("glb character", lambda: loads_character(data), _valid)


def test_mutated_character_loads_or_fails_cleanly():
    _mutated_character()
    print(report("glb character"))
