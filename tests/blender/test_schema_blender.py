"""The .blend format: an import stamps what it makes with the schema's version; a .blend saved
with the previous release's keys (no stamp, none of the keys added since, and the key it wrote for
nothing) still exports, byte for byte; data stamped by a newer version is refused rather than
misread."""

import json
import subprocess

import numpy as np
import pytest
from release_keys import PREVIOUS_RELEASE
from scene import export_cell, export_file, imported

FO4 = "pynifly/tests/tests/FO4"
NIFS = [
    f"{FO4}/44BullBarrel.nif",  # collision: a compound of polytopes
    f"{FO4}/Meshes/Props/CrateDeathclaw01.nif",  # collision: a compressed mesh, face materials
    f"{FO4}/Shotgun/CombatShotgun.nif",  # connect points
    f"{FO4}/FederalistChairOffice01.nif",  # furniture markers
    f"{FO4}/CigaretteMachine.nif",  # animations
    "nifly/tests/input/TestNifFile_Skinned_FO4.nif",  # skin
    "pynifly/tests/tests/FONV/outfitf_simple.nif",  # dismember skin, body parts
    "pynifly/tests/tests/FONV/9mmscp.nif",  # FO3/FNV collision
]
CELL = "ck-precombined/Meshes/PreCombined/00001E58_1200ADBE_OC.NIF"
CSG = "ck-precombined/AlootHomePlate - Geometry.csg"
PLUGIN = "ck-precombined/AlootHomePlate.esp"
BSM2 = "bsm2/Rabbit.bsm2"
SKELETON_HKX = f"{FO4}/Animations/skeleton.hkx"
ANIMATION_HKX = f"{FO4}/Animations/PoseA_Idle1.hkx"
STAMP = "nif_schema_version"  # the version stamp, which the previous release did not write
# The prefixes of the attribute names the add-on gives (Blender's own: position, UVMap, Color...).
PREFIXES = ("nif_", "havok_", "precombine", "reference_", "base_", "hkx_", "bsm2_", "bgsm_")

# Run by the bpy wheel's Python: open the .blend, list every custom property key of the add-on's
# datablocks and every add-on attribute, take out the keys and attributes the previous release did
# not write (the stamp, the new keys: argv[3], JSON), give the cells the key the previous release
# wrote, save as a second .blend.
TO_PREVIOUS_RELEASE = f"""
import json, sys, bpy
bpy.ops.wm.open_mainfile(filepath=sys.argv[1])
new = set(json.loads(sys.argv[3]))
holders = [*bpy.data.collections, *bpy.data.objects, *bpy.data.meshes, *bpy.data.materials, *bpy.data.actions,
           *bpy.data.armatures, *(b for a in bpy.data.armatures for b in a.bones),
           *(n for m in bpy.data.materials if m.node_tree for n in m.node_tree.nodes)]
keys, stamped = set(), 0
for holder in holders:
    keys.update(holder.keys())
    stamped += {STAMP!r} in holder
    for key in new.intersection(holder.keys()):
        del holder[key]
attributes = {{a.name for m in bpy.data.meshes for a in m.attributes if a.name.startswith({PREFIXES!r})}}
for mesh in bpy.data.meshes:
    for name in new.intersection(a.name for a in mesh.attributes):
        mesh.attributes.remove(mesh.attributes[name])
for collection in bpy.data.collections:
    if any("precombined_object" in o for o in collection.objects):
        collection["precombined_layout"] = "external"
bpy.ops.wm.save_as_mainfile(filepath=sys.argv[2])
print(json.dumps({{"keys": sorted(keys), "attributes": sorted(attributes), "stamped": stamped}}))
"""


def run_bpy(script, *args):
    import extension

    result = subprocess.run([str(extension.python(extension.VENVS["4.5"])), "-c", script, *map(str, args)],
                            capture_output=True, text=True, timeout=180)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_a_blend_of_the_previous_release_still_exports(tmp_path, corpus):
    """Imported with this release, the .blend is made into one the previous release saved; the
    command line exports every file of it as the file it came from, and the .bsm2 and .hkx as
    this release's .blend does (the .hkx's root motion, which this release keeps as read and the
    previous one's .blend holds only as keys, within a float32 step of the file's)."""
    from extension import blender_cli

    from precombined_nif.io import schema

    # what this release writes and the previous one did not: the stamp, the keys added since
    new = {key for name, key in vars(schema).items() if name.isupper() and isinstance(key, str)} - PREVIOUS_RELEASE
    current, previous = tmp_path / "current.blend", tmp_path / "previous.blend"
    sources = [corpus / name for name in NIFS + [CELL]]
    result = blender_cli("import", *sources, corpus / BSM2, corpus / SKELETON_HKX, corpus / ANIMATION_HKX,
                         "--csg", corpus / CSG, "--plugin", corpus / PLUGIN, "--blend", current)
    assert result.returncode == 0, result.stderr
    found = run_bpy(TO_PREVIOUS_RELEASE, current, previous, json.dumps(sorted(new)))
    # every file's top datablock was stamped (the NIF collections, the .bsm2 objects, the armature, the action)
    assert found["stamped"] == len(sources) + 2 + 2
    assert STAMP in new and set(found["keys"]) <= PREVIOUS_RELEASE | new
    assert set(found["attributes"]) <= PREVIOUS_RELEASE | new
    assert len(found["keys"]) > 60  # most of the format is in this .blend

    result = blender_cli("export", previous, tmp_path / "out", "--each")
    written = {path.stem.lower(): path for path in (tmp_path / "out").iterdir()}
    for source in sources:
        assert source.stem.lower() in written, result.stderr
        assert written[source.stem.lower()].read_bytes() == source.read_bytes(), source
    for name, option in (("Rabbit.bsm2", "Rabbit"), ("pose.hkx", "Root")):
        exported = [tmp_path / f"{blend.stem} {name}" for blend in (current, previous)]
        for blend, path in zip((current, previous), exported):
            result = blender_cli("export", blend, path, "--object", option)
            assert result.returncode == 0, result.stderr
        if name.endswith(".hkx"):
            assert_same_animation(*exported)
        else:
            assert exported[0].read_bytes() == exported[1].read_bytes()


def assert_same_animation(first, second):
    from precombined_nif.core.havok.animation import read_hkx

    (one,), (other,) = read_hkx(first).animations, read_hkx(second).animations
    for field in ("translation", "rotation", "scale", "floats", "track_bones"):
        assert np.array_equal(getattr(one, field), getattr(other, field)), field
    assert one.root_motion.samples.shape == other.root_motion.samples.shape
    np.testing.assert_allclose(other.root_motion.samples, one.root_motion.samples, rtol=1e-6, atol=1e-5)
    assert other.root_motion.duration == pytest.approx(one.root_motion.duration, rel=1e-6)


def test_an_import_is_stamped(clean_scene, corpus):
    from precombined_nif.io import schema

    collection = imported(corpus / NIFS[0])
    assert collection[STAMP] == schema.VERSION


def stamped_newer(datablock):
    from precombined_nif.io import schema

    datablock[STAMP] = schema.VERSION + 1


def test_a_newer_versions_nif_is_refused(clean_scene, corpus, tmp_path):
    import bpy

    collection = imported(corpus / NIFS[0])
    stamped_newer(collection)
    with pytest.raises(RuntimeError, match="imported by a newer version of the extension"):
        export_file(collection, tmp_path / "out.nif")
    assert not (tmp_path / "out.nif").exists()
    assert bpy.context.scene is not None


def test_a_newer_versions_cell_is_refused(clean_scene, corpus, tmp_path):
    import bpy

    from precombined_nif.io.file_import import import_cells

    (collection,), _ = import_cells(bpy.context, [str(corpus / CELL)], geometry_path=str(corpus / CSG))
    stamped_newer(collection)
    with pytest.raises(RuntimeError, match="imported by a newer version of the extension"):
        export_cell(collection, tmp_path / "out.nif")
    assert not (tmp_path / "out.nif").exists()


def test_newer_bsm2_and_hkx_imports_are_refused(clean_scene, corpus, tmp_path):
    import bpy

    from precombined_nif.core.errors import FormatError
    from precombined_nif.io.bsm2.exporter import export_file as export_bsm2
    from precombined_nif.io.file_import import import_bsm2
    from precombined_nif.io.havok.animation.action_export import export_animation
    from precombined_nif.io.havok.animation.importer import import_animations

    armature, _ = import_bsm2(bpy.context, str(corpus / BSM2))
    stamped_newer(armature)
    with pytest.raises(FormatError, match="imported by a newer version"):
        export_bsm2(bpy.context, tmp_path / "out.bsm2")  # the mesh the import made active, deformed by the armature
    armatures, _ = import_animations(bpy.context, [str(corpus / SKELETON_HKX), str(corpus / ANIMATION_HKX)])
    armature = armatures[-1]
    stamped_newer(armature.animation_data.action)
    with pytest.raises(FormatError, match="imported by a newer version"):
        export_animation(bpy.context, tmp_path / "out.hkx", armature)
