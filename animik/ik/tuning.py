"""Tuning of feedback IK (seed A): the H∞ design and the stored tunings the solver reads.

The constant-gain procedure that produces a tuning (``animik tune RIG``) is
:mod:`animik.ik.autotune` (it runs the solver; this module is below it: the solver reads the
stored tuning and the H∞ gain from here).

**H∞ design** (eq 13): ``P = v1 · Pa`` with ``Pa`` the stabilising solution of
``Mᵀ Pa + Pa M − Pa (B2 V B2ᵀ − s⁻² B1 B1ᵀ) Pa + Cᵀ C = 0``, ``B1 = I``, ``B2 = −J(q0)``,
``M = −m_i I``, ``Cᵀ C = w² I``, and the smallest feasible ``s`` found by the source's halving
from ``s = 100`` (refined by bisection). Reconstruction choices (docs/fik.md):

* the quadratic term uses ``B2 V B2ᵀ`` where the source prints ``V⁻¹``: the control weight is
  ``R = V⁻¹`` (a DoF allowed to move faster is penalised less), which makes the optimal
  feedback ``V B2ᵀ Pa`` — eq 9d's ``V Jᵀ P`` up to the sign of ``B2``; for graphics ``V = I``
  and both readings agree;
* ``Cᵀ C = w² I`` (the source's ``C`` stacks a ``w I`` block between zero blocks);
* the quadratic term is **indefinite** (``B2 V B2ᵀ`` positive, ``−s⁻² I`` negative), so this is
  an H∞ (game) Riccati equation, not an LQR one: it is solved as a CARE with the stacked input
  ``B = [B2, B1]`` and the indefinite weight ``R = diag(V⁻¹, −s² I)`` (scipy's
  ``solve_continuous_are`` works on the extended pencil and accepts an indefinite ``R``), or by
  the stable invariant subspace of the Hamiltonian matrix; a solution counts only if it is
  symmetric, positive definite and stabilising (``M − (B2 V B2ᵀ − s⁻² I) Pa`` Hurwitz);
* with these isotropic choices the equation decouples in the eigenvectors of ``J V Jᵀ``
  (eigenvalues ``λ``): ``p = w² / (m_i + sqrt(m_i² + (λ − s⁻²) w²))``, feasible iff
  ``s > s* = 1 / sqrt(λ_min + m_i²/w²)``. The solver uses this closed form at the current pose
  (:func:`hinf_gain`); :func:`hinf_riccati` (the general solver) agrees with it to rounding.

**Storage.** A tuning is a small TOML file (:class:`FIKTuning`): built-in rigs keep theirs as
``assets/rigs/NAME.tuning.toml``; other skeletons in the user config directory
(``$ANIMIK_CONFIG_DIR``, else ``$XDG_CONFIG_HOME/animik``, else ``~/.config/animik``) under
``tuning/NAME-FINGERPRINT.tuning.toml``. The fingerprint hashes the skeleton's structure, so a
tuning is never applied to a different (or edited) skeleton; ``solve_ik(..., solver="fik")``
loads the matching tuning by default (``tuning=False`` ignores it).
"""

from __future__ import annotations

import hashlib
import math
import os
import warnings
import weakref
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import FileFormatError, UnknownNameError, ValueRangeError
from ..io._atomic import atomic_write
from ..skeleton import Skeleton

FORMAT = "animik-fik-tuning"
FORMAT_VERSION = 1

# options a tuning file may set (a subset of animik.ik.fik.DEFAULTS)
TUNABLE = ("A", "h", "h_min", "gain", "damping", "gain_scale", "refresh", "refresh_ratio",
           "refresh_dq", "max_step", "hinf_m", "hinf_w", "hinf_s", "hinf_v1", "dof_gains",
           "limit_gain", "limit_margin", "max_iterations")


# --------------------------------------------------------------------------- stored tuning
@dataclass(frozen=True, eq=False)
class FIKTuning:
    """A stored FIK tuning: solver options for one skeleton plus how they were obtained.

    Attributes:
        rig: skeleton name.
        fingerprint: structural hash of the skeleton (:func:`fingerprint`), "" if unknown.
        options: solver options (a subset of :data:`animik.ik.fik.DEFAULTS`).
        measured: figures recorded by :func:`tune` (success rate, iterations...).
        hinf: the H∞ design of eq 13 (``m``, ``w``, ``s``, ``s_min``, ``v1``...), if any.
        source: where it was read from.
    """

    rig: str = ""
    fingerprint: str = ""
    options: Mapping[str, Any] = field(default_factory=dict)
    measured: Mapping[str, Any] = field(default_factory=dict)
    hinf: Mapping[str, Any] = field(default_factory=dict)
    source: str = ""

    @classmethod
    def from_mapping(cls, options: Mapping[str, Any], source: str = "") -> FIKTuning:
        """A tuning made of solver options only (validated names)."""
        bad = sorted(set(options) - set(TUNABLE))
        if bad:
            raise UnknownNameError(f"{source or 'tuning'}: unknown tuning option(s) {bad}; tunable "
                             f"options are {sorted(TUNABLE)}")
        return cls(options=dict(options), source=source)


def fingerprint(skel: Skeleton) -> str:
    """Short hash of a skeleton's structure (names, tree, offsets, axes, limits, sites)."""
    h = hashlib.sha1()
    for names in (skel.joint_names, skel.dof_names, skel.site_names):
        h.update("\0".join(names).encode())
        h.update(b"\1")
    for arr in (skel.parents, skel.dof_joint, skel.dof_type, skel.site_joint):
        h.update(np.ascontiguousarray(arr, dtype=np.int64).tobytes())
    for arr in (skel.offsets, skel.rest_rotations, skel.dof_axis, skel.site_offsets,
                skel.site_rotations, skel.lower, skel.upper):
        a = np.round(np.asarray(arr, dtype=float), 9)
        h.update(np.where(np.isfinite(a), a, 1e300).tobytes())
    return h.hexdigest()[:16]


def user_config_dir() -> Path:
    """``$ANIMIK_CONFIG_DIR``, else ``$XDG_CONFIG_HOME/animik``, else ``~/.config/animik``."""
    env = os.environ.get("ANIMIK_CONFIG_DIR")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CONFIG_HOME")
    return (Path(xdg) if xdg else Path.home() / ".config") / "animik"


def _builtin_name(skel: Skeleton, fp: str) -> str | None:
    from .. import rigs

    if skel.name not in rigs.BUILTIN_RIGS:
        return None
    try:
        ref = rigs.load_rig(skel.name)
    except Exception:  # a broken asset must not break solving
        return None
    return skel.name if (ref is skel or fingerprint(ref) == fp) else None


def tuning_path(skel: Skeleton) -> Path:
    """Where the tuning of ``skel`` is stored (built-in: next to the rig file; else the user
    config directory, keyed by name and fingerprint)."""
    fp = fingerprint(skel)
    name = _builtin_name(skel, fp)
    if name is not None:
        from .. import rigs

        local = rigs.source_rig_dir()
        if local is not None:
            return local / f"{name}.tuning.toml"
        with_res = rigs.packaged_rig_dir() / f"{name}.tuning.toml"
        return Path(str(with_res))
    safe = "".join(c if (c.isalnum() or c in "-_") else "_" for c in skel.name) or "skeleton"
    return user_config_dir() / "tuning" / f"{safe}-{fp}.tuning.toml"


_LOADED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_MISSING = object()


def load_tuning(skel: Skeleton) -> FIKTuning | None:
    """The stored tuning of ``skel`` (cached), or None. A file whose fingerprint does not
    match the skeleton is ignored with a warning."""
    hit = _LOADED.get(skel, _MISSING)
    if hit is not _MISSING:
        return hit
    t = None
    path = tuning_path(skel)
    if path.is_file():
        try:
            t = read_tuning(path)
        except (FileFormatError, UnknownNameError, OSError) as e:
            warnings.warn(f"ignoring FIK tuning {path}: {e}", stacklevel=3)
            t = None
        if t is not None and t.fingerprint and t.fingerprint != fingerprint(skel):
            warnings.warn(f"ignoring FIK tuning {path}: it was made for a different version of "
                          f"skeleton {skel.name!r} (run `animik tune` again)", stacklevel=3)
            t = None
    _LOADED[skel] = t
    return t


_GENERATION = [0]  # bumped whenever loaded tunings may have changed (solver caches check it)


def clear_tuning_cache() -> None:
    """Forget loaded tunings (after writing a new one)."""
    _LOADED.clear()
    _GENERATION[0] += 1


def read_tuning(path: str | os.PathLike) -> FIKTuning:
    """Read a tuning TOML file.

    Raises:
        FileFormatError: malformed file or unknown options.
    """
    import tomllib

    p = Path(path)
    try:
        doc = tomllib.loads(p.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as e:
        raise FileFormatError(f"{p}: malformed TOML: {e}") from None
    if doc.get("format") != FORMAT:
        raise FileFormatError(f"{p}: not an FIK tuning file (format must be {FORMAT!r})")
    if int(doc.get("format_version", 0)) > FORMAT_VERSION:
        raise FileFormatError(f"{p}: format_version {doc.get('format_version')} is newer than "
                              f"this animik understands ({FORMAT_VERSION})")
    opts = dict(doc.get("options", {}))
    bad = sorted(set(opts) - set(TUNABLE))
    if bad:
        raise FileFormatError(f"{p}: unknown option(s) {bad}; tunable options are "
                              f"{sorted(TUNABLE)}")
    if "dof_gains" in opts and isinstance(opts["dof_gains"], Mapping):
        opts["dof_gains"] = {str(k): float(v) for k, v in opts["dof_gains"].items()}
    return FIKTuning(rig=str(doc.get("rig", "")), fingerprint=str(doc.get("fingerprint", "")),
                     options=opts, measured=dict(doc.get("measured", {})),
                     hinf=dict(doc.get("hinf", {})), source=str(p))


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        f = float(v)
        if math.isnan(f):
            return "nan"
        if math.isinf(f):
            return "inf" if f > 0 else "-inf"
        return repr(f)
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, (list, tuple, np.ndarray)):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    raise TypeError(f"cannot write {type(v).__name__} to TOML")


def _toml_table(name: str, d: Mapping[str, Any]) -> list[str]:
    lines = [f"[{name}]"]
    sub = []
    for k, v in d.items():
        if v is None:
            continue
        if isinstance(v, Mapping):
            sub.append((k, v))
            continue
        lines.append(f"{_toml_key(k)} = {_toml_value(v)}")
    for k, v in sub:
        lines.append("")
        lines += _toml_table(f"{name}.{_toml_key(k)}", v)
    return lines


def _toml_key(k: str) -> str:
    return k if all(c.isalnum() or c in "-_" for c in k) else _toml_value(str(k))


def write_tuning(tuning: FIKTuning, path: str | os.PathLike, header: str = "") -> Path:
    """Write a tuning TOML file atomically (the directory is created)."""
    from .._version import __version__

    p = Path(path)
    lines = [f"# {line}" for line in header.splitlines()] if header else []
    lines += [f"# FIK tuning written by animik {__version__} (`animik tune`); see docs/fik.md",
              f'format = "{FORMAT}"', f"format_version = {FORMAT_VERSION}",
              f"rig = {_toml_value(tuning.rig)}",
              f"fingerprint = {_toml_value(tuning.fingerprint)}", ""]
    lines += _toml_table("options", tuning.options)
    if tuning.hinf:
        lines += [""] + _toml_table("hinf", tuning.hinf)
    if tuning.measured:
        lines += [""] + _toml_table("measured", tuning.measured)
    text = "\n".join(lines) + "\n"
    p.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(p, text)  # unique temporary name, fsync, removed on failure (issue 15 item 9)
    clear_tuning_cache()
    return p


# --------------------------------------------------------------------------- H∞ (eq 13)
def hinf_riccati(M: np.ndarray, B2: np.ndarray, V: np.ndarray, CtC: np.ndarray, s: float,
                 B1: np.ndarray | None = None) -> np.ndarray | None:
    """Stabilising positive-definite solution ``Pa`` of eq 13, or None if there is none.

    ``Mᵀ Pa + Pa M − Pa (B2 V B2ᵀ − s⁻² B1 B1ᵀ) Pa + CᵀC = 0`` (see the module docstring for
    the reconstruction). Solved as a CARE with the indefinite weight
    ``R = diag(V⁻¹, −s² I)`` (scipy), else through the Hamiltonian's stable eigenvectors.

    Args:
        M: ``(m, m)`` filter matrix (``−m_i I``). B2: ``(m, n)`` (``−J(q0)``).
        V: ``(n, n)`` per-DoF gains (squared maximum rates), SPD. CtC: ``(m, m)`` state weight.
        s: attenuation level > 0. B1: ``(m, m)``, default identity.
    """
    m = M.shape[0]
    n = B2.shape[1]
    B1 = np.eye(m) if B1 is None else B1
    Q = B2 @ V @ B2.T - B1 @ B1.T / (s * s)
    X = None
    try:
        from scipy.linalg import solve_continuous_are

        B = np.hstack([B2, B1])
        R = np.zeros((n + m, n + m))
        R[:n, :n] = np.linalg.inv(V)
        R[n:, n:] = -s * s * np.eye(m)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            X = solve_continuous_are(M, B, CtC, R)
    except ImportError:  # pragma: no cover - scipy is optional here
        X = _riccati_hamiltonian(M, Q, CtC)
    except (np.linalg.LinAlgError, ValueError):
        return None
    if X is None or not np.all(np.isfinite(X)):
        return None
    X = 0.5 * (X + X.T)
    res = M.T @ X + X @ M - X @ Q @ X + CtC
    if np.abs(res).max() > 1e-6 * max(1.0, np.abs(X).max() ** 2, np.abs(CtC).max()):
        return None
    if np.linalg.eigvalsh(X).min() <= 0:
        return None
    if np.linalg.eigvals(M - Q @ X).real.max() >= 0:
        return None
    return X


def riccati_residual(M: np.ndarray, Q: np.ndarray, CtC: np.ndarray, X: np.ndarray) -> float:
    """Residual of eq 13 relative to the size of its terms (0 for an exact solution).

    ``max|Mᵀ X + X M − X Q X + CᵀC| / max(|Mᵀ X|, |X M|, |X Q X|, |CᵀC|)`` (elementwise max
    norms), with ``Q = B2 V B2ᵀ − s⁻² B1 B1ᵀ``: a number near the rounding error (1e-16…1e-10)
    means the four terms really cancel, whatever the scale of ``X``.
    """
    terms = (M.T @ X, X @ M, -(X @ Q @ X), CtC)
    res = terms[0] + terms[1] + terms[2] + terms[3]
    scale = max(float(np.abs(t).max()) for t in terms)
    return float(np.abs(res).max() / scale) if scale > 0 else float(np.abs(res).max())


def _riccati_hamiltonian(M: np.ndarray, Q: np.ndarray, CtC: np.ndarray) -> np.ndarray | None:
    """``X = X2 X1⁻¹`` from the stable invariant subspace of ``[[M, −Q], [−CᵀC, −Mᵀ]]``."""
    m = M.shape[0]
    H = np.block([[M, -Q], [-CtC, -M.T]])
    w, U = np.linalg.eig(H)
    if np.any(np.abs(w.real) < 1e-10 * max(1.0, np.abs(w).max())):
        return None  # eigenvalues on the imaginary axis: no stabilising solution
    stable = U[:, w.real < 0]
    if stable.shape[1] != m:
        return None
    X1, X2 = stable[:m], stable[m:]
    try:
        X = np.real(X2 @ np.linalg.inv(X1))
    except np.linalg.LinAlgError:
        return None
    return X


def hinf_bisection(J: np.ndarray, m_i: float = 5.0, w: float = 4.0,
                   V: np.ndarray | None = None, s0: float = 100.0, refine: int = 40,
                   ) -> tuple[float, np.ndarray]:
    """The source's s search on eq 13: start at ``s0``, halve while a positive-definite
    solution exists, keep the last one; then bisect between it and the first failure.

    Args:
        J: ``(m, n)`` task Jacobian at a non-singular pose q0.
        m_i: ``M = −m_i I``. w: cut-off frequency (``CᵀC = w² I``). V: ``(n,)`` or ``(n, n)``.
        s0: start value. refine: bisection steps after the halving.

    Returns:
        ``(s, Pa)``: the smallest feasible s found and its solution.

    Raises:
        ValueRangeError: no positive-definite solution even at ``s0``.
    """
    m, n = J.shape
    Vm = np.eye(n) if V is None else (np.diag(V) if np.ndim(V) == 1 else np.asarray(V))
    M = -m_i * np.eye(m)
    CtC = w * w * np.eye(m)
    s = float(s0)
    Pa = hinf_riccati(M, -J, Vm, CtC, s)
    if Pa is None:
        raise ValueRangeError(f"eq 13 has no positive-definite solution at s = {s0}")
    good, good_P = s, Pa
    bad = None
    while bad is None:
        s = good / 2.0
        P = hinf_riccati(M, -J, Vm, CtC, s)
        if P is None:
            bad = s
        else:
            good, good_P = s, P
    for _ in range(refine):
        mid = 0.5 * (good + bad)
        P = hinf_riccati(M, -J, Vm, CtC, mid)
        if P is None:
            bad = mid
        else:
            good, good_P = mid, P
    return good, good_P


def hinf_s_min(J: np.ndarray, m_i: float, w: float, v: np.ndarray | None = None) -> float:
    """Closed-form infimum of feasible s: ``1 / sqrt(λ_min(J V Jᵀ) + m_i² / w²)``."""
    G = (J * (1.0 if v is None else v)) @ J.T
    lam = float(np.linalg.eigvalsh(G).min()) if G.size else 0.0
    return 1.0 / math.sqrt(max(lam, 0.0) + (m_i / w) ** 2)


def hinf_gain(J: np.ndarray, v: np.ndarray, m_i: float, w: float, s: float | None,
              v1: float | None) -> tuple[np.ndarray, float, float]:
    """``P = v1 · Pa`` of eq 13 at Jacobian ``J`` in closed form (isotropic design).

    ``s`` below this pose's feasibility bound (or None) is raised to 1.05 × the bound.
    ``v1 = None`` scales P so that the fastest closed-loop rate is dead-beat: the largest
    eigenvalue of ``J V Jᵀ P`` is 1 (the source's "raise P until unstable", analytically).

    Returns:
        ``(P (m, m), s used, v1 used)``.
    """
    G = (J * v) @ J.T
    lam, U = np.linalg.eigh(G)
    s_min = 1.0 / math.sqrt(max(float(lam.min()), 0.0) + (m_i / w) ** 2) if len(lam) else 0.0
    s_used = 1.05 * s_min if (s is None or s <= s_min) else float(s)
    rad = m_i * m_i + (lam - 1.0 / (s_used * s_used)) * w * w
    p = w * w / (m_i + np.sqrt(np.maximum(rad, 1e-12 * m_i * m_i)))
    if v1 is None:
        gmax = float(np.max(np.maximum(lam, 0.0) * p)) if len(p) else 0.0
        v1 = 1.0 / gmax if gmax > 0 else 1.0
    return (U * (v1 * p)) @ U.T, s_used, float(v1)

def save_tuning(skel: Skeleton, tuning: FIKTuning, path: str | os.PathLike | None = None) -> Path:
    """Write ``tuning`` where :func:`load_tuning` finds it (or to ``path``)."""
    p = Path(path) if path is not None else tuning_path(skel)
    return write_tuning(tuning, p, header=f"FIK tuning of rig {skel.name!r}")
