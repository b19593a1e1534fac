"""Fallout 3 / New Vegas Havok blocks read straight from a NIF's bytes with struct, apart from
the product's block decoders (nif.xml's layouts for 20.2.0.7, bs <= 34, little-endian): what
collision tests compare Blender and the codec with. Also packs such blocks by hand, for files
holding the shape types the corpus lacks. The codec's header gives only block types, sizes and
offsets."""

import struct

import numpy as np

from precombined_nif.core.nif import NifFile, RawBlock

UNITS = 6.999125  # FORMAT-NOTES section 8: FO3/FNV game units per Havok unit


def block_bytes(data):
    """{block index: (type name, bytes)} of a file's blocks."""
    nif = NifFile.from_bytes(data)
    header = nif.header
    sizes = [int(size) for size in header.block_sizes]
    offset = len(data) - len(nif.trailing) - 4 * (1 + len(nif.roots)) - sum(sizes)
    found = {}
    for index, size in enumerate(sizes):
        found[index] = (header.block_types[int(header.block_type_indices[index]) & 0x7FFF], data[offset : offset + size])
        offset += size
    return found


class Reader:
    def __init__(self, raw, order="<"):
        self.raw, self.at, self.order = raw, 0, order

    def take(self, fmt):
        values = struct.unpack_from(self.order + fmt, self.raw, self.at)
        self.at += struct.calcsize(self.order + fmt)
        return values if len(values) > 1 else values[0]


def read_body(raw):
    """bhkRigidBody(T): shape, layer, translation, rotation (x, y, z, w), mass, friction,
    restitution, motion system."""
    r = Reader(raw)
    shape = r.take("i")
    layer = r.take("B")
    r.at = 4 + 4 + 4 + 1 + 3 + 12 + 4  # filter, unused, phase, unused, property, response/delay
    r.at += 4 + 4 + 4 + 4 + 4  # unused, filter, unused, response/delay, unused
    translation = r.take("4f")[:3]
    rotation = r.take("4f")
    r.at += 16 + 16 + 48 + 16  # velocities, inertia, centre
    mass = r.take("f")
    r.take("2f")  # damping
    friction, restitution = r.take("2f")
    r.take("3f")
    motion = r.take("B")
    return dict(shape=shape, layer=layer, translation=np.array(translation), rotation=rotation, mass=mass,
                friction=friction, restitution=restitution, motion=motion)


def read_shape(type_name, raw):
    """What a shape block holds, lengths in Havok units."""
    r = Reader(raw)
    if type_name == "bhkSphereShape":
        material, radius = r.take("If")
        return dict(material=material, radius=radius)
    if type_name == "bhkBoxShape":
        material, radius = r.take("If")
        r.at += 8
        return dict(material=material, radius=radius, dimensions=np.array(r.take("3f")))
    if type_name == "bhkCapsuleShape":
        material, radius = r.take("If")
        r.at += 8
        first = np.array(r.take("3f"))
        r.take("f")
        return dict(material=material, radius=radius, first=first, second=np.array(r.take("3f")))
    if type_name == "bhkConvexVerticesShape":
        material, radius = r.take("If")
        r.at += 24
        n = r.take("I")
        vertices = np.array(r.take(f"{4 * n}f"), np.float64).reshape(n, 4)
        return dict(material=material, radius=radius, vertices=vertices[:, :3])
    if type_name in ("bhkTransformShape", "bhkConvexTransformShape"):
        shape, material, radius = r.take("iIf")
        r.at += 8
        columns = np.array(r.take("16f"), np.float64).reshape(4, 4)
        matrix = columns.T.copy()
        matrix[3] = (0, 0, 0, 1)
        return dict(shape=shape, material=material, matrix=matrix)
    if type_name in ("bhkListShape", "bhkConvexListShape"):
        n = r.take("I")
        return dict(sub_shapes=list(np.atleast_1d(r.take(f"{n}i"))) if n else [], material=r.take("I"))
    if type_name == "bhkMoppBvTreeShape":
        shape = r.take("i")
        r.at += 12 + 4
        size = r.take("I")
        return dict(shape=shape, code=raw[len(raw) - size :])
    if type_name == "bhkPackedNiTriStripsShape":
        r.at = 16
        scale = np.array(r.take("4f")[:3])
        r.at = 52
        return dict(scale=scale, data=r.take("i"))
    if type_name == "hkPackedNiTriStripsData":
        n = r.take("I")
        triangles = np.array(r.take(f"{4 * n}H"), np.int64).reshape(n, 4)[:, :3]
        nv = r.take("I")
        compressed = r.take("B")
        vertices = np.array(r.take(f"{3 * nv}{'e' if compressed else 'f'}"), np.float64).reshape(nv, 3)
        m = r.take("H")
        subs = [r.take("BBHII") for _ in range(m)]
        return dict(triangles=triangles, vertices=vertices, sub_shapes=subs)
    raise KeyError(type_name)


def collision_bodies(path):
    """{owner block index: (collision index, body dict, body type)} for every node whose
    collision is a bhkCollisionObject, read from the bytes; nodes via raw_nodes."""
    from raw_nodes import read_nodes

    data = path.read_bytes()
    blocks = block_bytes(data)
    nodes, _ = read_nodes(path)
    found = {}
    for index, node in nodes.items():
        if node.collision < 0 or blocks[node.collision][0] != "bhkCollisionObject":
            continue
        raw = blocks[node.collision][1]
        target, flags, body = struct.unpack_from("<iHi", raw)
        body_type, body_raw = blocks[body]
        found[index] = (node.collision, read_body(body_raw), body_type)
    return found, blocks


def shape_vertices(blocks, index, matrix=np.eye(4), units=UNITS):
    """Corner points of a shape tree in its body's space, game units (``units`` per Havok unit;
    a sphere or capsule as its bounding box corners)."""
    type_name, raw = blocks[index]
    shape = read_shape(type_name, raw)
    if type_name in ("bhkTransformShape", "bhkConvexTransformShape"):
        inner = shape["matrix"].copy()
        inner[:3, 3] *= units
        return shape_vertices(blocks, shape["shape"], matrix @ inner, units)
    if type_name in ("bhkListShape", "bhkConvexListShape"):
        return np.concatenate([shape_vertices(blocks, child, matrix, units) for child in shape["sub_shapes"]])
    if type_name == "bhkMoppBvTreeShape":
        return shape_vertices(blocks, shape["shape"], matrix, units)
    if type_name == "bhkPackedNiTriStripsShape":
        data = read_shape(*blocks[shape["data"]])
        points = data["vertices"] * shape["scale"] * units
    elif type_name == "bhkBoxShape":
        signs = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)])
        points = signs * shape["dimensions"] * units
    elif type_name == "bhkSphereShape":
        points = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)]) * shape["radius"] * units
    elif type_name == "bhkCapsuleShape":
        ends = np.array([shape["first"], shape["second"]]) * units
        r = shape["radius"] * units
        points = np.concatenate([ends - r, ends + r])
    else:
        points = shape["vertices"] * units
    return points @ matrix[:3, :3].T + matrix[:3, 3]


# -- packing blocks by hand ----------------------------------------------------------------------

EMPTY_PROPERTY = struct.pack("<3I", 0, 0, 0x80000000)


def pack_box(material, radius, half):
    return struct.pack("<If8x3ff", material, radius, *half, 0.0)


def pack_sphere(material, radius):
    return struct.pack("<If", material, radius)


def pack_capsule(material, radius, first, second):
    return struct.pack("<If8x3ff3ff", material, radius, *first, radius, *second, radius)


def pack_convex(material, radius, vertices, planes):
    out = struct.pack("<If", material, radius) + EMPTY_PROPERTY * 2
    out += struct.pack(f"<I{4 * len(vertices)}f", len(vertices), *np.c_[vertices, np.zeros(len(vertices))].ravel())
    return out + struct.pack(f"<I{4 * len(planes)}f", len(planes), *np.asarray(planes).ravel())


def pack_transform(shape, material, matrix):
    columns = np.asarray(matrix, np.float64).T.ravel()
    return struct.pack("<iIf8x16f", shape, material, 0.0, *columns)


def pack_list(sub_shapes, material):
    n = len(sub_shapes)
    out = struct.pack(f"<I{n}iI", n, *sub_shapes, material) + EMPTY_PROPERTY * 2
    return out + struct.pack("<I", n) + b"\0" * 4 * n


def pack_convex_list(sub_shapes, material, radius):
    n = len(sub_shapes)
    return struct.pack(f"<I{n}iIfIf", n, *sub_shapes, material, radius, 0, 0.0) + EMPTY_PROPERTY + struct.pack("<Bf", 0, 0.0)


# MOPP code written by hand for the five packed triangles: four splits whose both sides are
# always taken (left when the x value <= 0xFF, right when >= 0), each skipping its left terminal
HAND_MOPP = bytes.fromhex("10ff000130" "10ff000131" "10ff000132" "10ff000133" "34")


def pack_mopp(shape, code=HAND_MOPP):
    return struct.pack("<i12xfI4f", shape, 1.0, len(code), -1.0, -1.0, -1.0, 1000.0) + code


def pack_packed_shape(data, radius=0.1):
    return struct.pack("<I4xf4x4ff4fi", 0, radius, 1.0, 1.0, 1.0, 0.0, radius, 1.0, 1.0, 1.0, 0.0, data)


def pack_packed_data(triangles, vertices, sub_shapes, order="<", compressed=False):
    """``sub_shapes``: (layer, num vertices, material) each."""
    out = struct.pack(order + "I", len(triangles))
    for a, b, c in triangles:
        out += struct.pack(order + "4H", a, b, c, 0)
    out += struct.pack(order + "IB", len(vertices), int(compressed))
    out += struct.pack(order + f"{3 * len(vertices)}{'e' if compressed else 'f'}", *np.asarray(vertices).ravel())
    out += struct.pack(order + "H", len(sub_shapes))
    for layer, count, material in sub_shapes:
        out += struct.pack(order + "BBHII", layer, 0, 0, count, material)
    return out


def pack_collision(target, body):
    return struct.pack("<iHi", target, 1, body)


def pack_body(template, shape, *, rigid_t=False, translation=(0, 0, 0), rotation=(0, 0, 0, 1), layer=1, motion=7, mass=0.0):
    """A bhkRigidBody's bytes: ``template`` (a corpus body's bytes) with these fields set."""
    out = bytearray(template)
    struct.pack_into("<iB", out, 0, shape, layer)
    struct.pack_into("<B", out, 36, layer)
    struct.pack_into("<4f4f", out, 52, *translation, 0.0, *rotation)
    struct.pack_into("<f", out, 180, mass)
    struct.pack_into("<B", out, 212, motion)
    return bytes(out), "bhkRigidBodyT" if rigid_t else "bhkRigidBody"


SHAPE_NODES = {18: "transformed box", 23: "list", 28: "packed mesh", 33: "convex list"}
PACKED_TRIANGLES = [(0, 1, 2), (0, 2, 3), (0, 3, 1), (1, 3, 2), (4, 5, 6)]
PACKED_VERTICES = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1], [2, 2, 2], [3, 2, 2], [2, 3, 2]], np.float64) * 0.25
PACKED_SUB_SHAPES = [(1, 4, 5), (1, 3, 9)]  # (layer, vertices, material)
TETRA = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], np.float64) * 0.5
TETRA_PLANES = [(0, 0, -1, 0), (0, -1, 0, 0), (-1, 0, 0, 0), (0.57735, 0.57735, 0.57735, -0.288675)]


def rotation_z(degrees):
    angle = np.radians(degrees)
    matrix = np.eye(4)
    matrix[:2, :2] = [[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]]
    return matrix


def every_shape_file(source):
    """A New Vegas file (``source``: 9mmscp.nif's path) with a body of every other shape kind on
    four of its nodes, packed here by hand: a bhkRigidBodyT with a box in a convex transform
    shape; a list of a sphere, a capsule and a transformed convex; a packed triangle mesh under
    a MOPP tree; a convex list of a box and a convex."""
    from precombined_nif.core.nif import RawBlock

    data = source.read_bytes()
    raw = block_bytes(data)
    template = raw[5][1]
    nif = NifFile.from_bytes(data)

    def add(type_name, payload):
        nif.blocks.append(RawBlock(type_name, payload))
        return len(nif.blocks) - 1

    def body(node, shape, **options):
        payload, kind = pack_body(template, shape, **options)
        index = add(kind, payload)
        nif.blocks[node].collision_object = add("bhkCollisionObject", pack_collision(node, index))

    box = add("bhkBoxShape", pack_box(7, 0.05, (0.3, 0.2, 0.1)))
    moved = rotation_z(30)
    moved[:3, 3] = (0.5, -0.25, 0.125)
    body(18, add("bhkConvexTransformShape", pack_transform(box, 7, moved)), rigid_t=True,
         translation=(0.25, 0.5, -0.125), rotation=(0.0, 0.0, np.sin(np.radians(20)), np.cos(np.radians(20))))
    sphere = add("bhkSphereShape", pack_sphere(3, 0.2))
    capsule = add("bhkCapsuleShape", pack_capsule(4, 0.1, (0.0, 0.0, -0.3), (0.0, 0.0, 0.3)))
    convex = add("bhkConvexVerticesShape", pack_convex(5, 0.01, TETRA, TETRA_PLANES))
    shifted = np.eye(4)
    shifted[:3, 3] = (0.0, 1.0, 0.0)
    # a plain bhkRigidBody's translation and rotation are not applied: these must not move it
    body(23, add("bhkListShape", pack_list([sphere, capsule, add("bhkTransformShape", pack_transform(convex, 5, shifted))], 0)),
         translation=(1.0, 2.0, 3.0), rotation=(0.0, 0.6, 0.0, 0.8))
    packed = add("hkPackedNiTriStripsData", pack_packed_data(PACKED_TRIANGLES, PACKED_VERTICES, PACKED_SUB_SHAPES))
    body(28, add("bhkMoppBvTreeShape", pack_mopp(add("bhkPackedNiTriStripsShape", pack_packed_shape(packed)))))
    box2 = add("bhkBoxShape", pack_box(8, 0.05, (0.1, 0.1, 0.1)))
    convex2 = add("bhkConvexVerticesShape", pack_convex(8, 0.05, TETRA + 0.5, TETRA_PLANES))
    body(33, add("bhkConvexListShape", pack_convex_list([box2, convex2], 8, 0.05)), motion=4, mass=2.0, layer=5)
    return nif.to_bytes()


def xbox_file(every_shape):
    """The packed triangle data written by hand in the console layout (big-endian, half-float
    vertices, FORMAT-NOTES section 7), the rest of the file big-endian."""
    xbox = NifFile.from_bytes(every_shape)
    index = next(i for i, b in enumerate(xbox.blocks) if b.type_name == "hkPackedNiTriStripsData")
    xbox.header.little_endian = 0
    xbox.blocks[index] = RawBlock("hkPackedNiTriStripsData", pack_packed_data(
        PACKED_TRIANGLES, PACKED_VERTICES, PACKED_SUB_SHAPES, order=">", compressed=True), big_endian=True)
    return xbox.to_bytes(), index
