"""Edited files whose other blocks the importer does not show (controller managers, sequences,
object palettes, blend interpolators, constraints, phantoms, extra data): the collision deleted or
edited, the export drops the blocks only the old collision used and renumbers every reference,
so no block is left unattached and every kept block still points where it did."""

from collections import Counter

import numpy as np
import pytest
from nif_rewriter import RawNif
from raw_controllers import COLLISION, AnimatedFile, refs_in
from scene import export_bytes, imported
from support import CORPUS, corpus_bytes, corpus_files

from precombined_nif.core.nif import NifFile
from precombined_nif.core.nif.block import RawBlock
from precombined_nif.core.nif.refs import reachable

FO4_LAST_STREAM = 139  # Starfield's collision is not shown (nothing to edit)


def controlled_collision_files():
    """Corpus NIFs whose block types (read from the header by tests/nif_rewriter) hold a
    controller and a collision object."""
    found = []
    for path in corpus_files("**/*.nif"):
        data = corpus_bytes(path)
        if not (b"CollisionObject" in data and (b"Controller" in data or b"Ctlr" in data)):
            continue
        raw = RawNif(data)
        types = set(raw.types)
        if raw.bs_version <= FO4_LAST_STREAM and any("CollisionObject" in t for t in types) and any(
            t.endswith(("Controller", "Ctlr")) for t in types
        ):
            found.append(path)
    return found


def havok(type_name):
    return type_name.startswith(("bhk", "hk"))


def edit_collision(collection, edit):
    """Delete the first collision body (its objects), or move one point of every collision mesh."""
    import bpy

    bodies = sorted((obj for obj in collection.all_objects if "nif_collision" in obj), key=lambda obj: obj.name)
    assert bodies, "the import shows no collision to edit"
    if edit == "deleted":
        for obj in [bodies[0], *bodies[0].children_recursive]:
            bpy.data.objects.remove(obj)
        return
    for body in bodies:
        for obj in [body, *body.children_recursive]:
            if obj.type == "MESH" and len(obj.data.vertices):
                obj.data.vertices[0].co.z += 0.5


def export_messages(collection, path):
    from precombined_nif.io.nif.exporter import export_nif

    _, messages = export_nif(path, list(collection.all_objects))
    return messages


def unattached(nif):
    return set(range(len(nif.blocks))) - reachable(nif)


@pytest.mark.slow
@pytest.mark.parametrize("edit", ["deleted", "edited"])
@pytest.mark.parametrize("path", controlled_collision_files(), ids=lambda p: p.relative_to(CORPUS).as_posix())
def test_collision_edits_in_files_with_controllers_leave_no_unattached_block(clean_scene, tmp_path, path, edit):
    source = NifFile.read(path)
    collection = imported(path)
    edit_collision(collection, edit)
    out = tmp_path / "out.nif"
    messages = export_messages(collection, out)
    assert not [m for m in messages if "unattached" in m]
    nif = NifFile.read(out)
    assert not [b.type_name for b in nif.blocks if isinstance(b, RawBlock)]  # every reference is known
    assert len(unattached(nif)) == len(unattached(source))  # only what the file itself left unattached
    before, after = (type_names(raw) for raw in (RawNif.read(path), RawNif(out.read_bytes())))
    assert Counter(t for t in before if not havok(t)) == Counter(t for t in after if not havok(t))  # only collision dropped
    if edit == "deleted":
        assert sum(map(havok, after)) < sum(map(havok, before))


def type_names(raw):
    return [raw.type_of(i) for i in range(len(raw.blocks))]


@pytest.fixture
def animated(corpus, tmp_path):
    built = AnimatedFile(corpus)
    path = tmp_path / "animated_22smg.nif"
    path.write_bytes(built.to_bytes())
    return built, path


def test_built_fallout_3_file_with_a_controller_manager_writes_back_untouched(clean_scene, animated, tmp_path):
    _, path = animated
    collection = imported(path)
    assert export_bytes(collection, tmp_path / "out.nif") == path.read_bytes()


def test_deleted_collision_in_a_fallout_3_file_with_a_controller_manager_is_dropped_and_the_rest_renumbered(
    clean_scene, animated, tmp_path
):
    built, path = animated
    collection = imported(path)
    edit_collision(collection, "deleted")
    out = tmp_path / "out.nif"
    assert not [m for m in export_messages(collection, out) if "unattached" in m]
    before, after = RawNif.read(path), RawNif(out.read_bytes())
    count = len(before.blocks)
    kept = [i for i in range(count) if i not in COLLISION]
    assert type_names(after) == [before.type_of(i) for i in kept]
    mapping = {old: new for new, old in enumerate(kept)}
    pairs = refs_in(out.read_bytes(), built.added, mapping)
    assert [expected for expected, _ in pairs] == [found for _, found in pairs]
    assert all(ref in mapping.values() for expected, _ in pairs for ref in expected if ref >= 0)
    for old, new in mapping.items():  # blocks holding no reference are kept byte for byte
        if before.type_of(old) in ("NiStringExtraData", "BSShaderTextureSet", "NiTriStripsData"):
            assert after.blocks[new] == before.blocks[old], (old, before.type_of(old))
        elif before.type_of(old) == "BSXFlags":  # but for the Havok bit (1): no collision is left
            flags = bytearray(before.blocks[old])
            flags[4] &= ~0x2
            assert after.blocks[new] == flags
    assert after.roots() == [0]
    (root_collision,) = np.frombuffer(after.blocks[0], "<i4", 1, after.av_offsets(0)["collision"])
    assert root_collision == -1
