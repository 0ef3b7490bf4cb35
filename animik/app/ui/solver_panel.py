"""Solver panel: solver choice and its options, applied live; one undo step per widget edit.

FIK (seed A) gets a hand-made layout of its real options (read from ``animik.ik.fik.DEFAULTS``;
options that module does not have are not shown): the filter constant ``A``, the step ``h``, the
gain ``P`` mode, the per-DoF gains ``V``, the iteration budget and the null-space terms (joint
limits, rest-pose pull). Other solvers get a generic form built from their ``DEFAULTS``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from imgui_bundle import imgui

from .. import actions
from ..state import AppState

DIM = (0.65, 0.67, 0.70, 1.0)
CHOICES = {
    "adaptive": ("none", "lm", "manipulability"),
    "ladder": ("geometric", "linear"),
    "refresh": ("auto", "always", "once"),
    "cold_start": ("bumpless", "zero"),
}
FIK_GAINS = ("full", "scalar", "hinf")
# options drawn by hand in the FIK layout, or not editable from the panel
FIK_SPECIAL = {"A", "h", "gain", "damping", "gain_scale", "dof_gains", "limits", "limit_gain",
               "limit_margin", "reference", "reference_gain", "reference_weights", "tol_position",
               "tol_rotation", "tuning", "hinf_m", "hinf_w", "hinf_s", "hinf_v1", "max_step"}
SKIP = {"state", "callback", "max_iterations", "tuning", "reference_weights", "compensate_dofs"}


def effective_defaults(state: AppState, name: str) -> dict[str, Any]:
    """The option values a solver uses when the panel sets none (FIK: with stored tuning)."""
    d = actions.solver_defaults(name)
    if name == "fik":
        try:
            from ...ik import fik

            d = dict(fik.resolve_options(state.skeleton, {}))
        except (ImportError, AttributeError, Exception):  # tuning file problems: plain defaults
            pass
    for k in ("state", "callback", "max_iterations"):
        d.pop(k, None)
    d.update({k: v for k, v in actions.APP_TOLERANCES.items() if k in d})
    return d


class _Edit:
    """Helper applying one option change and committing when the widget edit ends."""

    def __init__(self, state: AppState):
        self.state = state
        self.settings = state.doc.solver
        self.defaults = effective_defaults(state, self.settings.name)

    def value(self, key: str) -> Any:
        cur = self.settings.current
        return cur[key] if key in cur else self.defaults.get(key)

    def set(self, key: str, value: Any) -> None:
        self.settings = self.settings.with_option(key, value)
        actions.set_solver(self.state, self.settings)

    def end(self, label: str) -> None:
        """Call right after the widget: commits when its edit is finished."""
        if imgui.is_item_deactivated_after_edit():
            actions.commit(self.state, label)

    def commit_now(self, label: str) -> None:
        actions.commit(self.state, label)


def draw_solver_panel(state: AppState) -> None:
    if imgui.begin("Solver")[0]:
        s = state.doc.solver
        names = actions.available_solvers()
        idx = names.index(s.name) if s.name in names else 0
        imgui.set_next_item_width(-90)
        ch, i = imgui.combo("solver", idx, names)
        if ch and names[i] != s.name:
            actions.set_solver(state, s.replace(name=names[i]))
            actions.commit(state, f"solver {names[i]}")
        _, state.live_ik = imgui.checkbox("live IK (I)", state.live_ik)
        imgui.same_line()
        r = state.ik.last_result
        if state.ik.failed:
            imgui.text_colored((0.95, 0.35, 0.3, 1.0), "failed")
        else:
            imgui.text_colored(DIM, (r.reason if r is not None else "") or "idle")
        imgui.set_next_item_width(-90)
        ch, it = imgui.slider_int("iterations", int(s.iterations), 1, 200, "%d / frame",
                                  imgui.SliderFlags_.logarithmic)
        if ch:
            actions.set_solver(state, state.doc.solver.replace(iterations=max(1, int(it))))
        if imgui.is_item_deactivated_after_edit():
            actions.commit(state, "iterations per frame")
        imgui.separator()
        ed = _Edit(state)
        if state.doc.solver.name == "fik":
            _fik(ed)
        else:
            _generic(ed, set())
        imgui.separator()
        if imgui.button("Defaults"):
            actions.set_solver(state, state.doc.solver.replace(options={}))
            actions.commit(state, "solver defaults")
        if imgui.is_item_hovered():
            imgui.set_tooltip("Forget this solver's edited options")
    imgui.end()


def _float(ed: _Edit, key: str, label: str, lo: float, hi: float, fmt: str = "%.3f",
           log: bool = False, tip: str = "") -> None:
    if key not in ed.defaults and key not in ed.settings.current:
        return
    v = ed.value(key)
    v = float(v) if v is not None else lo
    flags = imgui.SliderFlags_.always_clamp | (imgui.SliderFlags_.logarithmic if log else 0)
    imgui.set_next_item_width(-90)
    ch, nv = imgui.slider_float(label, v, lo, hi, fmt, flags)
    if ch and math.isfinite(nv):
        ed.set(key, float(nv))
    ed.end(f"solver {key}")
    if tip and imgui.is_item_hovered():
        imgui.set_tooltip(tip)


def _fik(ed: _Edit) -> None:
    state = ed.state
    imgui.text_colored(DIM, "Feedback IK (variable step, eqs 9d-9e)")
    h = float(ed.value("h") or 1.0)
    A = float(ed.value("A") or -1.0)
    # stability of z <- (1 + hA) z + ...: h |A| <= 2 (the solver rejects larger)
    _float(ed, "A", "A", -2.0 / max(h, 1e-6), -1e-3, "%.3f",
           tip="filter constant (< 0); stable while h*|A| <= 2")
    _float(ed, "h", "h", 1e-3, min(4.0, 2.0 / max(abs(A), 1e-6)), "%.3f", log=True,
           tip="integration step (start and largest value of the adaptive step)")
    if "gain" in ed.defaults:
        g = ed.value("gain")
        gi = FIK_GAINS.index(g) if isinstance(g, str) and g in FIK_GAINS else 0
        imgui.set_next_item_width(-90)
        ch, gi = imgui.combo("P mode", gi, list(FIK_GAINS))
        if ch:
            ed.set("gain", FIK_GAINS[gi])
            ed.commit_now("solver gain")
        if imgui.is_item_hovered():
            imgui.set_tooltip("gain P: full = (J V J^T + mu I)^-1; scalar = c / tr(J V J^T) I;\n"
                              "hinf = the H-infinity Riccati solution (eq 13)")
        g = FIK_GAINS[gi]
        if g == "full":
            _float(ed, "damping", "damping", 1e-6, 1.0, "%.1e", log=True,
                   tip="mu, relative to the mean diagonal of J V J^T")
        elif g == "scalar":
            _float(ed, "gain_scale", "gain scale", 1e-3, 2.0, "%.3f", log=True)
        else:
            _float(ed, "hinf_m", "hinf m", 0.01, 100.0, "%.2f", log=True)
            _float(ed, "hinf_w", "hinf w", 0.01, 100.0, "%.2f", log=True)
            _float(ed, "hinf_v1", "hinf v1", 1e-3, 100.0, "%.3f", log=True)
    _float(ed, "tol_position", "tolerance", 1e-5, 1e-2, "%.5f m", log=True)
    _float(ed, "max_step", "max step", 0.01, 2.0, "%.2f", log=True,
           tip="largest change of one DoF per iteration (rad or m)")
    if "dof_gains" in ed.defaults and imgui.tree_node("V (per-DoF gains)"):
        _dof_gains(ed)
        imgui.tree_pop()
    imgui.separator()
    imgui.text_colored(DIM, "Null space (eqs 9f-9j)")
    if "limits" in ed.defaults:
        ch, on = imgui.checkbox("joint limits", bool(ed.value("limits")))
        if ch:
            ed.set("limits", bool(on))
            ed.commit_now("solver limits")
        if imgui.is_item_hovered():
            imgui.set_tooltip("push DoFs away from their limits without moving the effectors\n"
                              "(the hard clamp is always on)")
        if on:
            _float(ed, "limit_gain", "limit gain", 0.0, 1.0, "%.3f")
            _float(ed, "limit_margin", "limit margin", 0.01, 1.0, "%.2f")
    if "reference" in ed.defaults:
        ref = ed.value("reference")
        ch, on = imgui.checkbox("rest-pose pull", ref is not None)
        if ch:
            skel = state.skeleton
            if on:
                ed.set("reference", {n: float(v) for n, v in zip(skel.dof_names, skel.rest_q,
                                                                 strict=True)})
            else:
                ed.settings = ed.settings.without_option("reference")
                actions.set_solver(state, ed.settings)
            ed.commit_now("solver rest pull")
        if imgui.is_item_hovered():
            imgui.set_tooltip("pull every DoF towards the rest pose in the null space")
        if ref is not None or on:
            _float(ed, "reference_gain", "pull gain", 0.0, 1.0, "%.3f")
    shown = FIK_SPECIAL | SKIP
    rest = [k for k in ed.defaults if k not in shown]
    if rest and imgui.tree_node("More options"):
        _generic(ed, shown)
        imgui.tree_pop()


def _dof_gains(ed: _Edit) -> None:
    skel = ed.state.skeleton
    cur = ed.value("dof_gains")
    gains = np.ones(skel.n_dof)
    if isinstance(cur, dict) or hasattr(cur, "items"):
        for k, v in cur.items():
            if k in skel.dof_names:
                gains[skel.dof_index(k)] = float(v)
    elif cur is not None:
        arr = np.asarray(cur, float)
        if arr.shape == (skel.n_dof,):
            gains = arr.copy()
    uni = float(np.mean(gains)) if skel.n_dof else 1.0
    imgui.set_next_item_width(-90)
    ch, nv = imgui.slider_float("all DoFs", uni, 0.0, 4.0, "%.2f")
    if ch:
        gains[:] = nv
        _set_gains(ed, gains)
    ed.end("solver V")
    trans = skel.dof_type == 1
    if trans.any():
        imgui.set_next_item_width(-90)
        ch, nv = imgui.slider_float("translations", float(gains[trans].mean()), 0.0, 4.0, "%.2f")
        if ch:
            gains[trans] = nv
            _set_gains(ed, gains)
        ed.end("solver V")
    if imgui.tree_node("each DoF"):
        imgui.begin_child("##v", (0, min(300, 24 * skel.n_dof + 8)))
        for k, name in enumerate(skel.dof_names):
            imgui.set_next_item_width(-150)
            ch, nv = imgui.drag_float(f"{name}##v{k}", float(gains[k]), 0.01, 0.0, 10.0, "%.2f",
                                      imgui.SliderFlags_.always_clamp)
            if ch:
                gains[k] = nv
                _set_gains(ed, gains)
            ed.end(f"solver V {name}")
        imgui.end_child()
        imgui.tree_pop()


def _set_gains(ed: _Edit, gains: np.ndarray) -> None:
    skel = ed.state.skeleton
    if np.allclose(gains, 1.0):
        ed.settings = ed.settings.without_option("dof_gains")
        actions.set_solver(ed.state, ed.settings)
        return
    if not np.any(gains > 0):
        gains = gains.copy()
        gains[:] = 1e-3
    ed.set("dof_gains", {n: float(g) for n, g in zip(skel.dof_names, gains, strict=True)
                         if g != 1.0})


def _generic(ed: _Edit, skip: set[str]) -> None:
    for key, default in ed.defaults.items():
        if key in skip or key in SKIP:
            continue
        v = ed.value(key)
        imgui.set_next_item_width(-130)
        if isinstance(default, bool):
            ch, nv = imgui.checkbox(key, bool(v))
            if ch:
                ed.set(key, bool(nv))
                ed.commit_now(f"solver {key}")
        elif isinstance(default, int):
            ch, nv = imgui.drag_int(key, int(v), 1.0, 0, 100000)
            if ch:
                ed.set(key, int(nv))
            ed.end(f"solver {key}")
        elif isinstance(default, float):
            fv = float(v)
            fmt = "%.2e" if fv != 0 and (abs(fv) < 1e-2 or abs(fv) >= 1e4) else "%.4f"
            speed = max(abs(fv) * 0.01, 1e-6)
            ch, nv = imgui.drag_float(key, fv, speed, 0.0, 0.0, fmt)
            if ch and math.isfinite(nv):
                ed.set(key, float(nv))
            ed.end(f"solver {key}")
        elif isinstance(default, str) and key in CHOICES:
            opts = CHOICES[key]
            i = opts.index(v) if v in opts else 0
            ch, i = imgui.combo(key, i, list(opts))
            if ch:
                ed.set(key, opts[i])
                ed.commit_now(f"solver {key}")
        else:
            imgui.text_colored(DIM, f"{key} = {v!r}")
