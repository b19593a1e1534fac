"""Blocks decoded so that their references can be renumbered (controllers, interpolators, extra
data, constraints, phantoms, LOD and segmented shapes): every corpus block of these kinds is
decoded to its last byte and its values match the bytes read with struct here; every reference in
the corpus lands on a block of the kind nif.xml names; the triangle groups of LOD and segmented
shapes are ordered and tabled as documented."""

import struct

import numpy as np
import pytest
from nif_rewriter import RawNif
from raw_controllers import AnimatedFile
from raw_geometry import LOD_SOURCE, groups_of, landscape_lod_file, lod_sizes, segments
from support import corpus_files

from precombined_nif.core.nif import NifFile, RawBlock
from precombined_nif.core.nif.blocks.geometry import BSLODTriShape, BSSegmentedTriShape
from precombined_nif.core.nif.refs import block_refs
from precombined_nif.core.nif.triangle_groups import group_order, table_holds, triangle_groups

SKELETON = "pynifly/tests/tests/SkyrimSE/skeleton_vanilla.nif"  # constraints, a phantom, extra data controllers
NIFS = [path for path in corpus_files("**/*.nif") if path.name != "Corrupt.nif"]


def test_every_reference_in_the_corpus_lands_on_a_block(corpus):
    decoded = 0
    for path in NIFS:
        nif = NifFile.read(path)
        for index, block in enumerate(nif.blocks):
            if isinstance(block, RawBlock):
                continue
            refs = block_refs(nif.header, block)
            assert all(-1 <= ref < len(nif.blocks) for ref in refs), (path.name, index, block.type_name, refs)
            decoded += 1
    assert decoded > 10000


def blocks_of(raw, nif, type_name):
    return [(raw.blocks[i], nif.blocks[i]) for i in raw.indices_of(type_name)]


def test_constraints_hold_the_values_of_their_bytes(corpus):
    """bs 100: constraint info (count, entity A, entity B, priority), 8 Vector4 rows, the limits
    (ragdoll: cone, plane min / max, twist min / max, friction; hinge: min, max, friction), a
    motor type byte (0: none)."""
    raw, nif = RawNif.read(corpus / SKELETON), NifFile.read(corpus / SKELETON)
    for type_name, floats in (("bhkRagdollConstraint", 6), ("bhkLimitedHingeConstraint", 3)):
        pairs = blocks_of(raw, nif, type_name)
        assert pairs
        for data, block in pairs:
            count, a, b, priority = struct.unpack_from("<IiiI", data)
            assert (block.info.num_entities, block.info.entity_a, block.info.entity_b, block.info.priority) == (count, a, b, priority)
            assert {nif.blocks[a].type_name, nif.blocks[b].type_name} <= {"bhkRigidBody", "bhkRigidBodyT"}
            assert block.descriptor.rows == struct.unpack_from("<32f", data, 16)
            assert block.descriptor.limits == struct.unpack_from(f"<{floats}f", data, 144)
            assert block.descriptor.motor.motor_type == data[144 + 4 * floats] == 0 and len(data) == 145 + 4 * floats


def test_phantom_and_its_collision_object(corpus):
    raw, nif = RawNif.read(corpus / SKELETON), NifFile.read(corpus / SKELETON)
    ((data, collision),) = blocks_of(raw, nif, "bhkSPCollisionObject")
    target, flags, body = struct.unpack("<iHi", data)
    assert (collision.target, collision.flags, collision.body) == (target, flags, body)
    phantom = nif.blocks[body]
    assert phantom.type_name == "bhkSimpleShapePhantom" and nif.blocks[phantom.shape].type_name.startswith("bhk")
    phantom_bytes = raw.blocks[body]
    assert phantom.shape == struct.unpack_from("<i", phantom_bytes)[0]
    assert phantom.transform == struct.unpack_from("<16f", phantom_bytes, len(phantom_bytes) - 64)


def test_extra_data_and_their_controllers(corpus):
    raw, nif = RawNif.read(corpus / SKELETON), NifFile.read(corpus / SKELETON)
    strings = raw.strings
    for data, block in blocks_of(raw, nif, "BSBoneLODExtraData"):
        (count,) = struct.unpack_from("<I", data, 4)
        pairs = [struct.unpack_from("<Ii", data, 8 + 8 * i) for i in range(count)]
        assert [(lod.distance, lod.bone_name) for lod in block.bone_lods] == [(d, strings[n]) for d, n in pairs]
    names = {}
    for data, block in blocks_of(raw, nif, "NiFloatExtraData"):
        name, value = struct.unpack("<if", data)
        assert (block.name, block.float_data) == (strings[name], value)
        names[block.name] = value
    controllers = blocks_of(raw, nif, "NiFloatExtraDataController")
    assert controllers
    for data, block in controllers:
        interpolator, name = struct.unpack_from("<ii", data, 26)
        assert (block.interpolator, block.extra_data_name) == (interpolator, strings[name])
        assert block.extra_data_name in names and nif.blocks[block.interpolator].type_name == "NiFloatInterpolator"
    for raw, block_bytes, block in corpus_blocks("BSBehaviorGraphExtraData"):
        name, graph, controls = struct.unpack("<iiB", block_bytes)
        assert (block.name, block.behavior_graph_file, block.controls_base_skeleton) == (strings_of(raw, name), strings_of(raw, graph), controls)
        assert block.behavior_graph_file.lower().endswith(".hkx")


def strings_of(raw, index):
    return raw.strings[index] if index >= 0 else None


def corpus_blocks(type_name):
    """(RawNif, bytes, decoded block) of every corpus block of a type."""
    for path in NIFS:
        data = path.read_bytes()
        if type_name.encode() in data:
            raw, nif = RawNif(data), NifFile.from_bytes(data)
            for block_bytes, block in blocks_of(raw, nif, type_name):
                yield raw, block_bytes, block


def test_blend_interpolators_of_the_corpus_and_a_built_file(corpus):
    """Manager-controlled blend interpolators (flags bit 0) hold flags, array size, threshold and
    their value; the built file's other one its blend array of interpolators."""
    checked = 0
    for _, block_bytes, block in corpus_blocks("NiBlendFloatInterpolator"):
        flags, size, threshold = struct.unpack_from("<BBf", block_bytes)
        assert (block.flags, block.array_size, block.weight_threshold) == (flags, size, threshold)
        if flags & 1:
            assert block.value == struct.unpack_from("<f", block_bytes, 6)[0] and len(block_bytes) == 10
            checked += 1
    assert checked
    built = AnimatedFile(corpus)
    nif = NifFile.from_bytes(built.to_bytes())
    (blend,) = [b for b in nif.blocks if b.type_name == "NiBlendFloatInterpolator"]
    assert [item.interpolator for item in blend.items] == [nif.blocks.index(next(b for b in nif.blocks if b.type_name == "NiFloatInterpolator")), -1]
    assert blend.value == 0.5 and blend.high_weights_sum == 1.0


def test_lod_and_segmented_shapes_hold_their_tables(corpus):
    raw, nif = RawNif.read(corpus / LOD_SOURCE), NifFile.read(corpus / LOD_SOURCE)
    for index in raw.indices_of("BSLODTriShape"):
        block = nif.blocks[index]
        assert isinstance(block, BSLODTriShape) and block.lod_sizes == lod_sizes(raw, index)
        count = nif.blocks[block.data].triangle_count
        assert sum(block.lod_sizes) == count
        assert np.array_equal(triangle_groups(block, count), groups_of(lod_sizes(raw, index), count))
    data, shape, table = landscape_lod_file(corpus)
    nif = NifFile.from_bytes(data)
    block = nif.blocks[shape]
    assert isinstance(block, BSSegmentedTriShape) and np.array_equal(block.segments, segments(RawNif(data), shape))
    assert np.array_equal(triangle_groups(block, 128), groups_of(table, 128))


def test_group_order_groups_the_triangles_and_writes_the_table():
    lod = BSLODTriShape(lod_sizes=(2, 1, 0))
    groups = np.array([1, 0, 2, 0, 9, -1])  # 9 and -1 are no level: the first one holding triangles (0)
    order = group_order(lod, groups)
    assert order.tolist() == [1, 3, 4, 5, 0, 2] and lod.lod_sizes == (4, 1, 1)
    assert table_holds(lod, [0, 0, 0, 0, 1, 2]) and not table_holds(lod, [0, 0, 0, 0, 1])
    segmented = BSSegmentedTriShape(segments=np.array([(1, 0, 0), (0, 0, 2), (5, 6, 1)], BSSegmentedTriShape.segments.dtype))
    order = group_order(segmented, [2, 2, 1, 2])  # -> no triangle in segment 0, the first filled is 1
    assert order.tolist() == [2, 0, 1, 3]
    assert segmented.segments.tolist() == [(1, 0, 0), (0, 0, 1), (5, 3, 3)]


def test_a_table_leaving_out_only_triangles_kept_as_stored_holds():
    """A New Vegas LOD chunk's degenerate triangle lies in none of its empty segments: kept as
    stored (no face), the table still holds; a face in no segment needs one written."""
    empty = BSSegmentedTriShape(segments=np.zeros(3, BSSegmentedTriShape.segments.dtype))
    assert table_holds(empty, [-1], as_stored=[True])
    assert not table_holds(empty, [-1]) and not table_holds(empty, [-1], as_stored=[False])
    two = BSSegmentedTriShape(segments=np.array([(0, 0, 1), (0, 3, 1)], BSSegmentedTriShape.segments.dtype))
    assert table_holds(two, [0, 1, -1], as_stored=[False, False, True])
    assert not table_holds(two, [0, 0, -1], as_stored=[False, False, True])  # a face moved: written anew
    assert not table_holds(two, [0, -1, -1], as_stored=[True, True, True])  # the table covers triangle 1


@pytest.mark.parametrize("type_name", ["BSLODTriShape", "BSSegmentedTriShape"])
def test_grouped_shapes_round_trip(corpus, type_name):
    data = (corpus / LOD_SOURCE).read_bytes() if type_name == "BSLODTriShape" else landscape_lod_file(corpus)[0]
    nif = NifFile.from_bytes(data)
    assert nif.to_bytes() == data and not nif.warnings


def test_no_corpus_block_falls_back_to_its_bytes():
    for path in NIFS:
        nif = NifFile.read(path)
        assert not [w for w in nif.warnings if "kept as its bytes" in w], path.name


def test_bytes_that_do_not_fit_a_layout_proven_by_no_file_are_kept_as_they_are(corpus):
    """A BSAnimNote of type 1 with a gain and state after its arm (as some readers expect):
    more bytes than nif.xml's layout reads, so the block stays raw bytes, named in a warning;
    a blend interpolator whose blend array runs past its block likewise. The file still reads and
    writes back byte for byte."""
    built = AnimatedFile(corpus)
    raw = built.nif
    (note,) = raw.indices_of("BSAnimNote")
    raw.blocks[note] += struct.pack("<fI", 0.5, 1)
    (blend,) = raw.indices_of("NiBlendFloatInterpolator")
    raw.blocks[blend][1] = 9  # an array of 9 items of 17 bytes in a block holding 2
    data = raw.to_bytes()
    nif = NifFile.from_bytes(data)
    assert isinstance(nif.blocks[note], RawBlock) and isinstance(nif.blocks[blend], RawBlock)
    assert [w.split(")")[0] for w in nif.warnings] == [f"block {note} (BSAnimNote", f"block {blend} (NiBlendFloatInterpolator"]
    assert nif.to_bytes() == data
