#!/usr/bin/env python
"""A markdown table of ``animik filter`` runs (docs/dynamics.md 5h), one row per clip.

    python scripts/filter_table.py OUT/out --model body95   # feas9.sh's outputs (body95 retargets)
    python scripts/filter_table.py OUT                       # raw9.sh's outputs (raw BVH)

Reads each ``X.json`` (the filter's ``--json`` report; its ``input`` path is resolved from the
current directory), ``X.time`` (``/usr/bin/time -f "%e %U %S"``: wall, user, sys) and ``X.feas``
(``animik feasibility`` of the written file) when present, and recomputes the correction's
jitter (:func:`animik.dynamics.smoothness.correction_jitter`) from the written ``X.bvh`` against
the input file -- the figure a user of the files sees, independent of the report.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from animik.dynamics.contacts import contact_model_for_clip
from animik.dynamics.model import with_model_of
from animik.dynamics.smoothness import correction_jitter, trunk_dofs
from animik.io.bvh import read_bvh
from animik.motion import Motion
from animik.rigs import load_rig


def _load(path: Path, model: str | None) -> Motion:
    m = read_bvh(path)
    if model:
        m = Motion(with_model_of(m.skeleton, load_rig(model)), m.q, m.fps, dict(m.meta))
    return m


def _time(path: Path) -> str:
    if not path.is_file():
        return "?"
    wall, user, sys_ = path.read_text().strip().splitlines()[-1].split()[:3]
    return f"{float(wall):.1f} / {float(user) + float(sys_):.1f}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir", type=Path, help="directory with the filter's X.json / X.bvh files")
    ap.add_argument("--model", help="read the BVH files with this rig's masses (body95)")
    args = ap.parse_args()
    print("| clip | infeasible in → out | written file | root jitter RMS / max (mm) | trunk "
          "jitter RMS / max (°) | input's own root mm / trunk ° RMS | RMS joint change ° (max) "
          "| root shift max cm | foot skate in → out cm | wall / CPU s | rounds |")
    print("|---" * 11 + "|")
    for js in sorted(args.dir.glob("*.json")):
        if js.name.endswith(".retarget.json") or js.name == "report.json":
            continue
        r = json.loads(js.read_text())
        out = js.with_suffix(".bvh")
        feas = js.with_suffix(".feas")
        written = "not written"
        if out.is_file():
            rc = [ln for ln in feas.read_text().splitlines() if "rc=" in ln] if feas.is_file() else []
            written = f"feasibility {rc[-1].split('rc=')[-1]}" if rc else "written"
        jit = ["—", "—", "—"]
        if out.is_file() and "input" in r:
            a, b = _load(Path(r["input"]), args.model), _load(out, args.model)
            j = correction_jitter(a.skeleton, a.q, b.q,
                                  trunk_dofs(a.skeleton, contact_model_for_clip(a.skeleton, a.q)))
            jit = [f"{j['root_mm']['rms']:.2f} / {j['root_mm']['max']:.1f}",
                   f"{j['trunk_deg']['rms']:.2f} / {j['trunk_deg']['max']:.1f}",
                   f"{j['input_root_mm']['rms']:.2f} / {j['input_trunk_deg']['rms']:.2f}"]
        skate = " / ".join(f"{v['input']:.1f} → {v['output']:.1f}"
                           for v in r.get("foot_skate_cm", {}).values())
        row = [js.stem, f"{r.get('infeasible_frames_input', '?')} → {r.get('infeasible_frames', '?')}",
               written, *jit,
               f"{r['rms_joint_change_deg']} ({r['max_joint_change_deg']})"
               if "rms_joint_change_deg" in r else "—",
               str(r.get("root_shift_cm", {}).get("max", "—")), skate or "—",
               _time(js.with_suffix(".time")), str(r.get("rounds", "—"))]
        print("| " + " | ".join(row) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
