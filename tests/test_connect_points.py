"""Connect points, furniture markers, BSBound and BSInvMarker blocks: decoded values checked
against a reading of the file bytes made here with struct, the quaternion convention checked
against the skeleton (its armour points sit level in the world), layouts not in the corpus built
here byte by byte, damaged blocks refused with the file named."""

import struct

import numpy as np
import pytest
from raw_extra_data import CHAIR, SHOTGUN, SKELETON, block_bytes, points_in_bytes, quaternion_matrix, with_extra_block

from precombined_nif.core.errors import FormatError
from precombined_nif.core.nif import NifFile
from precombined_nif.core.nif.blocks.connect_points import BSConnectPointChildren, BSConnectPointParents
from precombined_nif.core.nif.blocks.markers import BSFurnitureMarker, BSInvMarker
from precombined_nif.core.nif.scene_graph import world_matrix


def test_shotgun_connect_points_match_the_bytes(corpus):
    path = corpus / SHOTGUN
    data = path.read_bytes()
    expected = points_in_bytes(data, "WeaponMagazine")
    assert set(expected) == {"P-Mag", "P-Grip", "P-Barrel", "P-Casing", "P-Scope"}
    nif = NifFile.read(path)
    (block,) = [b for b in nif.blocks if isinstance(b, BSConnectPointParents)]
    for point in block.points:
        parent, rotation, translation, scale = expected[point.name]
        assert (point.parent, point.rotation, point.translation, point.scale) == (parent, rotation, translation, scale)
    (children,) = [b for b in nif.blocks if isinstance(b, BSConnectPointChildren)]
    assert children.point_names == ["C-Receiver", "C-Reciever"] and children.skinned == 0
    assert nif.to_bytes() == data


def test_connect_point_rotation_is_a_wxyz_quaternion_in_the_parent_node(corpus):
    """Armour snaps onto the skeleton's P-Armor* points unrotated: composed with its bone's world
    rotation, each point's rotation is the identity; read as (w, x, y, z) applied as stored it
    is, transposed it is not. Translations are game units (the helmet point at head height)."""
    path = corpus / SKELETON
    data = path.read_bytes()
    points = points_in_bytes(data, "LLeg_Thigh")
    nif = NifFile.read(path)
    nodes = {block.name: index for index, block in enumerate(nif.blocks) if hasattr(block, "children")}
    heights = {}
    for name, (parent, rotation, translation, _) in points.items():
        world = world_matrix(nif, nodes[parent])
        local = quaternion_matrix(*rotation)
        assert np.abs(world[:3, :3] @ local - np.eye(3)).max() < 1e-4, name
        assert np.abs(world[:3, :3] @ local.T - np.eye(3)).max() > 0.9, name
        heights[name] = (world[:3, :3] @ translation + world[:3, 3])[2]
    assert 125 < heights["P-ArmorHelmet"] < 145  # about 1.9 m at 70 units a metre
    assert heights["P-ArmorLleg"] < heights["P-ArmorTorso"] < heights["P-ArmorHelmet"]


def test_chair_furniture_positions_match_the_bytes(corpus):
    path = corpus / CHAIR
    data = path.read_bytes()
    nif = NifFile.read(path)
    (index,) = [i for i, b in enumerate(nif.blocks) if isinstance(b, BSFurnitureMarker)]
    raw = block_bytes(data, nif, index)
    (count,) = struct.unpack_from("<I", raw, 4)  # after the name's string index
    assert count == 4 and len(raw) == 8 + 20 * count
    block = nif.blocks[index]
    assert block.type_name == "BSFurnitureMarkerNode"
    for number, position in enumerate(block.positions):
        x, y, z, heading, kind, entry = struct.unpack_from("<4f2H", raw, 8 + 20 * number)
        assert position.offset == (x, y, z) and position.heading == heading
        assert (position.animation_type, position.entry_points) == (kind, entry)
    assert nif.to_bytes() == data


def test_fo3_furniture_layout(corpus):
    payload = struct.pack("<I3fHBB3fHBB", 2, 1.5, -2.0, 30.0, 3, 7, 7, 0.0, 4.0, 8.0, 1, 2, 2)
    nif, index = with_extra_block(corpus, "BSFurnitureMarker", payload, "pynifly/tests/tests/FONV/9mmscp.nif")
    block = nif.blocks[index]
    assert isinstance(block, BSFurnitureMarker) and block.trailing == b""
    first, second = block.positions
    assert (first.offset, first.orientation, first.position_ref_1, first.position_ref_2) == ((1.5, -2.0, 30.0), 3, 7, 7)
    assert (second.offset, second.orientation, second.position_ref_2) == ((0.0, 4.0, 8.0), 1, 2)


def test_inventory_marker_layout(corpus):
    payload = struct.pack("<3Hf", 4712, 959, 0, 1.25)
    nif, index = with_extra_block(corpus, "BSInvMarker", payload)
    block = nif.blocks[index]
    assert isinstance(block, BSInvMarker) and block.trailing == b""
    assert (block.rotation_x, block.rotation_y, block.rotation_z, block.zoom) == (4712, 959, 0, 1.25)


@pytest.mark.parametrize("cut", [1, 9, 30])
def test_truncated_connect_points_are_refused_naming_the_file(corpus, tmp_path, cut):
    path = corpus / SHOTGUN
    data = bytearray(path.read_bytes())
    nif = NifFile.read(path)
    (index,) = [i for i, b in enumerate(nif.blocks) if isinstance(b, BSConnectPointParents)]
    # the count claims more points than the block holds
    raw = block_bytes(bytes(data), nif, index)
    start = bytes(data).index(raw)
    struct.pack_into("<I", data, start + 4, 5 + cut)
    damaged = tmp_path / "damaged.nif"
    damaged.write_bytes(bytes(data))
    with pytest.raises(FormatError) as caught:
        NifFile.read(damaged)
    assert str(damaged) in str(caught.value) and caught.value.block == index


def test_info_lists_the_connect_points(corpus):
    from precombined_nif.commands.info import file_info, render_text

    path = corpus / SHOTGUN
    info = file_info(path)
    expected = points_in_bytes(path.read_bytes(), "WeaponMagazine")
    assert {p["name"]: (p["parent"], tuple(p["rotation"]), tuple(p["translation"]), p["scale"]) for p in info["connect_points"]} == expected
    assert "connect points: P-Mag on WeaponMagazine, P-Grip on CombatShotgunReceiver" in render_text(path, info)
