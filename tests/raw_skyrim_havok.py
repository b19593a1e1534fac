"""Skyrim LE / SE Havok blocks (bs 83 / 100, nif.xml's 2010 layouts) read straight from a NIF's
bytes with struct, apart from the product's block decoders: rigid bodies and the compressed mesh
data decoded into triangles by plain loops. The codec's header gives only block types, sizes and
offsets (raw_havok.block_bytes)."""

import struct

import numpy as np
from raw_havok import Reader, block_bytes

SKYRIM_UNITS = 69.99125  # game units per Havok unit in Skyrim, as in FO4
COLLISION_TYPES = ("bhkCollisionObject", "bhkBlendCollisionObject")


def read_body(raw):
    """bhkRigidBody(T) with bhkRigidBodyCInfo2010: shape, layer, translation, rotation, mass,
    friction, restitution, motion system."""
    r = Reader(raw)
    shape = r.take("i")
    layer = r.take("B")
    r.at = 52  # world object (4 + 4 + 20), entity (4), cinfo's unused, filter, unused, int, response
    translation = np.array(r.take("4f")[:3])
    rotation = r.take("4f")
    r.at = 180
    mass = r.take("f")
    r.at = 200
    friction = r.take("f")
    r.at = 208
    restitution = r.take("f")
    r.at = 224
    motion = r.take("B")
    return dict(shape=shape, layer=layer, translation=translation, rotation=rotation, mass=mass, friction=friction,
                restitution=restitution, motion=motion)


def read_bodies(path):
    """{owner node index: body dict (plus ``type``)} of every node whose collision object holds
    a rigid body (nodes via raw_nodes)."""
    from raw_nodes import read_nodes

    blocks = block_bytes(path.read_bytes())
    nodes, _ = read_nodes(path)
    found = {}
    for index, node in nodes.items():
        if node.collision < 0 or blocks[node.collision][0] not in COLLISION_TYPES:
            continue
        _, _, body = struct.unpack_from("<iHi", blocks[node.collision][1])
        body_type, body_raw = blocks[body]
        if body_type.startswith("bhkRigidBody"):
            found[index] = dict(read_body(body_raw), type=body_type)
    return found


def read_compressed_data(raw):
    """bhkCompressedMeshShapeData as triangles: (vertices (n, 3) Havok units, triangles (m, 3),
    material ids per triangle), big triangles first, then each chunk's strips and list."""
    r = Reader(raw)
    r.at = 20 + 32 + 2  # bits and masks, error, AABB, welding and material types
    for _ in range(3):  # materials 32 / 16 / 8
        count = r.take("I")
        r.at += 4 * count
    materials = [r.take("IBBH")[0] for _ in range(r.take("I"))]
    r.take("I")  # named materials
    transforms = [r.take("8f") for _ in range(r.take("I"))]
    vertices = [r.take("4f")[:3] for _ in range(r.take("I"))]
    triangles, ids = [], []
    for _ in range(r.take("I")):
        a, b, c, material, _ = r.take("HHHIH")
        triangles.append((a, b, c))
        ids.append(materials[material])
    for _ in range(r.take("I")):
        origin = r.take("4f")[:3]
        material, _, transform = r.take("IHH")
        offsets = [r.take("H") for _ in range(r.take("I"))]
        indices = [r.take("H") for _ in range(r.take("I"))]
        strips = [r.take("H") for _ in range(r.take("I"))]
        welding = r.take("I")
        r.at += 2 * welding
        tx, ty, tz, _, x, y, z, w = transforms[transform]
        rotation = np.array([
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ])
        first = len(vertices)
        for i in range(0, len(offsets), 3):
            local = np.array(origin) + np.array(offsets[i : i + 3]) / 1000.0
            vertices.append(tuple(rotation @ local + (tx, ty, tz)))
        at = 0
        for length in strips:
            for k in range(length - 2):
                a, b, c = indices[at + k : at + k + 3]
                triangles.append((first + a, first + b, first + c) if k % 2 == 0 else (first + c, first + b, first + a))
                ids.append(materials[material])
            at += length
        for k in range(at, len(indices) - 2, 3):
            triangles.append(tuple(first + i for i in indices[k : k + 3]))
            ids.append(materials[material])
    return np.array(vertices, np.float64).reshape(-1, 3), np.array(triangles, np.int64).reshape(-1, 3), ids
