"""IK tasks: one module per task, each with its error and Jacobian (the task seam).

A task (:class:`~animik.ik.tasks.base.Task`) is a few rows of error ``target − current`` and
their Jacobian ``d current / dq`` at a pose, as in mink's ``tasks/`` (``compute_error`` /
``compute_jacobian``). Every solver works on an :class:`~animik.ik.IKProblem`, a list of tasks:

=================  ================================  =============================================
module             task                              how FIK runs it (``kind``)
=================  ================================  =============================================
``position``       site position (3 rows)            ``"site"``: the compiled site block
``orientation``    site pose: position + rotation    ``"site"``
``pin``            a site held at its pose in q0     ``"site"`` (weight 10)
``com``            whole-body centre of mass         ``"points"``: the compiled block of weighted
                   (``solve_ik(..., com=...)``)      body points (``m_j / M`` at segment COMs)
``posture``        reference pose                    ``"null"``: FIK's null-space term (9f–9j)
``limits``         joint-limit avoidance             ``"null"``
=================  ================================  =============================================

**Adding a task is adding a module here.** A module that defines ``KEYWORD`` (say ``"com"``)
and ``from_argument(skel, q0, value) -> Task`` becomes a keyword of :func:`animik.solve_ik`,
:func:`animik.ik.build_problem` and :func:`animik.ik.prepare_ik`, found by
:func:`keyword_modules` (no registry to edit). Its ``compute_error`` / ``compute_jacobian`` are
what the generic solvers (``dls``, ``pinv``, ``jt``) iterate on and what the finite-difference
tests check. FIK's compiled loop runs a task whose error is a site pose (``kind="site"``) or a
weighted combination of body-fixed points (``kind="points"``: a centre of mass, the centroid
of the feet, a point on a segment — the module only says which points, :meth:`Task.points`).
A task of another form (a look-at direction) runs on the generic solvers; FIK rejects it with
an error naming the task until a compiled block for its form is added to
:mod:`animik.ik._fik_kernels`.
"""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType

from .base import Task, TaskFrames

_KEYWORDS: dict[str, ModuleType] | None = None


def keyword_modules() -> dict[str, ModuleType]:
    """``{keyword: module}`` of the task modules that define ``KEYWORD`` (discovered once)."""
    global _KEYWORDS
    if _KEYWORDS is None:
        found: dict[str, ModuleType] = {}
        for info in pkgutil.iter_modules(__path__):
            if info.name.startswith("_") or info.name == "base":
                continue
            mod = importlib.import_module(f"{__name__}.{info.name}")
            kw = getattr(mod, "KEYWORD", None)
            if kw is not None:
                found[kw] = mod
        _KEYWORDS = found
    return _KEYWORDS


__all__ = ["Task", "TaskFrames", "keyword_modules"]
