"""Physics systems and shapes decoded from the corpus, checked against the known facts of
``../shared/corpus/README.md`` and FORMAT-NOTES section 8."""

import json
import subprocess
import sys

import numpy as np
from packfiles import nif_systems
from support import CORPUS, ROOT, corpus_bytes, corpus_files

from precombined_nif.core.havok import Packfile
from precombined_nif.core.havok.classes.physics_system import PhysicsSystemData, RagdollData
from precombined_nif.core.havok.shapes.compressed_mesh import CompressedMeshShape
from precombined_nif.core.havok.shapes.convex import CapsuleShape, ConvexPolytopeShape, SphereShape
from precombined_nif.commands.info import file_info
from precombined_nif.core.nif import NifFile
from precombined_nif.core.nif.blocks.collision import bhkNPCollisionObject

FO4 = CORPUS / "pynifly/tests/tests/FO4"


def havok_info(path):
    return file_info(path)["havok"]


def compressed_meshes():
    """(name, shape) of every compressed mesh in the corpus packfiles."""
    found = []
    sources = [(name, data) for name, (_, data) in nif_systems().items()]
    sources += [(path.name, corpus_bytes(path)) for path in corpus_files("havok/*.packfile*.bin")]
    for name, data in sources:
        for obj, _ in Packfile.from_bytes(data).objects():
            if isinstance(obj, CompressedMeshShape):
                found.append((name, obj))
    return found


def test_known_compressed_mesh_counts(corpus):
    crate = havok_info(FO4 / "Meshes/Props/CrateDeathclaw01.nif")
    assert [body["shape"]["sections"] for body in crate[0]["bodies"]] == [2]
    assert [body["shape"]["triangles"] for body in crate[0]["bodies"]] == [312]
    farm = havok_info(FO4 / "Meshes/Landscape/Plants/FarmPlot01Short.nif")
    assert [(b["shape"]["sections"], b["shape"]["triangles"]) for b in farm[0]["bodies"]] == [(3, 454)]
    beams = havok_info(FO4 / "Meshes/Architecture/DiamondCity/Stadium_Ext/DiamondCrossbeams01.nif")
    shapes = [body["shape"] for body in beams[0]["bodies"]]
    assert [shape["type"] for shape in shapes] == ["compressed_mesh", "compressed_mesh"]
    assert sorted(shape["triangles"] for shape in shapes) == [20, 84]


def test_info_json_from_the_command_line(corpus):
    result = subprocess.run(
        [sys.executable, str(ROOT / "cli.py"), "info", "--json", str(FO4 / "44BullBarrel.nif")],
        capture_output=True,
        text=True,
        check=True,
    )
    (system,) = json.loads(result.stdout)["havok"]
    assert system["kind"] == "physics" and system["constraints"] == 0
    (body,) = system["bodies"]
    assert body["motion"] == "dynamic" and body["layer"] == 5
    assert body["mass"] == 9.0 and body["friction"] == 0.5 and body["restitution"] == 0.4
    compound = body["shape"]
    assert compound["type"] == "compound"
    assert [child["type"] for child in compound["children"]] == ["convex", "convex"]
    assert all(child["vertices"] == 8 and child["triangles"] == 12 for child in compound["children"])


def test_every_system_summarises(corpus):
    types = set()
    for path in corpus_files("**/*.nif"):
        data = path.read_bytes()
        if b"bhkPhysicsSystem" not in data and b"bhkRagdollSystem" not in data:
            continue
        for system in havok_info(path):
            assert "error" not in system, (path, system)
            if "kept" in system:  # Starfield's tagfiles: test_starfield_nif.py
                continue
            for body in system["bodies"]:
                assert body["motion"] in ("static", "dynamic", "keyframed")
                assert 0 <= body["friction"] <= 2 and body["mass"] >= 0
                types.add(body["shape"]["type"])
    assert {"convex", "sphere", "capsule", "compressed_mesh", "compound"} <= types


def test_skeletons_point_at_ragdolls(corpus):
    """The bones' collision objects select bodies of the bhkRagdollSystem, one body each; only the
    CharacterBumper node has a bhkPhysicsSystem (a capsule)."""
    skeletons = corpus_files("pynifly/io_scene_nifly/skeletons/FO4/*.nif")
    assert skeletons
    for path in skeletons:
        nif = NifFile.read(path)
        objects = [obj for _, obj in nif.blocks_of(bhkNPCollisionObject)]
        bones = [obj for obj in objects if nif.blocks[obj.target].name != "CharacterBumper"]
        assert {nif.blocks[obj.data].type_name for obj in bones} == {"bhkRagdollSystem"}, path
        (system,) = {obj.data for obj in bones}
        ragdoll = Packfile.from_bytes(nif.blocks[system].packfile).root
        assert isinstance(ragdoll, RagdollData) and ragdoll.kind == "ragdoll"
        assert sorted(obj.body_id for obj in bones) == list(range(len(ragdoll.bodies))) == list(range(18))
        assert all(isinstance(body.shape, CapsuleShape) for body in ragdoll.bodies)
        assert len(ragdoll.constraints) == 17 and len(ragdoll.bone_to_body) == 18
        (bumper,) = [obj for obj in objects if obj not in bones]
        assert nif.blocks[bumper.data].type_name == "bhkPhysicsSystem"


def test_collision_objects_have_flags_128(corpus):
    count = 0
    for path in corpus_files("**/*.nif"):
        data = path.read_bytes()
        if b"bhkNPCollisionObject" not in data:
            continue
        for _, obj in NifFile.from_bytes(data, path).blocks_of(bhkNPCollisionObject):
            assert obj.flags == 128, path
            count += 1
    assert count >= 50


def test_compressed_meshes_fill_their_domain(corpus):
    """The domain is the union of the section boxes; the decoded triangles reach it on every
    side unless a section of non-triangle primitives (flags 1) holds the extreme."""
    meshes = compressed_meshes()
    assert len(meshes) >= 30
    for name, shape in meshes:
        data = shape.data
        domain = data.domain[:, :3].astype(np.float64)
        boxes = np.array([section.aabb[:, :3] for section in data.sections], np.float64)
        assert np.array_equal(boxes[:, 0].min(axis=0), domain[0]), name
        assert np.array_equal(boxes[:, 1].max(axis=0), domain[1]), name
        vertices, triangles = data.decode()[:2]
        if not len(triangles):
            continue
        used = vertices[np.unique(triangles)]
        tolerance = 1e-6 * np.ptp(domain, axis=0).max()
        assert (used >= domain[0] - tolerance).all() and (used <= domain[1] + tolerance).all(), name
        if not any(section.flags for section in data.sections):
            assert np.abs(used.min(axis=0) - domain[0]).max() <= tolerance, name
            assert np.abs(used.max(axis=0) - domain[1]).max() <= tolerance, name


def test_degenerate_primitives_are_skipped(corpus):
    shape = Packfile.read(CORPUS / "havok/CM0016B955.packfile1.bin").root.bodies[0].shape
    data = shape.data
    (section,) = data.sections
    assert section.flags == 1
    primitives = data.primitives
    assert len(primitives) == 4
    assert (primitives[:, 1] == primitives[:, 2]).all() and (primitives[:, 2] == primitives[:, 3]).all()
    assert (primitives[:, 0] != primitives[:, 1]).all()
    assert len(data.decode()[1]) == 0
    big = Packfile.read(CORPUS / "havok/CM0016B955.packfile0.bin").root.bodies[0].shape
    assert big.summary()["triangles"] == 756 and big.summary()["sections"] == 6
    ids = big.properties.find(0xF601).materials["material"]
    assert set(big.triangle_materials()) == set(ids) and len(ids) == 3


def test_material_and_body_fields(corpus):
    system = Packfile.from_bytes(nif_systems()["pynifly/tests/tests/FO4/44BullBarrel.nif#5"][1]).root
    assert isinstance(system, PhysicsSystemData)
    (body,) = system.bodies
    material = system.material_of(body)
    assert material.dynamic_friction == 0x3F00 and material.restitution == 0x3ECD
    motion = system.motion_of(body)
    assert abs(1 / motion["inverse_mass"] - 9.0) < 1e-5
    assert motion["inverse_inertia_local"][3] == 1.0
    assert system.motion_type(body) == "dynamic"


def test_sphere_and_convex_geometry(corpus):
    ball = Packfile.from_bytes(nif_systems()["havok/MetalAddAwnARoofEndCap02.nif#3"][1]).root.bodies[0].shape
    assert isinstance(ball, ConvexPolytopeShape)
    vertices, triangles = ball.mesh()
    assert vertices.shape == (8, 3) and triangles.shape == (12, 3)
    for name, (_, data) in nif_systems().items():
        for obj, _ in Packfile.from_bytes(data).objects():
            if isinstance(obj, SphereShape):
                assert obj.radius > 0 and (obj.vertices == obj.vertices[0]).all()
            elif type(obj) is ConvexPolytopeShape:
                vertices, triangles = obj.mesh()
                # faces are counter-clockwise seen from outside: normals point away from the centre
                corners = vertices[triangles]
                normals = np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0])
                outward = np.einsum("ij,ij->i", normals, corners.mean(axis=1) - vertices.mean(axis=0))
                assert (outward > -1e-9).all(), name
