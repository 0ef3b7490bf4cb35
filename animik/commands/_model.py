"""``--model`` of ``animik feasibility`` / ``animik filter``: which body a BVH clip is checked as.

BVH stores no masses and no soles. A clip that ``animik retarget --to RIG`` (or ``animik
filter``, or an export) wrote holds RIG's motion: with ``--model RIG`` it is checked with RIG's
masses, inertias and soles (:func:`animik.dynamics.with_model_of`). Without ``--model`` a file
whose hierarchy is a built-in rig's (:func:`animik.rigs.recognise_hierarchy`) gets that rig's
model, said on stderr; ``--model file`` keeps the file's own skeleton (masses by segment role, soles
derived from its feet).

A file that holds the rig's motion exactly (:func:`animik.rigs.recognise_rig`: its padded channels
still zero) is mapped onto the rig's own DoFs, so ``animik filter`` corrects the rig (body95: 95
DoF, its knees hinges) and writes the rig's motion back in the same hierarchy. Before, the filter
moved the file's 159 channels and twisted body95's knees about their long axes (up to 11° on
louise): a body95 hierarchy holding no body95 motion. A file whose padded channels move (such
an older output) keeps its own skeleton with the rig's masses and soles, said on stderr.
"""

from __future__ import annotations

import sys

from ..dynamics.model import on_model
from ..motion import Motion
from ..rigs import load_rig, recognise_hierarchy

#: ``--model file``: the file's own skeleton, even when it is a built-in rig's hierarchy.
FILE_MODEL = "file"

MODEL_HELP = ("the clip is RIG's motion written to BVH (by animik retarget or filter): use RIG's "
              "masses and soles (BVH stores none). Default: the built-in rig whose hierarchy "
              "the file has (said on stderr), else the file's own skeleton; 'file': always the "
              "file's own skeleton")


def with_model(motion: Motion, model: str | None, prog: str) -> tuple[Motion, str | None]:
    """``motion`` with the masses and soles it is checked with, and the rig they came from.

    Args:
        motion: the clip as read from BVH. model: ``--model``'s value (None: not given).
        prog: the command's name, for the stderr note.

    Returns:
        ``(motion, rig name or None for the file's own skeleton)``.

    Raises:
        RigNotFoundError, FeasibilityError: as :func:`load_rig` / :func:`with_model_of`.
    """
    if model == FILE_MODEL:
        return motion, None
    if model is None:
        model = recognise_hierarchy(motion.skeleton)
        if model is None:
            return motion, None
        print(f"animik {prog}: recognised {model}'s hierarchy: using {model}'s masses and soles "
              f"(pass --model {FILE_MODEL} to use the file's own skeleton)", file=sys.stderr)
    out = on_model(motion, load_rig(model))
    if out.skeleton.name != model and recognise_hierarchy(motion.skeleton) == model:
        print(f"animik {prog}: the file has {model}'s hierarchy but channels {model} does not "
              f"have move (a knee's twist): using the file's skeleton with {model}'s masses and "
              "soles", file=sys.stderr)
    return out, model
