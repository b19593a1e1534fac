"""Skins read straight from a NIF's bytes with struct, apart from the product's decoders
(nif.xml's layouts, 20.2.0.7, little-endian): Fallout 4 / 76's BSSkin::Instance and
BSSkin::BoneData, and the NiSkinInstance / BSDismemberSkinInstance, NiSkinData and
NiSkinPartition of Fallout 3 / New Vegas and Skyrim LE (Skyrim SE's partition holding vertices:
tests/sse_raw.py).

BSSkin::Instance = skeleton root, data, bone count + bones, scale count + scales (3f);
BSSkin::BoneData = count, then per bone a bound sphere (4f), rotation rows (9f), translation
(3f), scale (f). NiSkinInstance = data, partition, skeleton root, bone count + bones;
BSDismemberSkinInstance adds a count of (part flag u16, body part u16). NiSkinData = skin
transform (rotation rows 9f, translation 3f, scale f), bone count, has vertex weights (byte),
per bone a transform, a bound sphere (4f), a u16 count of (vertex u16, weight f32). A
NiSkinPartition partition = vertex, triangle, bone, strip counts and weights per vertex (5 u16),
bones (u16), has vertex map + map (u16), has weights + weights (f32, per a vertex), strip
lengths (u16), has faces + strips or triangles (u16), has bone indices + indices (u8, per a
vertex), after bs 34 a LOD level and a global VB flag (bytes)."""

import struct

import numpy as np


def transform(raw, at):
    """A 4x4 matrix of a NiTransform (rotation rows, translation, scale) at ``at``."""
    values = struct.unpack_from("<13f", raw, at)
    matrix = np.eye(4)
    matrix[:3, :3] = np.array(values[:9]).reshape(3, 3) * values[12]
    matrix[:3, 3] = values[9:12]
    return matrix


def bs_skin(raw, instance):
    """(skeleton root, bone node indices, {node: 4x4 bind pose in shape space inverted}) of a
    BSSkin::Instance."""
    root, data, count = struct.unpack_from("<iiI", raw.blocks[instance])
    bones = struct.unpack_from(f"<{count}i", raw.blocks[instance], 12)
    rests = {}
    for number, bone in enumerate(bones):
        values = struct.unpack_from("<17f", raw.blocks[data], 4 + 68 * number)
        bind = np.eye(4)
        bind[:3, :3] = np.array(values[4:13]).reshape(3, 3) * values[16]
        bind[:3, 3] = values[13:16]
        rests[bone] = np.linalg.inv(bind)
    return root, list(bones), rests


def ni_skin_instance(raw, instance):
    """{"data", "partition", "root", "bones", "body_parts" (None for a NiSkinInstance: else
    (flag, part) pairs)}."""
    block = raw.blocks[instance]
    data, partition, root, count = struct.unpack_from("<3iI", block)
    bones = list(struct.unpack_from(f"<{count}i", block, 16))
    at = 16 + 4 * count
    body_parts = None
    if raw.type_of(instance) == "BSDismemberSkinInstance":
        (parts,) = struct.unpack_from("<I", block, at)
        body_parts = [struct.unpack_from("<2H", block, at + 4 + 4 * i) for i in range(parts)]
        at += 4 + 4 * parts
    assert at == len(block)
    return {"data": data, "partition": partition, "root": root, "bones": bones, "body_parts": body_parts}


def ni_skin_data(raw, index):
    """{"skin" (4x4), "binds" (per bone: 4x4 shape space -> bone space, the skin transform
    composed first), "bounds" (per bone: centre xyz, radius), "weights" ({vertex: {bone slot:
    weight}})}."""
    block = raw.blocks[index]
    skin = transform(block, 0)
    count, has_weights = struct.unpack_from("<IB", block, 52)
    at = 57
    binds, bounds, weights = [], [], {}
    for bone in range(count):
        binds.append(transform(block, at) @ skin)
        bounds.append(struct.unpack_from("<4f", block, at + 52))
        (pairs,) = struct.unpack_from("<H", block, at + 68)
        at += 70
        if has_weights:
            for vertex, weight in struct.iter_unpack("<Hf", block[at : at + 6 * pairs]):
                weights.setdefault(vertex, {})[bone] = weight
            at += 6 * pairs
    assert at == len(block)
    return {"skin": skin, "binds": binds, "bounds": bounds, "weights": weights}


def ni_skin_partition(raw, index):
    """The partitions of a NiSkinPartition before Skyrim SE: per partition {"counts" (vertices,
    triangles, bones, strips, weights per vertex), "bones", "vertex_map", "vertex_weights",
    "strips", "triangles" (partition numbering; None when it has strips), "bone_indices",
    "lod_level", "global_vb" (None up to bs 34)}; absent arrays are None. The whole block is read."""
    block = raw.blocks[index]
    (count,) = struct.unpack_from("<I", block)
    at = 4
    partitions = []
    for _ in range(count):
        counts = struct.unpack_from("<5H", block, at)
        vertices, triangles, bones, strips, per = counts
        at += 10
        part = {"counts": counts, "bones": list(struct.unpack_from(f"<{bones}H", block, at))}
        at += 2 * bones

        def optional(fmt, n, shape):
            nonlocal at
            present = block[at]
            at += 1
            if not present:
                return None
            values = np.frombuffer(block, fmt, n, at).reshape(shape)
            at += np.dtype(fmt).itemsize * n
            return values

        part["vertex_map"] = optional("<u2", vertices, (vertices,))
        part["vertex_weights"] = optional("<f4", vertices * per, (vertices, per))
        lengths = struct.unpack_from(f"<{strips}H", block, at)
        at += 2 * strips
        has_faces = block[at]
        at += 1
        part["strips"], part["triangles"] = [], None
        if has_faces and strips:
            for length in lengths:
                part["strips"].append(np.frombuffer(block, "<u2", length, at))
                at += 2 * length
        elif has_faces:
            part["triangles"] = np.frombuffer(block, "<u2", 3 * triangles, at).reshape(-1, 3).astype(np.int64)
            at += 6 * triangles
        part["bone_indices"] = optional("u1", vertices * per, (vertices, per))
        part["lod_level"] = part["global_vb"] = None
        if raw.bs_version > 34:
            part["lod_level"], part["global_vb"] = block[at], block[at + 1]
            at += 2
        partitions.append(part)
    assert at == len(block)
    return partitions
