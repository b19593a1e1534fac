"""A whole .bsm2 file (Banuba skinned mesh): seed 002 and FORMAT-NOTES section 9.

Six u32 counts, vertices, u16 indices, subsets, material names, animations, then an optional
hierarchy that has no flag: it is there when bytes remain after the animations. No magic, no
padding; strings are u32 length + bytes (UTF-8, as the FBX names they come from).
"""

import numpy as np

from ..errors import FormatError
from ..files import SyncedFile

STRING_ENCODING = "utf-8"
MAX_BONES = 256  # bone indices are u8
MAX_VERTICES = 65535  # u16 indices, 0xFFFF left unused (a common primitive-restart value)

VERTEX_DTYPE = np.dtype(
    [
        ("position", "<f4", 3),
        ("normal", "<u4"),  # signed 10:10:10:2, w = 0
        ("tangent", "<u4"),  # signed 10:10:10:2, w = bitangent sign
        ("uv", "<u2", 2),  # / 65535, v from the image top
        ("bones", "u1", 4),
        ("weights", "u1", 4),  # / 255, sum 255, descending
    ]
)
SUBSET_DTYPE = np.dtype([("first", "<u4"), ("count", "<u4"), ("material", "<u4")])
COUNTS_SIZE = 24
KEY_SIZE = 48  # one float3x4 per bone
ANIMATION_MIN_SIZE = 24  # name length, duration, interval, key count
HIERARCHY_BONE_MIN_SIZE = 1 + 64 + 4  # parent, inverse bind, name length


def _string(s, value):
    return s.sized_string(value, STRING_ENCODING)


class Animation:
    """Keys sampled every ``interval_ns``: ``keys[k, bone]`` is a 3x4 matrix [R | t]."""

    def __init__(self, name="", duration_ns=0, interval_ns=0, keys=None, num_bones=0):
        self.name = name
        self.duration_ns = duration_ns
        self.interval_ns = interval_ns
        self.keys = np.zeros((0, num_bones, 3, 4), np.float32) if keys is None else keys
        self.num_bones = num_bones if keys is None else keys.shape[1]

    def sync(self, s):
        self.name = _string(s, self.name)
        self.duration_ns = s.u64(self.duration_ns)
        self.interval_ns = s.u64(self.interval_ns)
        nb = self.num_bones
        n = s.count(len(self.keys), item_size=KEY_SIZE * nb, what=f"animation {self.name!r} keys")
        if nb == 0:  # keys of no bones take no bytes: bound them as empty structures
            s.charge(n)
        flat = s.array(np.reshape(self.keys, -1), "f4", n * nb * 12)
        self.keys = np.reshape(flat, (n, nb, 3, 4))

    @property
    def expected_keys(self):
        """The key count the timing implies: duration / interval + 1."""
        return self.duration_ns // self.interval_ns + 1 if self.interval_ns else 1


class Hierarchy:
    """For physics meshes: parent per bone (a root is its own parent), inverse bind matrices and
    names. Keys are then local to the parent bone."""

    def __init__(self, parents=(), inverse_bind=None, names=()):
        self.parents = np.asarray(parents, np.uint8)
        n = len(self.parents)
        # As stored: 16 floats per bone, column-major (translation at 12-14).
        self.inverse_bind = np.zeros((n, 16), np.float32) if inverse_bind is None else inverse_bind
        self.names = list(names)

    def sync(self, s, num_bones):
        self.parents = s.array(self.parents, "u1", num_bones)
        flat = s.array(np.reshape(self.inverse_bind, -1), "f4", num_bones * 16)
        self.inverse_bind = np.reshape(flat, (num_bones, 16))
        self.names = s.repeat(self.names, num_bones, lambda name: _string(s, name))

    @property
    def inverse_bind_matrices(self):
        """(bones, 4, 4) float64 matrices acting on column vectors."""
        return np.asarray(self.inverse_bind, np.float64).reshape(-1, 4, 4).transpose(0, 2, 1)

    @staticmethod
    def stored_inverse_bind(matrices):
        """The stored column-major floats of (bones, 4, 4) matrices."""
        return np.ascontiguousarray(np.asarray(matrices).transpose(0, 2, 1), np.float32).reshape(-1, 16)


class Bsm2File(SyncedFile):
    def __init__(self):
        self.vertices = np.zeros(0, VERTEX_DTYPE)
        self.indices = np.zeros(0, np.uint16)
        self.subsets = np.zeros(0, SUBSET_DTYPE)
        self.num_bones = 0
        self.materials = []
        self.animations = []
        self.hierarchy = None
        self.path = None
        self.warnings = []  # what a reader should know but that did not stop reading

    # -- the one description of the layout ------------------------------------------------
    def sync(self, s):
        counts = (
            len(self.vertices),
            len(self.indices),
            len(self.subsets),
            self.num_bones,
            len(self.materials),
            len(self.animations),
        )
        nv, ni, ns, nb, nm, na = (s.u32(n) for n in counts)
        self.num_bones = nb
        if s.reading:
            _check_counts(s, nv, ni, ns, nb, nm, na)
        self.vertices = s.array(self.vertices, VERTEX_DTYPE, nv)
        self.indices = s.array(self.indices, "u2", ni)
        self.subsets = s.array(self.subsets, SUBSET_DTYPE, ns)
        self.materials = s.repeat(self.materials, nm, lambda name: _string(s, name))
        self.animations = s.items(self.animations, lambda: Animation(num_bones=nb), na, ANIMATION_MIN_SIZE)
        if s.reading and s.remaining:
            self.hierarchy = Hierarchy()
            if nb * HIERARCHY_BONE_MIN_SIZE > s.remaining:
                raise s.error(
                    f"{s.remaining} bytes after the animations: too few for the hierarchy of {nb} bones "
                    f"(at least {nb * HIERARCHY_BONE_MIN_SIZE})"
                )
        if self.hierarchy is not None:
            self.hierarchy.sync(s, nb)
        if s.reading and s.remaining:
            raise s.error(f"{s.remaining} bytes after the hierarchy")
        if s.reading:
            self.check()

    # -- checks -------------------------------------------------------------------------
    def layout(self):
        """Byte offsets of the vertex, index and subset arrays (the counts fix them)."""
        vertices = COUNTS_SIZE
        indices = vertices + VERTEX_DTYPE.itemsize * len(self.vertices)
        subsets = indices + 2 * len(self.indices)
        return vertices, indices, subsets

    def check(self):
        """What the engine relies on; raises FormatError at the first offending item, and
        records softer oddities in ``warnings``."""
        nv, nb = len(self.vertices), self.num_bones
        vertex_at, index_at, subset_at = self.layout()
        if nv > MAX_VERTICES:
            raise FormatError(f"{nv} vertices: a .bsm2 holds at most {MAX_VERTICES} (u16 indices)")
        if nb > MAX_BONES:
            raise FormatError(f"{nb} bones: u8 bone indices reach at most {MAX_BONES}")
        if len(self.indices) % 3:
            raise FormatError(f"{len(self.indices)} indices do not make whole triangles", offset=index_at)
        bad = np.flatnonzero(self.indices >= nv)
        if len(bad):
            raise FormatError(
                f"index {bad[0]} is {self.indices[bad[0]]}, beyond the {nv} vertices", offset=index_at + 2 * bad[0]
            )
        first = self.subsets["first"].astype(np.int64)
        end = first + self.subsets["count"]
        bad = np.flatnonzero((end > len(self.indices)) | (first % 3 != 0) | (self.subsets["count"] % 3 != 0))
        if len(bad):
            k = bad[0]
            raise FormatError(
                f"subset {k} (first {first[k]}, {self.subsets['count'][k]} indices) is not whole triangles "
                f"within the {len(self.indices)} indices",
                offset=subset_at + SUBSET_DTYPE.itemsize * k,
            )
        bad = np.flatnonzero(self.subsets["material"] >= len(self.materials))
        if len(bad):
            raise FormatError(
                f"subset {bad[0]} names material {self.subsets['material'][bad[0]]} of {len(self.materials)}",
                offset=subset_at + SUBSET_DTYPE.itemsize * bad[0],
            )
        weights = self.vertices["weights"]
        bad = np.argwhere((self.vertices["bones"] >= nb) & (weights > 0))
        if len(bad):
            v, slot = bad[0]
            raise FormatError(
                f"vertex {v} weights bone {self.vertices['bones'][v, slot]} of {nb}",
                offset=vertex_at + VERTEX_DTYPE.itemsize * v + VERTEX_DTYPE.fields["bones"][1] + slot,
            )
        for animation in self.animations:
            if animation.keys.shape[1:] != (nb, 3, 4):
                raise FormatError(f"animation {animation.name!r} has keys for {animation.keys.shape[1]} of {nb} bones")
            with np.errstate(all="ignore"):
                wild = ~(np.abs(animation.keys) < 1e15)  # NaN, infinite or beyond any scene
            if wild.any():
                key, bone = np.argwhere(wild)[0][:2]
                raise FormatError(f"animation {animation.name!r}: key {key} of bone {bone} holds a value that is not a usable number")
        if self.hierarchy is not None:
            self._check_hierarchy()
        self._note_oddities()

    def _check_hierarchy(self):
        from .skinning import bone_order

        hierarchy, nb = self.hierarchy, self.num_bones
        if len(hierarchy.parents) != nb or len(hierarchy.inverse_bind) != nb or len(hierarchy.names) != nb:
            raise FormatError(f"the hierarchy does not describe exactly {nb} bones")
        bone_order(hierarchy.parents)
        matrices = hierarchy.inverse_bind_matrices
        with np.errstate(all="ignore"):  # the values are judged here, not warned about
            finite = np.isfinite(matrices).all(axis=(1, 2)) & (np.abs(matrices) < 1e15).all(axis=(1, 2))
            scale = np.cbrt(np.abs(np.linalg.det(np.where(finite[:, None, None], matrices, np.eye(4))[:, :3, :3])))
        bad = np.flatnonzero(~finite | ~(scale > 1e-6))
        if len(bad):
            raise FormatError(f"bone {bad[0]} ({hierarchy.names[bad[0]]!r}): its inverse bind matrix cannot be inverted")

    def _note_oddities(self):
        warnings = []
        sums = self.vertices["weights"].sum(axis=1, dtype=np.int64)
        if np.any(sums != 255):
            warnings.append(f"{np.count_nonzero(sums != 255)} vertices have weights not summing to 255")
        for animation in self.animations:
            if len(animation.keys) != animation.expected_keys:
                warnings.append(
                    f"animation {animation.name!r}: {len(animation.keys)} keys where duration / interval + 1 "
                    f"gives {animation.expected_keys}"
                )
        self.warnings = warnings


def _check_counts(s, nv, ni, ns, nb, nm, na):
    """Refuse counts whose smallest possible size exceeds the file before anything is allocated."""
    if nb > MAX_BONES:
        raise s.error(f"{nb} bones: u8 bone indices reach at most {MAX_BONES}", at=12)
    least = (
        VERTEX_DTYPE.itemsize * nv
        + 2 * ni
        + SUBSET_DTYPE.itemsize * ns
        + 4 * nm
        + ANIMATION_MIN_SIZE * na
    )
    if least > s.remaining:
        raise s.error(
            f"counts ({nv} vertices, {ni} indices, {ns} subsets, {nm} materials, {na} animations) need at "
            f"least {least} bytes but only {s.remaining} follow",
            at=0,
        )
