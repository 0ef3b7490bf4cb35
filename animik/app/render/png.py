"""A minimal PNG writer (RGB/RGBA, 8 bit) for screenshots and tests, with no image library."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import numpy as np


def encode_png(pixels: np.ndarray) -> bytes:
    """PNG bytes of ``pixels (H, W, 3 or 4)`` uint8, first row at the top."""
    a = np.ascontiguousarray(pixels, dtype=np.uint8)
    if a.ndim != 3 or a.shape[2] not in (3, 4):
        raise ValueError(f"pixels must have shape (H, W, 3 or 4), got {a.shape}")
    h, w, c = a.shape
    raw = np.empty((h, 1 + w * c), np.uint8)
    raw[:, 0] = 0  # filter type 0 (none) on every row
    raw[:, 1:] = a.reshape(h, w * c)

    def chunk(tag: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + tag + data
                + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF))

    ihdr = struct.pack(">IIBBBBB", w, h, 8, 6 if c == 4 else 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr)
            + chunk(b"IDAT", zlib.compress(raw.tobytes(), 6)) + chunk(b"IEND", b""))


def write_png(path: str | Path, pixels: np.ndarray) -> Path:
    path = Path(path)
    path.write_bytes(encode_png(pixels))
    return path


def read_framebuffer(fbo, rect: tuple[int, int, int, int] | None = None) -> np.ndarray:
    """``(H, W, 3)`` uint8 pixels of a moderngl framebuffer, first row at the top."""
    if rect is None:
        rect = (0, 0, fbo.width, fbo.height)
    data = fbo.read(viewport=rect, components=3, alignment=1)
    a = np.frombuffer(data, np.uint8).reshape(rect[3], rect[2], 3)
    return a[::-1].copy()
