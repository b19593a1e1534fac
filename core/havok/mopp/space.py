"""The space a MOPP program tests in: a point p becomes integers q = floor((p - origin) * scale),
24 bits of which the top 8 (0-254) are what split and cut instructions compare at the start
(nif.xml hkpMoppCode: scale = 256 * 256 * 254 / the largest extent of the shape's box grown by
its radius). Rescale instructions zoom in by moving the base and dropping bits."""

from dataclasses import dataclass, field

import numpy as np

from ...errors import FormatError

LEVEL_BITS = 16  # q >> 16 is the 8-bit value tested at the top of a program
TOP = 254  # the 8-bit value of the far side of the box
FULL = TOP << LEVEL_BITS
LIMIT = 1 << 30  # queries far outside are clamped (their answers do not change)

# hkpMoppCode build type of the codes made here: built without chunk subdivision (PC files)
BUILT_WITHOUT_CHUNKS = 1


@dataclass
class Mopp:
    """A MOPP program and its space, as bhkMoppBvTreeShape stores them: ``origin`` (the
    offset's xyz), ``scale`` (its w) and ``build_type`` (Skyrim's hkMoppCodeBuildType)."""

    code: bytes
    origin: np.ndarray = field(default_factory=lambda: np.zeros(3))
    scale: float = 1.0
    build_type: int = BUILT_WITHOUT_CHUNKS

    @property
    def offset(self):
        """The (x, y, z, scale) Vector4 of the block."""
        return (*(float(v) for v in self.origin), float(self.scale))


def space_of(low, high, radius=0.0):
    """(origin, scale) of a box (its corners) grown by ``radius``, as the games' files set them."""
    low = np.asarray(low, np.float64) - radius
    size = float((np.asarray(high, np.float64) + radius - low).max())
    if not np.isfinite(size) or not np.isfinite(low).all():
        raise FormatError("a MOPP needs finite vertex positions")
    return low, TOP * 65536.0 / max(size, 1e-6)


def quantise(points, origin, scale):
    """The 24-bit integer positions (int64) of ``points`` (..., 3)."""
    origin = np.asarray(origin, np.float64)
    if not np.isfinite(origin).all() or not np.isfinite(scale) or not scale > 0:
        raise FormatError(f"a MOPP space needs a finite origin and a positive scale, not {tuple(origin)} and {scale}")
    q = np.floor((np.asarray(points, np.float64) - origin) * float(scale))
    return np.clip(np.nan_to_num(q, nan=0.0), -LIMIT, LIMIT).astype(np.int64)
