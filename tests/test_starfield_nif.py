"""Starfield NIFs: every block of the corpus files typed and written back byte-identical;
BSGeometry's slots, SkinAttach, MaterialID and NiCamera checked against struct reads of the
bytes; inline geometry (flag 0x200, built here from a corpus file) both ways; LOD meshes found
in the NIF's Data folder, loose or in a Starfield archive, and errors naming the NIF, the shape,
the LOD and the mesh; the Havok tagfiles kept and reported; ``cli.py info`` on all of them."""

import json
import shutil
import struct
import subprocess
import sys

import numpy as np
import pytest
from archive_writer import write_ba2_gnrl
from nif_rewriter import RawNif
from raw_starfield import SF, geometry_slots, inline_geometry, read_mesh
from support import CORPUS, ROOT, corpus_files

from precombined_nif.core.errors import FormatError
from precombined_nif.core.havok.tagfile import describe, is_tagfile, read_tagfile
from precombined_nif.core.materials.mat import material_id
from precombined_nif.core.nif import NifFile, RawBlock
from precombined_nif.core.nif.blocks.bs_geometry import BSGeometry
from precombined_nif.core.nif.blocks.camera import NiCamera
from precombined_nif.core.nif.blocks.collision import bhkSystem
from precombined_nif.core.nif.blocks.extra_data import NiIntegerExtraData
from precombined_nif.core.nif.blocks.skin import BSSkinBoneData, BSSkinInstance, SkinAttach
from precombined_nif.core.starfield.lods import MeshSource, lod_mesh, lod_meshes
from precombined_nif.core.starfield.mesh import mesh_path

NIFS = corpus_files(f"{SF}/**/*.nif")
SHAPES = [path for path in NIFS if path.name != "skeleton.nif"]


def ids(path):
    return path.relative_to(CORPUS / SF).as_posix()


def test_corpus_holds_starfield_nifs(corpus):
    assert len(NIFS) == 4 and len(SHAPES) == 3


@pytest.mark.parametrize("path", NIFS, ids=ids)
def test_every_block_is_typed_and_writes_back(path):
    data = path.read_bytes()
    nif = NifFile.from_bytes(data, path)
    assert nif.header.game == "SF" and not nif.warnings
    assert not [block.type_name for block in nif.blocks if isinstance(block, RawBlock)]
    assert nif.to_bytes() == data


@pytest.mark.parametrize("path", SHAPES, ids=ids)
def test_geometry_slots_match_the_bytes_and_their_meshes(path):
    raw = RawNif.read(path)
    (index,) = raw.indices_of("BSGeometry")
    block, at = raw.blocks[index], raw.av_offsets(index)["end"]
    bounds = struct.unpack_from("<10f", block, at)
    skin, shader, alpha = struct.unpack_from("<3i", block, at + 40)
    slots = geometry_slots(raw, index)
    shape = NifFile.read(path).blocks[index]
    assert (*shape.bound_center, shape.bound_radius, *shape.bound_box) == pytest.approx(bounds)
    assert (shape.skin_instance, shape.shader_property, shape.alpha_property) == (skin, shader, alpha)
    assert [None if s is None else (s.triangle_count, s.num_vertices, s.flags, s.name) for s in shape.meshes] == slots
    assert not shape.internal and [n for n, _ in shape.lods] == [0]
    triangles, vertices, _, name = slots[0]
    mesh = read_mesh((CORPUS / SF / mesh_path(name).replace("\\", "/")).read_bytes())
    assert (len(mesh["triangles"]), len(mesh["positions"])) == (triangles, vertices)


@pytest.mark.parametrize("path", SHAPES, ids=ids)
def test_skin_names_its_bones_and_the_mesh_weights_them(path):
    nif = NifFile.read(path)
    (index, shape), = nif.blocks_of(BSGeometry)
    skin = nif.blocks[shape.skin_instance]
    (attach,) = [nif.blocks[i] for i in shape.extra_data if isinstance(nif.blocks[i], SkinAttach)]
    assert isinstance(skin, BSSkinInstance) and attach.name == "SkinBMP"
    assert len(attach.bones) == len(skin.bones) == len(nif.blocks[skin.data].bones) and all(attach.bones)
    assert isinstance(nif.blocks[skin.data], BSSkinBoneData)
    bones, weights = lod_mesh(nif, index, 0, MeshSource(path)).bone_weights
    assert bones[weights > 0].max() < len(attach.bones)


@pytest.mark.parametrize("path", SHAPES, ids=ids)
def test_material_id_is_the_crc_of_the_material_path(path):
    nif = NifFile.read(path)
    (_, shape), = nif.blocks_of(BSGeometry)
    (value,) = [nif.blocks[i].integer_data for i in shape.extra_data
                if isinstance(nif.blocks[i], NiIntegerExtraData) and nif.blocks[i].name == "MaterialID"]
    assert nif.blocks[shape.shader_property].name.lower().endswith(".mat")
    assert material_id(nif.blocks[shape.shader_property].name) == value


def test_skeleton_camera_matches_its_bytes(corpus):
    path = corpus / SF / "skeleton.nif"
    raw = RawNif.read(path)
    (index,) = raw.indices_of("NiCamera")
    fields = struct.unpack_from("<H6fB4ffiII", raw.blocks[index], raw.av_offsets(index)["end"])
    camera = NifFile.read(path).blocks[index]
    assert isinstance(camera, NiCamera)
    decoded = (camera.camera_flags, *camera.frustum, camera.orthographic, *camera.viewport, camera.lod_adjust,
               camera.scene, camera.num_screen_polygons, camera.num_screen_textures)
    assert decoded == pytest.approx(fields)


# -- inline geometry ---------------------------------------------------------------------------
def test_inline_geometry_reads_writes_and_converts_both_ways(corpus):
    """The body with its mesh inside (flag 0x200): the slot holds the .mesh's bytes and writes
    back byte for byte; naming the slot after those bytes and clearing the flag gives the corpus
    file again, as NifSkope's Convert to External Geometry would, and back."""
    data, mesh_bytes = inline_geometry(corpus)
    nif = NifFile.from_bytes(data)
    (index, shape), = nif.blocks_of(BSGeometry)
    slot = shape.meshes[0]
    assert shape.internal and slot.data.to_bytes() == mesh_bytes and nif.to_bytes() == data
    assert lod_mesh(nif, index, 0).to_bytes() == mesh_bytes
    shape.flags &= ~0x200
    assert slot.attach(slot.data.to_bytes()) == "8e80bdf6c020bc22765a\\9cfc9d401dba9c2dcfa1"
    assert nif.to_bytes() == (corpus / SF / "naked_f.nif").read_bytes()
    shape.flags |= 0x200
    with pytest.raises(FormatError, match="inline exactly when the block's flags have 0x200"):
        nif.to_bytes()
    slot.attach(mesh_bytes, inline=True)
    assert nif.to_bytes() == data


def test_damaged_inline_geometry_names_the_block(corpus):
    data, mesh_bytes = inline_geometry(corpus)
    at = data.index(mesh_bytes)
    damaged = bytearray(data)
    damaged[at + 4:at + 8] = struct.pack("<I", 0x7FFFFFFF)  # the triangle index count
    with pytest.raises(FormatError) as caught:
        NifFile.from_bytes(damaged, path="inline.nif")
    assert caught.value.block == 2 and "BSGeometry" in str(caught.value) and "triangle indices" in str(caught.value)


# -- finding the meshes ------------------------------------------------------------------------
@pytest.fixture
def data_folder(corpus, tmp_path):
    """A Data folder: the body's NIF under meshes/, its mesh under geometries/."""
    data = tmp_path / "Data"
    (data / "meshes" / "actors").mkdir(parents=True)
    shutil.copy(corpus / SF / "naked_f.nif", data / "meshes" / "actors" / "naked_f.nif")
    return data


def copy_mesh(corpus, data):
    name = "geometries/8e80bdf6c020bc22765a/9cfc9d401dba9c2dcfa1.mesh"
    (data / name).parent.mkdir(parents=True)
    shutil.copy(corpus / SF / name, data / name)
    return data / name


def test_mesh_found_in_the_nifs_data_folder(corpus, data_folder):
    copy_mesh(corpus, data_folder)
    path = data_folder / "meshes" / "actors" / "naked_f.nif"
    ((index, number, mesh),) = lod_meshes(NifFile.read(path), MeshSource(path))
    assert (index, number) == (2, 0) and len(mesh.positions) == 6616


def test_mesh_found_in_a_starfield_archive(corpus, data_folder):
    mesh = (corpus / SF / "geometries/8e80bdf6c020bc22765a/9cfc9d401dba9c2dcfa1.mesh").read_bytes()
    write_ba2_gnrl(data_folder / "Starfield - Meshes01.ba2", {"geometries/8e80bdf6c020bc22765a/9cfc9d401dba9c2dcfa1.mesh": mesh},
                   version=3, compression="lz4")
    path = data_folder / "meshes" / "actors" / "naked_f.nif"
    source = MeshSource(path)
    assert lod_mesh(NifFile.read(path), 2, 0, source).to_bytes() == mesh
    _, where = source.read("8e80bdf6c020bc22765a\\9cfc9d401dba9c2dcfa1")
    assert where.endswith("Starfield - Meshes01.ba2:geometries/8e80bdf6c020bc22765a/9cfc9d401dba9c2dcfa1.mesh")


def test_mesh_found_in_a_data_folder_given(corpus, tmp_path):
    nif_path = tmp_path / "loose" / "naked_f.nif"
    nif_path.parent.mkdir()
    shutil.copy(corpus / SF / "naked_f.nif", nif_path)
    mesh = lod_mesh(NifFile.read(nif_path), 2, 0, MeshSource(nif_path, [corpus / SF]))
    assert len(mesh.triangles) == 12132


def test_mesh_found_beside_the_nif_first_whatever_its_case(corpus, tmp_path):
    """nifly's TestNifFile_SF.nif names ``TestNifFile_SF``, lying beside it: found with no Data
    folder known (spelled in another case here), and before a Data folder's mesh of that name."""
    nifly = corpus / "nifly/tests/input/TestNifFile_SF.nif"
    path = tmp_path / "TestNifFile_SF.nif"
    shutil.copy(nifly, path)
    shutil.copy(nifly.with_suffix(".mesh"), tmp_path / "testniffile_sf.MESH")
    (tmp_path / "data" / "geometries").mkdir(parents=True)
    (tmp_path / "data" / "geometries" / "TestNifFile_SF.mesh").write_bytes(b"not this one")
    source = MeshSource(path, [tmp_path / "data"])
    ((index, number, mesh),) = lod_meshes(NifFile.read(path), source)
    stored = read_mesh(nifly.with_suffix(".mesh").read_bytes())
    assert (index, number) == (2, 0) and len(mesh.positions) == len(stored["positions"]) == 6616
    np.testing.assert_allclose(mesh.vertices, stored["positions"], atol=1e-6)
    assert mesh.path == str(tmp_path / "testniffile_sf.MESH") and source.found_beside == {mesh.path}
    with pytest.raises(FormatError, match=r"geometries\\other.mesh is in none of the Data folders .* nor beside the NIF"):
        source.read("other")


def test_missing_mesh_names_the_nif_and_the_mesh(data_folder):
    path = data_folder / "meshes" / "actors" / "naked_f.nif"
    ((_, _, error),) = lod_meshes(NifFile.read(path), MeshSource(path))
    text = str(error)
    assert isinstance(error, FormatError) and text.startswith(f"{path}, block 2 (BSGeometry): LOD 0")
    assert "geometries\\8e80bdf6c020bc22765a\\9cfc9d401dba9c2dcfa1.mesh is in none of the Data folders" in text
    assert str(data_folder) in text


def test_damaged_mesh_names_the_nif_the_lod_and_the_mesh_file(corpus, data_folder):
    target = copy_mesh(corpus, data_folder)
    target.write_bytes(target.read_bytes()[:5000])
    path = data_folder / "meshes" / "actors" / "naked_f.nif"
    with pytest.raises(FormatError) as caught:
        lod_mesh(NifFile.read(path), 2, 0, MeshSource(path))
    text = str(caught.value)
    assert text.startswith(f"{path}, block 2 (BSGeometry): LOD 0 (mesh 8e80bdf6c020bc22765a\\9cfc9d401dba9c2dcfa1): {target}")
    assert "offset 4 (0x4): triangle indices: count 36396 needs 72792 bytes but only 4992 remain" in text


def test_weights_past_the_skins_bones_name_the_nif(corpus, data_folder):
    copy_mesh(corpus, data_folder)
    path = data_folder / "meshes" / "actors" / "naked_f.nif"
    nif = NifFile.read(path)
    attach = next(block for block in nif.blocks if isinstance(block, SkinAttach))
    attach.bones = attach.bones[:20]
    with pytest.raises(FormatError, match=r"block 2 \(BSGeometry\): LOD 0 .*weighted to bone \d+ of a skin of 20 bones"):
        lod_mesh(nif, 2, 0, MeshSource(path))


# -- Havok tagfiles ----------------------------------------------------------------------------
def test_havok_tagfiles_are_kept_and_told(corpus):
    """The skeleton's ragdoll and physics systems are Havok 2019 tagfiles, not binary packfiles:
    recognised before the packfile reader, described, written back unchanged."""
    nif = NifFile.read(corpus / SF / "skeleton.nif")
    systems = {block.kind: block.packfile for _, block in nif.blocks_of(bhkSystem)}
    assert set(systems) == {"ragdoll", "physics"} and all(is_tagfile(data) for data in systems.values())
    ragdoll = read_tagfile(systems["ragdoll"])
    assert (ragdoll.sdk, ragdoll.types[0], ragdoll.sections) == ("20190200", "hknpRagdollData", ["SDKV", "DATA", "TYPE", "INDX"])
    assert read_tagfile(systems["physics"]).types[0] == "hknpPhysicsSystemData"
    assert describe(systems["ragdoll"][:-10]).startswith("a damaged Havok tagfile")


# -- the command line --------------------------------------------------------------------------
def run(*args):
    return subprocess.run([sys.executable, str(ROOT / "cli.py"), *map(str, args)], capture_output=True, text=True, timeout=120)


def test_info_on_starfield_files(corpus):
    info = json.loads(run("info", "--json", corpus / SF / "naked_f.nif").stdout)
    assert (info["game"], info["bs_version"]) == ("SF", 173)
    assert info["shapes"] == [{
        "block": 2, "type": "BSGeometry", "name": "Naked_F:0", "vertices": 6616, "triangles": 12132, "skinned": True,
        "internal": False, "lods": [{"lod": 0, "mesh": "8e80bdf6c020bc22765a\\9cfc9d401dba9c2dcfa1", "vertices": 6616, "triangles": 12132}],
        "material": "Materials\\Actors\\Human\\Naked_Body\\Female\\Naked_F_Body.mat",
    }]
    skeleton = run("info", corpus / SF / "skeleton.nif")
    assert skeleton.returncode == 0 and "(Starfield)" in skeleton.stdout
    assert "havok block 24 (ragdoll): a Havok tagfile (SDK 20190200, holding hknpRagdollData): kept" in skeleton.stdout
    mesh = json.loads(run("info", "--json", corpus / SF / "body_skinned.mesh").stdout)
    assert {k: mesh[k] for k in ("format", "version", "vertices", "triangles", "scale", "weights_per_vertex", "lod_triangles", "meshlets")} == {
        "format": "mesh", "version": 2, "vertices": 6616, "triangles": 12132, "scale": 2.0, "weights_per_vertex": 6,
        "lod_triangles": [1492, 1008], "meshlets": 177}
    assert mesh["name"] == "8e80bdf6c020bc22765a\\9cfc9d401dba9c2dcfa1"
    text = run("info", corpus / SF / "morphs/female_chargen_body_morph.dat").stdout
    assert "Starfield morphs for 6616 vertices (19290 rows): 'Overweight', 'Thin', 'Strong'" in text


def test_batch_info_and_roundtrip_of_the_starfield_folder(corpus, tmp_path):
    result = run("info", "--json", corpus / SF)
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert result.returncode == 0 and "7 file(s), 0 failed" in result.stderr
    assert sorted(line["format"] for line in lines) == ["mesh"] * 3 + ["nif"] * 4
    result = run("roundtrip", corpus / SF, tmp_path / "out")
    assert result.returncode == 0 and result.stdout.count("identical to") == 7


def test_broken_mesh_in_a_batch_fails_alone(corpus, tmp_path):
    shutil.copytree(corpus / SF / "geometries", tmp_path / "geometries")
    broken = tmp_path / "geometries" / "broken.mesh"
    broken.write_bytes((tmp_path / "geometries/8e80bdf6c020bc22765a/9cfc9d401dba9c2dcfa1.mesh").read_bytes()[:100])
    result = run("info", tmp_path)
    assert result.returncode == 2 and "3 file(s), 1 failed" in result.stderr
    assert f"error: {broken}, offset" in result.stderr and np.sum([line.startswith("error") for line in result.stderr.splitlines()]) == 1


def test_starfield_archive_on_the_command_line(corpus, tmp_path):
    """A version 3 archive of LZ4 blocks: listed, extracted, and its meshes summarised."""
    name = "geometries/022faa031bcfca93c813/0b3a78e1d720af51f83d.mesh"
    mesh = (corpus / SF / name).read_bytes()
    archive = tmp_path / "Starfield - Meshes01.ba2"
    write_ba2_gnrl(archive, {name: mesh, "meshes/naked_f.nif": (corpus / SF / "naked_f.nif").read_bytes()},
                   version=3, compression="lz4")
    listing = run("ls", archive)
    assert listing.returncode == 0 and f"{len(mesh):>10}  {name}" in listing.stdout
    assert run("extract", archive, "*.mesh", tmp_path / "out").returncode == 0
    assert (tmp_path / "out" / name).read_bytes() == mesh
    info = run("info", archive)
    assert info.returncode == 0 and "2 file(s), 0 failed" in info.stderr
    assert f"{archive}:{name}: Starfield mesh version 2, 15370 vertices, 29708 triangles" in info.stdout


@pytest.mark.parametrize("path", SHAPES, ids=ids)
def test_skinned_shapes_keep_their_bounds_unset(path):
    """The game's skinned shapes: sphere zero, box FLT_MAX; setting bounds keeps them so."""
    nif = NifFile.read(path)
    (index, shape), = nif.blocks_of(BSGeometry)
    shape.set_bounds(lod_mesh(nif, index, 0, MeshSource(path)).vertices)
    assert nif.to_bytes() == path.read_bytes()


def test_static_shape_bounds_hold_its_vertices():
    shape = BSGeometry()
    vertices = np.array([[0.0, 0.0, 0.0], [2.0, 1.0, 0.0], [1.0, -1.0, 4.0]])
    shape.set_bounds(vertices)
    assert shape.bound_box == (1.0, 0.0, 2.0, 1.0, 1.0, 2.0)
    assert shape.bound_center == (1.0, 0.0, 2.0) and shape.bound_radius == pytest.approx(np.sqrt(6))
