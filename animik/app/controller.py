"""Viewport input: pyglet-style mouse and key handlers that pick, drag, orbit and edit.

The window forwards pyglet events here (after Dear ImGui had its look) with pyglet's own
arguments; tests call the same methods with synthetic events. Coordinates are pyglet window
coordinates (origin bottom-left); the viewport rectangle in ``state.view_rect`` is top-left.

Mouse:
    left on a handle      select it; drag to move its target in the view plane
                          (hold X, Y or Z to move along that world axis only; hold Shift to
                          move along the dominant axis of the motion so far)
    left on a ring        (selected 6-D target) turn the target about that axis
    left on a gizmo ring  (selected joint) turn that DoF (FK, within its limits, undoable)
    left on a gizmo arrow (selected root) move the root along that axis
    left on a joint/bone  select the joint (its DoFs appear in the Joint panel, the Skeleton
                          tree scrolls to it, its rotate gizmo appears)
    left on background    drag: orbit; click: clear the selection
    middle drag           orbit (Shift + middle: pan)
    right drag            pan; right click on a handle: its context menu
    wheel                 zoom
    (the current mode sees a press first: drive mode takes Ctrl + left as a goal on the floor)
Keys:
    F frame selection · Home / R reset view · arrows orbit (Shift: pan) · +/- or PgUp/PgDn
    zoom · P pin/unpin · O 6-D target on/off ·
    Delete / Backspace delete the selected key, else free the effector · Esc cancel drag /
    clear selection · Ctrl+Z undo · Ctrl+Shift+Z / Ctrl+Y redo · Ctrl+S save · Ctrl+O open ·
    I live IK on/off
The current mode's keys (:meth:`animik.app.modes.base.Mode.on_key_press`, after Ctrl
shortcuts and Esc): in the pose mode the timeline's (K key the pose · Shift+K key the selected
joint · Alt+K key the effector targets · Space play / pause · , . (or [ ]) previous / next key
· Shift+, Shift+. start / end · N auto-key on/off); retarget mode's transport and P.

Picking reads the cached view geometry (:func:`animik.app.geometry.view_geometry`): a mouse
move over a still pose and camera builds nothing.
"""

from __future__ import annotations

import numpy as np

from . import edits, framing, modes, timeline, view_mode
from . import gizmo as G
from . import keys as K
from .documents import needs_save_as, save
from .geometry import view_geometry
from .instances import ViewGeometry
from .picking import pick_gizmo, pick_handle, pick_joint, pick_ring
from .state import FREE, PINNED, TARGET, AppState, Drag

CLICK_PX = 4.0  # a press and release closer than this is a click, not a drag


def intersect_plane(origin: np.ndarray, direction: np.ndarray, point: np.ndarray,
                    normal: np.ndarray) -> np.ndarray | None:
    den = float(np.dot(direction, normal))
    if abs(den) < 1e-9:
        return None
    t = float(np.dot(point - origin, normal)) / den
    return origin + t * direction


def closest_on_line(origin: np.ndarray, direction: np.ndarray, point: np.ndarray,
                    axis: np.ndarray) -> np.ndarray:
    """Point on the line ``point + s * axis`` closest to the ray ``origin + t * direction``."""
    w0 = point - origin
    b = float(np.dot(axis, direction))
    den = 1.0 - b * b
    if den < 1e-9:  # looking along the axis: no motion
        return point.copy()
    d = float(np.dot(axis, w0))
    e = float(np.dot(direction, w0))
    s = (b * e - d) / den
    return point + s * axis


class ViewportController:
    """Mouse/keyboard handling of the 3-D viewport (see the module docstring)."""

    def __init__(self, state: AppState, file_browser=None):
        self.state = state
        self.mode: str | None = None  # "drag" | "rotate" | "orbit" | "pan" | "click"
        self.button = 0
        self.press_px = (0.0, 0.0)
        self.press_site: str | None = None
        self.press_joint: int | None = None
        self.open_browser = file_browser  # callable(mode) from the GUI, or None

    # ---------------------------------------------------------------- coordinates
    def to_view(self, x: float, y: float) -> tuple[float, float]:
        """pyglet window coordinates -> viewport pixels (origin top-left)."""
        vx, vy, _, _ = self.state.view_rect
        return float(x) - vx, (self.state.window_size[1] - float(y)) - vy

    def in_view(self, x: float, y: float) -> bool:
        px, py = self.to_view(x, y)
        _, _, w, h = self.state.view_rect
        return 0 <= px < w and 0 <= py < h

    def geometry(self) -> ViewGeometry:
        """What is drawn, to pick against (rebuilt only when the view changed)."""
        return view_geometry(self.state)

    # ---------------------------------------------------------------- mouse
    def on_mouse_motion(self, x, y, dx, dy):
        s = self.state
        if self.mode is not None or not self.in_view(x, y):
            s.hover_site = s.hover_joint = s.hover_ring = None
            return
        px, py = self.to_view(x, y)
        g = self.geometry()
        s.hover_ring = pick_ring(s, g, px, py)
        s.hover_gizmo = None if s.hover_ring is not None else pick_gizmo(s, g, px, py)
        s.hover_site = None if s.hover_ring is not None or s.hover_gizmo is not None \
            else pick_handle(s, g, px, py)
        s.hover_joint = None
        if s.hover_site is None and s.hover_ring is None and s.hover_gizmo is None:
            s.hover_joint = pick_joint(s, g, px, py)

    def on_mouse_press(self, x, y, button, modifiers):
        s = self.state
        if self.mode is not None or not self.in_view(x, y):
            return
        px, py = self.to_view(x, y)
        self.button = button
        self.press_px = (px, py)
        self.press_site = None
        self.press_joint = None
        if modes.current(s).on_mouse_press(s, px, py, button, modifiers):
            self.mode = "mode"  # the mode took the press (drive mode: Ctrl + click a goal)
            return
        if button == K.LEFT:
            g = self.geometry()
            ring = pick_ring(s, g, px, py)
            if ring is not None:
                self._start_rotate(g, ring, px, py)
                return
            gz = pick_gizmo(s, g, px, py)
            if gz is not None:
                self._start_gizmo(g, gz, px, py)
                return
            site = pick_handle(s, g, px, py)
            if site is not None:
                s.selected_site = site  # the joint selection stays (its sliders follow the drag)
                s.selected_key = None  # Delete now frees this effector, not a timeline key
                self._start_move(site, px, py)
                return
            self.press_joint = pick_joint(s, g, px, py)
            self.mode = "click"  # becomes "orbit" once the mouse moves
        elif button == K.MIDDLE:
            self.mode = "pan" if modifiers & K.MOD_SHIFT else "orbit"
        elif button == K.RIGHT:
            self.press_site = pick_handle(s, self.geometry(), px, py)
            self.mode = "rclick"

    def on_mouse_drag(self, x, y, dx, dy, buttons, modifiers):
        s = self.state
        if self.mode is None:
            return
        px, py = self.to_view(x, y)
        far = np.hypot(px - self.press_px[0], py - self.press_px[1]) > CLICK_PX
        if self.mode == "click" and far:
            self.mode = "orbit"
        elif self.mode == "rclick" and far:
            self.mode = "pan"
        if self.mode == "orbit":
            s.camera.orbit(dx, -dy)  # pyglet dy points up; pixels point down
        elif self.mode == "pan":
            s.camera.pan(dx, -dy)
        elif self.mode == "drag" and s.drag is not None:
            if far or s.drag.moved:
                self._move(px, py, modifiers)
        elif self.mode == "rotate" and s.drag is not None:
            self._rotate(px, py)
        elif self.mode == "gizmo" and s.drag is not None:
            self._gizmo_drag(px, py)
        elif self.mode == "mode":
            modes.current(s).on_mouse_drag(s, px, py, modifiers)

    def on_mouse_release(self, x, y, button, modifiers):
        s = self.state
        if self.mode is None or button != self.button:
            return
        mode, self.mode = self.mode, None
        if mode in ("drag", "rotate") and s.drag is not None:
            d, s.drag = s.drag, None
            if d.moved:
                # a mode may make its own edit of it (retarget mode: an offset on the motion)
                handled = modes.current(s).end_drag(s, d)
                if not handled and d.kind == "move" and s.pin_on_release \
                        and s.doc.effector(d.site).mode == TARGET \
                        and d.start_doc.effector(d.site).mode == FREE:
                    edits.set_effector(s, s.doc.effector(d.site).replace(mode=PINNED))
                keyed = timeline.auto_key(s, site=d.site)
                edits.commit(s, f"{'drag' if d.kind == 'move' else 'rotate'} {d.site}"
                                  + (" + key" if keyed else ""))
        elif mode == "gizmo" and s.drag is not None:
            d, s.drag = s.drag, None
            if d.moved:
                keyed = timeline.auto_key(s, joints=[d.site])
                edits.commit(s, f"{'rotate' if d.kind == 'dof' else 'move'} "
                                f"{s.skeleton.dof_names[d.axis]}" + (" + key" if keyed else ""))
        elif mode == "click":
            s.selected_joint = self.press_joint
            s.scroll_tree_to = self.press_joint  # the Skeleton tree shows it (once)
            s.selected_site = None
            s.selected_key = None
        elif mode == "rclick" and self.press_site is not None:
            s.selected_site = self.press_site
            s.context_site = self.press_site

    def on_mouse_scroll(self, x, y, scroll_x, scroll_y):
        if not self.in_view(x, y):
            return
        self.state.camera.zoom(scroll_y)

    # ---------------------------------------------------------------- drags
    def _start_move(self, site: str, px: float, py: float) -> None:
        s = self.state
        timeline.pause(s)  # a drag edits the pose at the playhead: playback stops there
        e = s.doc.effector(site)
        i = s.skeleton.site_index(site)
        start = np.array(e.position if e.active else s.fk.site_positions[i])
        o, d = s.camera.ray(px, py)
        normal = s.camera.forward
        hit = intersect_plane(o, d, start, normal)
        offset = start - hit if hit is not None else np.zeros(3)
        s.drag = Drag("move", site, s.doc, start, normal, offset)
        self.mode = "drag"

    def _move(self, px: float, py: float, modifiers: int) -> None:
        s = self.state
        d = s.drag
        o, r = s.camera.ray(px, py)
        axis = self.constraint_axis()
        if axis is not None:
            a = np.eye(3)[axis]
            p = closest_on_line(o, r, d.start_position, a)
        else:
            hit = intersect_plane(o, r, d.start_position, d.plane_normal)
            if hit is None:
                return
            p = hit + d.grab_offset
            if modifiers & K.MOD_SHIFT:
                delta = p - d.start_position
                k = int(np.argmax(np.abs(delta)))
                p = d.start_position + np.eye(3)[k] * delta[k]
        e = s.doc.effector(d.site)
        if not e.active:
            i = s.skeleton.site_index(d.site)
            e = e.replace(mode=TARGET,
                          rotation=np.array(s.fk.site_rotations[i]) if e.oriented else None)
        edits.set_effector(s, e.replace(position=p))
        d.moved = True

    def constraint_axis(self) -> int | None:
        """World axis held down (X, Y or Z key), or None."""
        for k, sym in enumerate((K.X, K.Y, K.Z)):
            if sym in self.state.keys_down:
                return k
        return None

    def _start_gizmo(self, g: ViewGeometry, hit: tuple[str, int], px: float, py: float) -> None:
        """Press on a ring (turn that DoF) or an arrow (move the root along it)."""
        s = self.state
        timeline.pause(s)
        gz = g.gizmo
        kind, k = hit
        if kind == "ring":
            dof, axis = int(gz.ring_dofs[k]), gz.ring_axes[k].copy()
            start = self._gizmo_angle(gz.centre, axis, px, py)
            drag_kind = "dof"
        else:
            dof, axis = int(gz.arrow_dofs[k]), gz.arrow_axes[k].copy()
            o, d = s.camera.ray(px, py)
            start = float(np.dot(closest_on_line(o, d, gz.centre, axis) - gz.centre, axis))
            drag_kind = "root"
        s.drag = Drag(drag_kind, s.skeleton.joint_names[gz.joint], s.doc, gz.centre.copy(), axis,
                      np.zeros(3), axis=dof, start_angle=start,
                      start_value=float(s.doc.q[dof]))
        self.mode = "gizmo"

    def _gizmo_angle(self, centre: np.ndarray, axis: np.ndarray, px: float, py: float) -> float:
        """Angle of the cursor around a gizmo ring's axis (its plane, or the screen edge-on)."""
        cam = self.state.camera
        if abs(float(np.dot(axis, cam.forward))) > G.EDGE_ON:
            o, d = cam.ray(px, py)
            hit = G.ray_plane_angle(o, d, centre, axis)
            if hit is not None:
                return hit[2]
        return G.screen_angle(cam.project(centre), px, py, axis, cam.forward)

    def _gizmo_drag(self, px: float, py: float) -> None:
        s = self.state
        d = s.drag
        k = d.axis
        skel = s.skeleton
        if d.kind == "dof":
            ang = self._gizmo_angle(d.start_position, d.plane_normal, px, py)
            value = G.dragged_value(d.start_value, d.start_angle, ang, skel.lower[k], skel.upper[k])
        else:
            o, r = s.camera.ray(px, py)
            p = closest_on_line(o, r, d.start_position, d.plane_normal)
            along = float(np.dot(p - d.start_position, d.plane_normal))
            value = float(np.clip(d.start_value + along - d.start_angle, skel.lower[k],
                                  skel.upper[k]))
        if value != float(s.doc.q[k]):
            d.goal = value  # the physics mode tracks this value instead of jumping to it
            edits.set_dof(s, k, value)
            d.moved = True

    def _start_rotate(self, g: ViewGeometry, ring: int, px: float, py: float) -> None:
        s = self.state
        timeline.pause(s)
        site = s.selected_site
        e = s.doc.effector(site)
        axis = g.ring_axes[:, ring].copy()
        s.drag = Drag("rotate", site, s.doc, np.array(e.position), axis, np.zeros(3), axis=ring,
                      start_rotation=np.array(e.rotation),
                      start_angle=self._ring_angle(g.ring_centre, axis, px, py))
        self.mode = "rotate"

    def _ring_angle(self, centre: np.ndarray, axis: np.ndarray, px: float, py: float) -> float:
        """Angle of the cursor around ``axis`` through ``centre`` (rad).

        On the ring's plane when it faces the camera enough; edge-on, from the cursor's screen
        angle around the projected centre.
        """
        cam = self.state.camera
        if abs(float(np.dot(axis, cam.forward))) > 0.2:
            o, d = cam.ray(px, py)
            hit = intersect_plane(o, d, centre, axis)
            if hit is not None:
                u = np.cross(axis, [0.0, 0.0, 1.0])
                if np.linalg.norm(u) < 1e-6:
                    u = np.cross(axis, [1.0, 0.0, 0.0])
                u /= np.linalg.norm(u)
                v = np.cross(axis, u)
                w = hit - centre
                return float(np.arctan2(np.dot(w, v), np.dot(w, u)))
        c = cam.project(centre)
        ang = float(np.arctan2(py - c[1], px - c[0]))
        # screen y points down: a clockwise screen angle is a positive rotation about an axis
        # pointing away from the viewer
        return ang if np.dot(axis, cam.forward) >= 0 else -ang

    def _rotate(self, px: float, py: float) -> None:
        s = self.state
        d = s.drag
        axis = d.plane_normal
        ang = self._ring_angle(d.start_position, axis, px, py)
        delta = float(np.angle(np.exp(1j * (ang - d.start_angle))))
        e = s.doc.effector(d.site)
        rot = edits.rotate_target(d.start_rotation, axis, delta)
        edits.set_effector(s, e.replace(rotation=rot))
        d.moved = True

    # ---------------------------------------------------------------- keys
    def on_key_press(self, symbol, modifiers) -> bool:
        """Returns True when the key did something."""
        s = self.state
        ctrl = bool(modifiers & (K.MOD_CTRL | K.MOD_COMMAND))
        shift = bool(modifiers & K.MOD_SHIFT)
        if symbol in (K.X, K.Y, K.Z) and not ctrl:
            s.keys_down.add(symbol)
        if ctrl:
            if symbol == K.Z:
                return edits.redo(s) if shift else edits.undo(s)
            if symbol == K.Y:
                return edits.redo(s)
            if symbol == K.S:
                # Save As when asked, and for a document without a file of its own (a
                # shipped scene is never overwritten, a display name never becomes a file)
                if (shift or needs_save_as(s)) and self.open_browser is not None:
                    self.open_browser("save")
                    return True
                return save(s) is not None
            if symbol == K.O and self.open_browser is not None:
                self.open_browser("open")
                return True
            return False
        if symbol == K.ESCAPE:
            if s.drag is not None:
                edits.cancel_drag(s)
                self.mode = None
            else:
                s.selected_site = None
                s.selected_joint = None
                s.selected_key = None
            return True
        if modes.current(s).on_key_press(s, symbol, modifiers):
            return True
        if symbol == K.F:
            framing.frame_selected(s)
            return True
        if symbol in (K.HOME, K.R):
            s.camera.reset()
            return True
        if symbol == K.V:
            view_mode.cycle_view_mode(s)
            return True
        arrows = {K.LEFT_ARROW: (-1, 0), K.RIGHT_ARROW: (1, 0), K.UP_ARROW: (0, -1),
                  K.DOWN_ARROW: (0, 1)}
        if symbol in arrows:  # keyboard orbit (Shift: pan), 10 degrees / 40 px a press
            dx, dy = arrows[symbol]
            if shift:
                s.camera.pan(-40.0 * dx, -40.0 * dy)
            else:
                s.camera.orbit(33.3 * dx, 33.3 * dy)
            return True
        if symbol in (K.PAGEUP, K.EQUAL, K.NUM_ADD):
            s.camera.zoom(1.0)
            return True
        if symbol in (K.PAGEDOWN, K.MINUS, K.NUM_SUBTRACT):
            s.camera.zoom(-1.0)
            return True
        if symbol == K.I:
            s.live_ik = not s.live_ik
            s.info(f"Live IK {'on' if s.live_ik else 'off'}")
            return True
        if symbol in (K.DELETE, K.BACKSPACE) and s.selected_key is not None and s.drag is None:
            return timeline.delete_key(s)
        site = s.selected_site or s.hover_site
        if site is None or s.drag is not None:
            return False
        if symbol == K.P:
            edits.toggle_pin(s, site)
            return True
        if symbol == K.O:
            edits.set_oriented(s, site, not s.doc.effector(site).oriented)
            s.selected_site = site
            return True
        if symbol in (K.DELETE, K.BACKSPACE):
            edits.free(s, site)
            return True
        return False

    def on_key_release(self, symbol, modifiers) -> bool:
        self.state.keys_down.discard(symbol)
        return False
