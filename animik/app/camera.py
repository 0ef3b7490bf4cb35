"""Orbit camera (Z up): view/projection matrices, projection to pixels and picking rays.

Pure numpy, no GL. Pixels are viewport pixels with the origin at the **top-left** corner of the
3-D viewport (imgui and xdotool convention); :mod:`animik.app.controller` converts pyglet's
bottom-left window coordinates. Matrices are float64 and act on column vectors (OpenGL
convention); the renderer transposes them on upload.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

DEFAULT_YAW = np.deg2rad(35.0)  # characters face +X: look at them from the front-left
DEFAULT_PITCH = np.deg2rad(12.0)
PITCH_LIMIT = np.deg2rad(89.0)


def look_at(eye: np.ndarray, target: np.ndarray, up: np.ndarray) -> np.ndarray:
    """``camera_from_world`` (4, 4) for a camera at ``eye`` looking at ``target`` (OpenGL: -Z fwd)."""
    f = target - eye
    f = f / np.linalg.norm(f)
    s = np.cross(f, up)
    ns = np.linalg.norm(s)
    if ns < 1e-9:  # looking straight along up: pick any side vector
        s = np.cross(f, np.array([0.0, 1.0, 0.0]))
        ns = np.linalg.norm(s)
    s = s / ns
    u = np.cross(s, f)
    m = np.eye(4)
    m[0, :3], m[1, :3], m[2, :3] = s, u, -f
    m[:3, 3] = -m[:3, :3] @ eye
    return m


def perspective(fovy: float, aspect: float, near: float, far: float) -> np.ndarray:
    """OpenGL ``clip_from_camera`` (4, 4); ``fovy`` in radians."""
    f = 1.0 / np.tan(0.5 * fovy)
    m = np.zeros((4, 4))
    m[0, 0] = f / aspect
    m[1, 1] = f
    m[2, 2] = (far + near) / (near - far)
    m[2, 3] = 2.0 * far * near / (near - far)
    m[3, 2] = -1.0
    return m


@dataclass
class OrbitCamera:
    """A camera orbiting ``target`` at ``distance`` m, ``yaw`` about world Z and ``pitch`` (rad).

    Attributes:
        width, height: viewport size in pixels (set by the window each frame).
    """

    target: np.ndarray
    distance: float = 3.5
    yaw: float = float(DEFAULT_YAW)
    pitch: float = float(DEFAULT_PITCH)
    fovy: float = float(np.deg2rad(40.0))
    width: int = 1280
    height: int = 800

    def __post_init__(self) -> None:
        self.target = np.array(self.target, dtype=float)
        self._home = (self.target.copy(), self.distance, self.yaw, self.pitch)

    # ---------------------------------------------------------------- pose
    @property
    def forward(self) -> np.ndarray:
        """Unit view direction (from the eye towards the target), world frame."""
        cp = np.cos(self.pitch)
        return -np.array([cp * np.cos(self.yaw), cp * np.sin(self.yaw), np.sin(self.pitch)])

    @property
    def eye(self) -> np.ndarray:
        return self.target - self.distance * self.forward

    @property
    def right(self) -> np.ndarray:
        r = np.cross(self.forward, [0.0, 0.0, 1.0])
        return r / max(np.linalg.norm(r), 1e-12)

    @property
    def up(self) -> np.ndarray:
        return np.cross(self.right, self.forward)

    @property
    def near(self) -> float:
        return max(0.01, self.distance * 0.01)

    @property
    def far(self) -> float:
        return max(100.0, self.distance * 20.0)

    def view(self) -> np.ndarray:
        """``camera_from_world`` (4, 4)."""
        return look_at(self.eye, self.target, np.array([0.0, 0.0, 1.0]))

    def projection(self) -> np.ndarray:
        """``clip_from_camera`` (4, 4) for the current viewport aspect."""
        aspect = max(self.width, 1) / max(self.height, 1)
        return perspective(self.fovy, aspect, self.near, self.far)

    def view_proj(self) -> np.ndarray:
        """``clip_from_world`` (4, 4)."""
        return self.projection() @ self.view()

    # ---------------------------------------------------------------- pixels and rays
    def project(self, points: np.ndarray) -> np.ndarray:
        """World points ``(..., 3)`` to viewport pixels ``(..., 3)``: x right, y down, depth.

        The third column is the NDC depth in [-1, 1] (> 1 or behind the camera: not visible).
        """
        p = np.asarray(points, dtype=float)
        vp = self.view_proj()
        h = p @ vp[:, :3].T + vp[:, 3]
        w = h[..., 3:4]
        w = np.where(np.abs(w) < 1e-12, 1e-12, w)
        ndc = h[..., :3] / w
        x = (ndc[..., 0] + 1.0) * 0.5 * self.width
        y = (1.0 - ndc[..., 1]) * 0.5 * self.height
        depth = np.where(h[..., 3] > 0, ndc[..., 2], np.inf)
        return np.stack([x, y, depth], axis=-1)

    def ray(self, px: float, py: float) -> tuple[np.ndarray, np.ndarray]:
        """World ray ``(origin (3,), unit direction (3,))`` through viewport pixel ``(px, py)``."""
        nx = 2.0 * px / max(self.width, 1) - 1.0
        ny = 1.0 - 2.0 * py / max(self.height, 1)
        inv = np.linalg.inv(self.view_proj())
        a = inv @ np.array([nx, ny, -1.0, 1.0])
        b = inv @ np.array([nx, ny, 1.0, 1.0])
        a, b = a[:3] / a[3], b[:3] / b[3]
        d = b - a
        return a, d / np.linalg.norm(d)

    def pixel_size_at(self, point: np.ndarray) -> float:
        """World size (m) of one pixel at ``point``'s depth (for constant screen-size handles)."""
        depth = float(np.dot(np.asarray(point, float) - self.eye, self.forward))
        depth = max(depth, self.near)
        return 2.0 * depth * np.tan(0.5 * self.fovy) / max(self.height, 1)

    def pixel_sizes(self, points: np.ndarray) -> np.ndarray:
        """:meth:`pixel_size_at` of each of ``points (N, 3)``: ``(N,)`` m."""
        fwd = self.forward
        eye = self.target - self.distance * fwd
        depth = np.maximum((np.asarray(points, float).reshape(-1, 3) - eye) @ fwd, self.near)
        return 2.0 * depth * np.tan(0.5 * self.fovy) / max(self.height, 1)

    # ---------------------------------------------------------------- navigation
    def orbit(self, dx_px: float, dy_px: float) -> None:
        """Rotate around the target by a mouse motion in pixels (0.3 degrees per pixel)."""
        k = np.deg2rad(0.3)
        self.yaw -= dx_px * k
        self.pitch = float(np.clip(self.pitch - dy_px * k, -PITCH_LIMIT, PITCH_LIMIT))

    def pan(self, dx_px: float, dy_px: float) -> None:
        """Move target and eye in the view plane so the point under the cursor follows it."""
        s = self.pixel_size_at(self.target)
        self.target = self.target - self.right * dx_px * s + self.up * dy_px * s

    def zoom(self, steps: float) -> None:
        """Dolly towards the target; one wheel step = 12 %."""
        self.distance = float(np.clip(self.distance * 0.88 ** steps, 0.05, 500.0))

    def frame(self, points: np.ndarray, margin: float = 1.25) -> None:
        """Centre on ``points (N, 3)`` and back off until their bounding sphere fits the view."""
        pts = np.asarray(points, dtype=float).reshape(-1, 3)
        if not len(pts):
            return
        lo, hi = pts.min(axis=0), pts.max(axis=0)
        centre = 0.5 * (lo + hi)
        radius = max(0.5 * float(np.linalg.norm(hi - lo)), 0.05)
        aspect = max(self.width, 1) / max(self.height, 1)
        half = 0.5 * self.fovy * min(1.0, aspect)
        self.target = centre
        self.distance = float(margin * radius / np.sin(half))

    def set_home(self) -> None:
        """Remember the current view as the one :meth:`reset` returns to."""
        self._home = (self.target.copy(), self.distance, self.yaw, self.pitch)

    def reset(self) -> None:
        t, d, y, p = self._home
        self.target, self.distance, self.yaw, self.pitch = t.copy(), d, y, p

    def to_dict(self) -> dict:
        """Plain values for a scene file (angles in radians)."""
        return {"target": [float(v) for v in self.target], "distance": float(self.distance),
                "yaw": float(self.yaw), "pitch": float(self.pitch)}

    def apply_dict(self, d: dict) -> None:
        if "target" in d:
            self.target = np.array(d["target"], dtype=float)
        for k in ("distance", "yaw", "pitch"):
            if k in d:
                setattr(self, k, float(d[k]))
