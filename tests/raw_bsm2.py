""".bsm2 files written with struct, apart from the product's codec: a real file's geometry (its
counts, vertices, indices and subsets, found by the sizes FORMAT-NOTES gives) with materials,
animations and an optional hierarchy of the test's own, in the layouts Banuba files use (skin
matrices per key without a hierarchy; parent-relative keys with one)."""

import struct

import numpy as np

VERTEX_SIZE = 32  # position 12, normal 4, tangent 4, uv 4, bones 4, weights 4
SUBSET_SIZE = 12


def geometry(data):
    """(vertex count, index count, subset count, bone count, the bytes of the three arrays) of a file."""
    nv, ni, ns, nb = struct.unpack_from("<4I", data, 0)
    end = 24 + VERTEX_SIZE * nv + 2 * ni + SUBSET_SIZE * ns
    return nv, ni, ns, nb, data[24:end]


def text(value):
    raw = value.encode()
    return struct.pack("<I", len(raw)) + raw


def bsm2(source, materials, animations, hierarchy=None):
    """A file of ``source``'s geometry: ``materials`` [name], ``animations`` [(name, duration ns,
    interval ns, (keys, bones, 3, 4) floats)], ``hierarchy`` None or (parents, (bones, 16)
    column-major inverse binds, names)."""
    nv, ni, ns, nb, arrays = geometry(source)
    out = struct.pack("<6I", nv, ni, ns, nb, len(materials), len(animations)) + arrays
    out += b"".join(text(name) for name in materials)
    for name, duration, interval, keys in animations:
        keys = np.asarray(keys, "<f4")
        assert keys.shape[1:] == (nb, 3, 4)
        out += text(name) + struct.pack("<QQI", duration, interval, len(keys)) + keys.tobytes()
    if hierarchy is not None:
        parents, inverse_bind, names = hierarchy
        out += bytes(parents) + np.asarray(inverse_bind, "<f4").tobytes() + b"".join(text(name) for name in names)
    return out


def rigid_keys(count, bones, seed, scale=1.0):
    """(count, bones, 3, 4) rotation and translation matrices turning smoothly over the keys."""
    generator = np.random.default_rng(seed)
    axes = generator.normal(size=(bones, 3))
    axes /= np.linalg.norm(axes, axis=1, keepdims=True)
    angles = np.linspace(0.0, 1.0, count)[:, None] * generator.uniform(0.2, 1.5, bones)
    x, y, z = axes.T
    c, s = np.cos(angles), np.sin(angles)
    t = 1 - c
    rotation = np.stack([
        np.stack([c + x * x * t, x * y * t - z * s, x * z * t + y * s], -1),
        np.stack([y * x * t + z * s, c + y * y * t, y * z * t - x * s], -1),
        np.stack([z * x * t - y * s, z * y * t + x * s, c + z * z * t], -1),
    ], -2)
    translation = np.linspace(0.0, 1.0, count)[:, None, None] * generator.uniform(-scale, scale, (bones, 3))
    return np.concatenate([rotation, translation[..., None]], axis=-1).astype("<f4")
