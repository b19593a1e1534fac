"""Building an hknpCompressedMeshShape from a triangle mesh.

The triangles are split into sections by halving at the median of the widest axis of their
centres until a section holds at most 128 primitives (a primitive key keeps 7 bits for the
primitive) and 255 distinct vertices (a primitive's corners are u8). Vertices used by more than
one section become shared vertices (21/21/22 bits in the domain, so neighbouring sections meet
exactly); the others are packed in their section (11/11/10 bits in the box of the section's
packed vertices). Each section gets its primitive tree, the mesh its section tree, both built
on the decoded positions.

Triangles of the same material sharing an edge are paired into quads (a, b, c, d) = (a, b, c) +
(a, c, d), keeping both triangles' winding; the quad-is-flat bit is set for the quads whose
fourth corner lies in the plane of the first three. The triangle-is-interior bits are sized for
the keys and left clear.
"""

import numpy as np

from ...errors import FormatError
from ..classes.properties import BS_MATERIAL, BS_MATERIAL_KEY, BSMaterialProperties, PropertyEntry, RefCountedProperties
from .base import GAME_UNITS, proper_triangles
from .compressed_mesh import DATA_RUN, SHARED_MAX, SIMD_NODE, CompressedMeshShape, CompressedMeshShapeData, Section
from .static_tree import build_trees

MAX_PRIMITIVES = 128
FLAT = 1e-5  # a quad is flat when its fourth corner is this close to the plane, per unit of size
MAX_VERTICES = 255
PACKED_MAX = np.array([0x7FF, 0x7FF, 0x3FF], np.float64)
FLOAT_MAX = float(np.finfo(np.float32).max)


def build_compressed_mesh(vertices, triangles, materials=None, material_ids=(0,), user_data=0):
    """A compressed mesh shape (with its data and Bethesda material properties) from vertices in
    game units, triangles (m, 3), each triangle's index into ``material_ids`` (the Bethesda
    material of each data run value)."""
    vertices = np.asarray(vertices, np.float64).reshape(-1, 3) / GAME_UNITS
    triangles = np.asarray(triangles, np.int64).reshape(-1, 3)
    materials = np.zeros(len(triangles), np.int64) if materials is None else np.asarray(materials, np.int64)
    if len(materials) != len(triangles):
        raise FormatError(f"{len(materials)} triangle materials for {len(triangles)} triangles")
    if len(triangles) and (triangles.min() < 0 or triangles.max() >= len(vertices)):
        raise FormatError("a triangle names a vertex that does not exist")
    if not np.isfinite(vertices).all():
        raise FormatError("vertices must be finite")
    if len(materials) and (materials.min() < 0 or materials.max() >= min(len(material_ids), 0x10000)):
        raise FormatError(f"triangle materials must index the {len(material_ids)} material ids")
    proper = proper_triangles(triangles)
    triangles, materials = triangles[proper], materials[proper]
    if not len(triangles):
        raise FormatError("a compressed mesh needs at least one triangle")

    primitives, materials, flat = _pair_quads(vertices, triangles, materials)
    groups = _split(vertices, primitives)
    data = CompressedMeshShapeData()
    data.shared_vertices, shared_slot, shared_positions = _shared_vertices(vertices, primitives, groups)
    built = [_section(vertices, primitives[g], materials[g], flat[g], shared_slot, shared_positions) for g in groups]
    _primitive_trees(built)
    boxes = np.array([section["aabb"] for section in built], np.float32)
    data.domain = np.zeros((2, 4), np.float32)
    data.domain[:, :3] = np.stack([boxes[:, 0].min(axis=0), boxes[:, 1].max(axis=0)])
    data.tree, order = build_trees(boxes, [0], data.domain[:, :3], data_bytes=2)
    _store(data, [built[k] for k in order], _leaf_nodes(data.tree))
    data.simd_nodes = _empty_simd_tree()

    shape = CompressedMeshShape()
    shape.user_data = user_data
    shape.data = data
    shape.shape_key_bits = data.bits_per_key
    flat_bits = np.concatenate([(index << 7) + np.flatnonzero(built[k]["flat"]) for index, k in enumerate(order)])
    shape.quad_bits = ((len(data.sections) - 1) << 7) + (data.sections[-1].primitives & 0xFF)
    shape.quad_is_flat = _bit_field(flat_bits, shape.quad_bits)
    shape.triangle_bits = data.max_key_value + 1
    shape.triangle_is_interior = _bit_field([], shape.triangle_bits)
    bs_materials = np.zeros(len(material_ids), BS_MATERIAL)
    bs_materials["flags"] = 1
    bs_materials["material"] = material_ids
    shape.properties = RefCountedProperties([PropertyEntry(BSMaterialProperties(bs_materials), BS_MATERIAL_KEY)])
    return shape


def _bit_field(bits, count):
    """hkBitField words of ``count`` bits with ``bits`` set."""
    bits = np.asarray(bits, np.int64)
    words = np.zeros(-(-count // 32), np.uint32)
    np.bitwise_or.at(words, bits >> 5, np.left_shift(np.uint32(1), (bits & 31).astype(np.uint32)))
    return words


def _shared_vertices(vertices, primitives, groups):
    """The vertices used by more than one section, quantised in the domain of all used
    vertices: (u64 words, each vertex's shared slot or -1, decoded positions by slot)."""
    used = np.unique(primitives)
    domain = _outward(vertices[used].min(axis=0), vertices[used].max(axis=0))
    owners = np.concatenate([np.unique(primitives[group]) for group in groups])
    ids = np.flatnonzero(np.bincount(owners, minlength=len(vertices)) > 1)
    if len(ids) > 0x10000:
        raise FormatError(f"{len(ids)} shared vertices: a compressed mesh holds at most 65536")
    slot = np.full(len(vertices), -1, np.int64)
    slot[ids] = np.arange(len(ids))
    extent = domain[1] - domain[0]
    steps = np.round((vertices[ids] - domain[0]) / np.where(extent > 0, extent, 1) * SHARED_MAX)
    steps = np.minimum(steps, SHARED_MAX).astype(np.uint64)
    words = steps[:, 0] | (steps[:, 1] << np.uint64(21)) | (steps[:, 2] << np.uint64(42))
    return words, slot, domain[0] + steps.astype(np.float64) / SHARED_MAX * extent


def _outward(low, high):
    """A float32 box containing the float64 box."""
    low32, high32 = low.astype(np.float32), high.astype(np.float32)
    low32 = np.where(low32 > low, np.nextafter(low32, np.float32(-np.inf)), low32)
    high32 = np.where(high32 < high, np.nextafter(high32, np.float32(np.inf)), high32)
    return np.stack([low32, high32]).astype(np.float64)


def _pair_quads(vertices, triangles, materials):
    """Primitives (k, 4): pairs of triangles sharing an edge, of the same material, as quads;
    the other triangles as (a, b, c, c). Their materials, and which quads are flat. Each round
    pairs the triangles that choose each other: each chooses the free neighbour across its
    longest edge (the diagonal of a quad split in two)."""
    count = len(triangles)
    following = np.roll(triangles, -1, axis=1)
    scale = int(triangles.max()) + 1
    keys = (triangles * scale + following).ravel()  # directed edge x -> y, three per triangle
    order = np.argsort(keys, kind="stable")
    lengths = np.linalg.norm(vertices[following] - vertices[triangles], axis=2)
    partner_of = np.full(count, -1)
    free = np.ones(count, bool)
    reverse = (following * scale + triangles).ravel()
    for _ in range(4):
        at = np.searchsorted(keys[order], reverse)
        found = order[np.minimum(at, len(order) - 1)]
        match = (keys[found] == reverse) & free.repeat(3) & free[found // 3]
        match &= (found // 3 != np.arange(3 * count) // 3) & (materials.repeat(3) == materials[found // 3])
        best = np.where(match.reshape(-1, 3), lengths, -1.0).argmax(axis=1)
        neighbour = (found // 3).reshape(-1, 3)[np.arange(count), best]
        choice = np.where(match.reshape(-1, 3).any(axis=1), neighbour, count)
        mutual = (choice < count) & (choice[np.minimum(choice, count - 1)] == np.arange(count))
        partner_of[mutual] = choice[mutual]
        free &= ~mutual
    first = np.flatnonzero(partner_of > np.arange(count))
    second = partner_of[first]
    # rotate the first triangle so its shared edge x -> y is (c -> a): quad (y, b, x, d)
    edge = triangles[first] * scale + following[first]
    back = following[second] * scale + triangles[second]
    shared = (edge[:, :, None] == back[:, None, :]).any(axis=2).argmax(axis=1)
    x, y = triangles[first, shared], following[first, shared]
    b = triangles[first, (shared + 2) % 3]
    d = triangles[second][(triangles[second] != x[:, None]) & (triangles[second] != y[:, None])]
    quads = np.stack([y, b, x, d], axis=1)
    single = np.flatnonzero(partner_of < 0)
    primitives = np.concatenate([quads, triangles[single][:, [0, 1, 2, 2]]])
    corners = vertices[quads]
    normal = np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0])
    size = np.linalg.norm(normal, axis=1)
    height = np.abs(np.einsum("ij,ij->i", normal, corners[:, 3] - corners[:, 0]))
    flat = np.concatenate([height <= FLAT * size * np.sqrt(size), np.zeros(len(single), bool)])
    return primitives, np.concatenate([materials[first], materials[single]]), flat


def _split(vertices, primitives):
    """Primitive index groups small enough for one section each."""
    centres = vertices[primitives].mean(axis=1)
    groups = []
    stack = [np.arange(len(primitives))]
    while stack:
        members = stack.pop()
        if len(members) <= MAX_PRIMITIVES and len(np.unique(primitives[members])) <= MAX_VERTICES:
            groups.append(members)
            continue
        axis = int(np.ptp(centres[members], axis=0).argmax())
        members = members[np.argsort(centres[members, axis], kind="stable")]
        half = len(members) // 2
        stack += [members[half:], members[:half]]
    return groups


def _section(vertices, primitives, materials, flat, shared_slot, shared_positions):
    """One section's vertices, quantisation, primitives and their boxes."""
    ids = np.unique(primitives)
    packed_ids = ids[shared_slot[ids] < 0]
    shared_ids = ids[shared_slot[ids] >= 0]
    local = np.concatenate([packed_ids, shared_ids])
    sorter = np.argsort(local)
    corners = sorter[np.searchsorted(local, primitives.ravel(), sorter=sorter)]

    points = vertices[packed_ids]
    base = (points.min(axis=0) if len(points) else np.zeros(3)).astype(np.float32)
    span = (points.max(axis=0) - base) if len(points) else np.zeros(3)
    scale = (span / PACKED_MAX).astype(np.float32)
    # a scale rounded down could leave the largest vertex one step beyond 2047: round it up
    short = base + scale.astype(np.float64) * PACKED_MAX < base + span
    scale = np.where(short, np.nextafter(scale, np.float32(np.inf)), scale)
    safe = np.where(scale > 0, scale, 1).astype(np.float64)
    steps = np.clip(np.round((points - base) / safe), 0, PACKED_MAX).astype(np.int64)
    steps[:, scale == 0] = 0
    packed_words = (steps[:, 0] | (steps[:, 1] << 11) | (steps[:, 2] << 22)).astype(np.uint32)
    positions = np.concatenate(
        [base + steps * scale.astype(np.float64), shared_positions[shared_slot[shared_ids]]]
    )

    primitives = corners.reshape(-1, 4)
    corner_positions = positions[primitives]
    return {
        "aabb": _outward(positions.min(axis=0), positions.max(axis=0)).astype(np.float32),
        "base": base,
        "scale": scale,
        "packed": packed_words,
        "shared": shared_slot[shared_ids],
        "primitives": primitives,
        "materials": materials,
        "flat": flat,
        "boxes": np.stack([corner_positions.min(axis=1), corner_positions.max(axis=1)], axis=1),
    }


def _primitive_trees(built):
    """Every section's primitive tree, built together; primitives and runs put in tree order."""
    counts = np.array([len(part["primitives"]) for part in built])
    boxes = np.concatenate([part["boxes"] for part in built])
    aabbs = np.array([part["aabb"] for part in built])
    nodes, order = build_trees(boxes, np.cumsum(counts) - counts, aabbs, data_bytes=1)
    node_start = np.cumsum(2 * counts - 1) - (2 * counts - 1)
    leaf_start = np.cumsum(counts) - counts
    for part, nodes_at, leaves_at, count in zip(built, node_start, leaf_start, counts):
        part["nodes"] = nodes[nodes_at : nodes_at + 2 * count - 1]
        local = order[leaves_at : leaves_at + count] - leaves_at
        part["primitives"] = part["primitives"][local].astype(np.uint8)
        part["flat"] = part["flat"][local]
        part["runs"] = _runs(part["materials"][local])


def _runs(values):
    """Data runs (value, first, count) over consecutive primitives of equal value."""
    starts = np.flatnonzero(np.diff(values, prepend=-1))
    runs = np.zeros(len(starts), DATA_RUN)
    runs["value"] = values[starts]
    runs["first"] = starts
    runs["count"] = np.diff(np.append(starts, len(values)))
    return runs


def _leaf_nodes(nodes):
    """The node index of each leaf of a section tree, by section."""
    leaf = (nodes[:, 3] & 0x80) == 0
    values = (nodes[:, 3].astype(np.int64) & 0x7F) << 8 | nodes[:, 4]
    where = np.zeros(int(leaf.sum()), np.int64)
    where[values[leaf]] = np.flatnonzero(leaf)
    return where


def _store(data, built, leaf_nodes):
    """Fill the data's arrays and sections from the built sections, in section order."""
    first_packed = first_shared = first_primitive = first_run = 0
    sections, keys, max_key = [], 0, 0
    for index, part in enumerate(built):
        section = Section()
        section.nodes = part["nodes"]
        section.aabb = np.zeros((2, 4), np.float32)
        section.aabb[:, :3] = part["aabb"]
        section.base = tuple(float(x) for x in part["base"])
        section.scale = tuple(float(x) for x in part["scale"])
        packed, shared = len(part["packed"]), len(part["shared"])
        count, runs = len(part["primitives"]), len(part["runs"])
        section.first_packed = first_packed
        section.shared = (first_shared << 8) | packed
        section.primitives = (first_primitive << 8) | count
        section.data_runs = (first_run << 8) | runs
        section.num_packed, section.num_shared = packed, shared
        section.leaf_index = int(leaf_nodes[index])
        first_packed += packed
        first_shared += shared
        first_primitive += count
        first_run += runs
        quad = part["primitives"][:, 2] != part["primitives"][:, 3]
        keys += count + int(quad.sum())
        max_key = max(max_key, (index << 8) | ((count - 1) << 1) | int(quad[-1]))
        sections.append(section)
    data.sections = sections
    data.packed_vertices = np.concatenate([part["packed"] for part in built]).astype(np.uint32)
    data.shared_indices = np.concatenate([part["shared"] for part in built]).astype(np.uint16)
    data.primitives = np.concatenate([part["primitives"] for part in built])
    data.data_runs = np.concatenate([part["runs"] for part in built])
    data.num_primitive_keys = keys
    data.max_key_value = max_key
    data.bits_per_key = (data.max_key_value + 1).bit_length()


def _empty_simd_tree():
    """The two empty SIMD tree nodes (inverted boxes, no data) every game file holds."""
    nodes = np.zeros(2, SIMD_NODE)
    nodes["bounds"][:, 0::2] = FLOAT_MAX
    nodes["bounds"][:, 1::2] = -FLOAT_MAX
    return nodes
