"""What the corpus lacks but users' files hold, built from corpus files with tests/nif_rewriter
(apart from the product's reader and writer): a Fallout 76 file, a billboard node, shapes
without vertex data, every node type nif.xml derives from NiNode for 20.2.0.7. Each imports as
what it is and, untouched, exports byte-identical."""

import math
import struct

import numpy as np
import pytest

from nif_rewriter import FO76_MATERIAL as MATERIAL, STATIC, RawNif, fo76_file
from raw_nodes import SHAPE_TYPES, read_nodes, world_matrices
from scene import export_bytes, imported

FNV_WEAPON = "pynifly/tests/tests/FONV/9mmscp.nif"


def test_fallout_76_file_imports_and_writes_back(clean_scene, corpus, tmp_path):
    path = fo76_file(corpus, tmp_path)
    collection = imported(path)
    meshes = [obj for obj in collection.all_objects if obj.type == "MESH"]
    assert len(meshes) == 2
    for obj in meshes:
        shader = obj.active_material["nif_record"]["shader"]
        assert shader["type"] == "BSLightingShaderProperty" and shader["name"] == MATERIAL
    assert export_bytes(collection, tmp_path / "out.nif") == path.read_bytes()


def emptied_shape_file(corpus, tmp_path):
    """The FO4 golden with its first BSTriShape's vertex data taken out (counts and data size 0),
    as particle emitters' shapes are: (path, shape index)."""
    nif = RawNif.read(corpus / STATIC)
    index = nif.indices_of("BSTriShape")[0]
    block = nif.blocks[index]
    at = nif.av_offsets(index)["end"] + 16 + 12 + 8  # bounds, three refs, vertex description
    nif.blocks[index] = block[:at] + struct.pack("<IHI", 0, 0, 0)
    path = tmp_path / "EmptyShape.nif"
    path.write_bytes(nif.to_bytes())
    return path, index


def test_shape_without_vertices_is_an_object_and_writes_back(clean_scene, corpus, tmp_path):
    from mathutils import Matrix

    path, index = emptied_shape_file(corpus, tmp_path)
    collection = imported(path)
    obj = next(o for o in collection.all_objects if o.get("nif_block") == index)
    assert obj.type == "EMPTY"
    np.testing.assert_allclose(np.array(obj.matrix_world), world_matrices(*read_nodes(path))[index], atol=1e-5)
    assert export_bytes(collection, tmp_path / "out.nif") == path.read_bytes()
    obj.matrix_basis = Matrix.Translation((0.0, 0.0, 25.0)) @ obj.matrix_basis  # the user moves it
    moved = export_bytes(collection, tmp_path / "moved.nif")
    nodes, roots = read_nodes(tmp_path / "moved.nif")
    assert len(nodes) == len(read_nodes(path)[0])  # still the shape block, no new node
    np.testing.assert_allclose(world_matrices(nodes, roots)[index][2, 3], world_matrices(*read_nodes(path))[index][2, 3] + 25.0, atol=1e-4)
    assert len(moved) == len(path.read_bytes())


def billboard_file(corpus, tmp_path):
    """The FO4 golden with the node holding its first shape turned into a NiBillboardNode (rotate
    about up): (path, node index, shape index)."""
    nif = RawNif.read(corpus / STATIC)
    shape = nif.indices_of("BSTriShape")[0]
    node = next(i for i in nif.indices_of("NiNode") if shape in nif.node_children(i))
    nif.set_type(node, "NiBillboardNode")
    nif.blocks[node] += struct.pack("<H", 1)
    path = tmp_path / "Billboard.nif"
    path.write_bytes(nif.to_bytes())
    return path, node, shape


def test_billboard_node_and_its_shapes_are_imported_and_written_back(clean_scene, corpus, tmp_path):
    path, node, shape = billboard_file(corpus, tmp_path)
    collection = imported(path)
    by_block = {o["nif_block"]: o for o in collection.all_objects if "nif_block" in o}
    assert by_block[node].type == "EMPTY" and by_block[node]["nif_type"] == "NiBillboardNode"
    assert by_block[shape].type == "MESH" and by_block[shape].parent == by_block[node]
    worlds = world_matrices(*read_nodes(path))
    for index, obj in by_block.items():
        np.testing.assert_allclose(np.array(obj.matrix_world), worlds[index], atol=1e-5)
    assert export_bytes(collection, tmp_path / "out.nif") == path.read_bytes()


# -- every node type: what each adds after NiNode's fields (nif.xml), as bytes ------------------
# A callable gets (nif, node, children) and may add the blocks the fields point at.


def _lod_fields(nif, node, children):
    """Switch flags, shown child, and a NiRangeLODData with a (near, far) range per child."""
    levels = [(500.0 * i, 500.0 * (i + 1)) for i in range(len(children))]
    data = nif.add_block(
        "NiRangeLODData", struct.pack("<3fI", 1.0, 2.0, 3.0, len(levels)) + b"".join(struct.pack("<2f", *r) for r in levels)
    )
    return struct.pack("<HIi", 3, 0, data)


def _multi_bound_fields(nif, node, children):
    """A BSMultiBound holding a BSMultiBoundOBB, and the culling mode (Skyrim and later)."""
    box = nif.add_block("BSMultiBoundOBB", struct.pack("<15f", 1.0, 2.0, 3.0, 40.0, 50.0, 60.0, 1, 0, 0, 0, 1, 0, 0, 0, 1))
    bound = nif.add_block("BSMultiBound", struct.pack("<i", box))
    return struct.pack("<i", bound) + (struct.pack("<I", 1) if nif.bs_version >= 83 else b"")


def _distant_fields(nif, node, children):
    """BSMultiBoundNode's, one instance (resource id, one unknown record, one 4x4 transform) and
    three shader texture arrays (two names in one array; none; one empty array)."""

    def names(*texts):
        return struct.pack("<I", len(texts)) + b"".join(struct.pack("<I", len(t)) + t for t in texts)

    instance = struct.pack("<I4sI", 0x1234, b"nif\0", 0x5678) + struct.pack("<IQI", 1, 7, 8)
    instance += struct.pack("<I16f", 1, *np.eye(4).ravel())
    arrays = struct.pack("<BI", 1, 1) + names(b"a_d.dds", b"b_d.dds") + struct.pack("<BI", 1, 0) + struct.pack("<BI", 0, 1) + names()
    return _multi_bound_fields(nif, node, children) + struct.pack("<I", 1) + instance + arrays


def _room_fields(nif, node, children):
    """One wall plane, no portals, its children as fixtures (pointers)."""
    return struct.pack("<I4fII", 1, 0.0, 0.0, 1.0, -100.0, 0, 0) + struct.pack(f"<I{len(children)}i", len(children), *children)


NODE_FIELDS = {
    "BSFadeNode": b"", "BSLeafAnimNode": b"", "RootCollisionNode": b"", "NiBone": b"", "CsNiNode": b"",
    "NiBSAnimationNode": b"", "NiBSParticleNode": b"",
    "BSValueNode": struct.pack("<IB", 7, 1),
    "BSOrderedNode": struct.pack("<4fB", 1.0, 2.0, 3.0, 40.0, 0),
    "BSMultiBoundNode": _multi_bound_fields,
    "BSRangeNode": struct.pack("<3B", 0, 2, 1), "BSBlastNode": struct.pack("<3B", 0, 2, 1),
    "BSDamageStage": struct.pack("<3B", 0, 2, 1), "BSDebrisNode": struct.pack("<3B", 0, 2, 1),
    "BSTreeNode": lambda nif, node, children: struct.pack("<IiI", 1, nif.roots()[0], 0),
    "NiBillboardNode": struct.pack("<H", 1),
    "NiSwitchNode": struct.pack("<HI", 3, 0),
    "NiLODNode": _lod_fields,
    "NiSortAdjustNode": struct.pack("<I", 0),
    "BSMasterParticleSystem": struct.pack("<HI", 20, 0),
    "NiRoomGroup": struct.pack("<iI", -1, 0),
    "NiRoom": _room_fields,
    "BSDistantObjectInstancedNode": _distant_fields,  # Fallout 76 only
}  # fmt: skip


def node_file(corpus, tmp_path, game, type_name, trailing=b""):
    """A file with a node below the root that holds shapes turned into ``type_name``: its fields
    appended (NODE_FIELDS, then ``trailing`` bytes no decoder knows), its transform a turn, a
    shift and a scale. FO3: an FNV weapon; FO4: the golden, whose shapes all hang from the root,
    so its first one moves under a childless node; FO76: that golden as Fallout 76 writes it.
    (path, node index, the node's shape indices)."""
    nif = RawNif.read(fo76_file(corpus, tmp_path) if game == "FO76" else corpus / (FNV_WEAPON if game == "FO3" else STATIC))
    root = nif.roots()[0]

    def shapes_of(index):
        return [c for c in nif.node_children(index) if c >= 0 and nif.type_of(c) in SHAPE_TYPES]

    node = next((i for i in nif.indices_of("NiNode") if i != root and shapes_of(i)), None)
    if node is None:
        shape = shapes_of(root)[0]
        node = next(i for i in nif.indices_of("NiNode") if i != root and not nif.node_children(i))
        nif.set_children(root, [c for c in nif.node_children(root) if c != shape])
        nif.set_children(node, [shape])
    children = nif.node_children(node)
    turn = math.radians(30.0)
    rows = ((math.cos(turn), -math.sin(turn), 0.0), (math.sin(turn), math.cos(turn), 0.0), (0.0, 0.0, 1.0))
    nif.set_transform(node, (12.0, -7.0, 3.5), rows, 1.25)
    nif.set_type(node, type_name)
    fields = NODE_FIELDS[type_name]
    nif.blocks[node] += (fields(nif, node, children) if callable(fields) else fields) + trailing
    path = tmp_path / f"{game}_{type_name}.nif"
    path.write_bytes(nif.to_bytes())
    return path, node, shapes_of(node)


NODE_CASES = (
    [("FO4", name) for name in NODE_FIELDS if name != "BSDistantObjectInstancedNode"]
    + [("FO3", name) for name in ("NiSwitchNode", "NiLODNode", "BSMultiBoundNode", "NiRoom")]
    + [("FO76", name) for name in ("BSDistantObjectInstancedNode", "BSMultiBoundNode", "NiLODNode")]
)


def _by_block(collection):
    return {o["nif_block"]: o for o in collection.all_objects if "nif_block" in o}


def _check_placed(collection, path, node, shapes):
    """The node an empty, its shapes meshes under it, every node and shape where the bytes put it."""
    by_block = _by_block(collection)
    assert by_block[node].type == "EMPTY"
    assert shapes and all(by_block[s].type == "MESH" and by_block[s].parent == by_block[node] for s in shapes)
    worlds = world_matrices(*read_nodes(path))
    assert {node, *shapes} <= set(worlds)
    for index, matrix in worlds.items():
        np.testing.assert_allclose(np.array(by_block[index].matrix_world), matrix, atol=1e-4)
    return by_block, worlds


@pytest.mark.parametrize("game, type_name", NODE_CASES, ids=[f"{g}-{t}" for g, t in NODE_CASES])
def test_node_type_is_an_object_over_its_shapes_and_writes_back(clean_scene, corpus, tmp_path, game, type_name):
    from mathutils import Matrix

    from precombined_nif.core.nif import NifFile, RawBlock

    path, node, shapes = node_file(corpus, tmp_path, game, type_name)
    read = NifFile.read(path)  # every field of the node and of what it points at decoded, none left over
    assert read.warnings == [] and not [b.type_name for b in read.blocks if isinstance(b, RawBlock)]
    collection = imported(path)
    by_block, worlds = _check_placed(collection, path, node, shapes)
    assert by_block[node]["nif_type"] == type_name
    assert export_bytes(collection, tmp_path / "out.nif") == path.read_bytes()

    by_block[node].matrix_world = Matrix.Translation((0.0, 0.0, 25.0)) @ by_block[node].matrix_world  # the user moves it
    moved_path = tmp_path / "moved.nif"
    moved = export_bytes(collection, moved_path)
    assert len(moved) == len(path.read_bytes()) and RawNif(moved).type_of(node) == type_name
    moved_worlds = world_matrices(*read_nodes(moved_path))
    for index in (node, *shapes):
        np.testing.assert_allclose(moved_worlds[index], _shifted(worlds[index]), atol=1e-4)
    _check_placed(imported(moved_path), moved_path, node, shapes)  # and it imports where it was moved to


def _shifted(matrix, z=25.0):
    out = np.array(matrix, np.float64)
    out[2, 3] += z
    return out


def test_node_bytes_past_its_known_fields_are_kept(clean_scene, corpus, tmp_path):
    """A node with bytes after the fields nif.xml gives it (a later revision of the format) still
    shows with its shapes, and both an untouched and a moved export keep the bytes as they were."""
    from mathutils import Matrix

    from precombined_nif.core.nif import NifFile

    unknown = bytes(range(1, 8))
    path, node, shapes = node_file(corpus, tmp_path, "FO4", "NiSwitchNode", trailing=unknown)
    assert NifFile.read(path).blocks[node].trailing == unknown
    collection = imported(path)
    by_block, _ = _check_placed(collection, path, node, shapes)
    assert export_bytes(collection, tmp_path / "out.nif") == path.read_bytes()
    by_block[node].matrix_world = Matrix.Translation((0.0, 0.0, 25.0)) @ by_block[node].matrix_world
    moved = RawNif(export_bytes(collection, tmp_path / "moved.nif"))
    assert moved.blocks[node].endswith(struct.pack("<HI", 3, 0) + unknown)
