"""A built cell's ``<cell>_Physics.nif`` (core/precombined/build/physics.py): corpus FO4 statics
with collision placed turned, rescaled and moved; every merged triangle where the source's own
decoded collision, placed by the matrix here, puts it; the file re-read and written back
identically; its structure against the Creation Kit's 00001E58_Physics.NIF; XPRI and previs
against the corpus cell's plugin and previs file."""

import struct

import numpy as np
import pytest
from support import CORPUS

from precombined_nif.core.havok import GAME_UNITS, Packfile
from precombined_nif.core.havok.shapes.compound import CompoundShape
from precombined_nif.core.havok.shapes.compressed_mesh import CompressedMeshShape
from precombined_nif.core.havok.shapes.convex import ConvexPolytopeShape
from precombined_nif.core.havok.shapes.static_tree import decode_tree
from precombined_nif.core.nif import NifFile
from precombined_nif.core.nif.blocks.collision import bhkNPCollisionObject
from precombined_nif.core.nif.scene_graph import world_matrix
from precombined_nif.core.plugin.records import Plugin
from precombined_nif.core.plugin.references import combined_references, rotation_matrix
from precombined_nif.core.precombined import physics as cell_files
from precombined_nif.core.precombined.build import physics, previs

FO4 = CORPUS / "pynifly/tests/tests/FO4"
CK = CORPUS / "ck-precombined"
CK_PHYSICS = CK / "Meshes/PreCombined/00001E58_Physics.NIF"
HOMEPLATE = CK / "Meshes/aloot/HomePlate"
# Static collision of every kind the CK merges: compressed meshes, a convex polytope, compounds of
# polytopes and of meshes, a polytope whose body sits off its node (the CK ignores that).
MODELS = [FO4 / "APC01.nif", FO4 / "CigaretteMachine.nif", FO4 / "ShackPrefabMid01.nif", FO4 / "InsFloorMat01.nif",
          FO4 / "RedR_ButtonBox.nif", HOMEPLATE / "ALOOT_HP_Couch.nif", HOMEPLATE / "ALOOT_HP_ToolRack01.nif",
          HOMEPLATE / "ALOOT_HP_Poster01.nif"]


def placement(angles, translation, scale):
    matrix = np.eye(4)
    matrix[:3, :3] = rotation_matrix(angles) * scale
    matrix[:3, 3] = translation
    return matrix


PLACEMENTS = [placement((0.0, 0.0, 0.0), (0.0, 0.0, 0.0), 1.0),
              placement((0.4, -0.3, 2.1), (812.5, -1290.25, 64.0), 1.35),
              placement((0.0, 0.0, -1.2), (-300.0, 420.0, -12.5), 0.6)]


def expected(model, matrix):
    """The model's collision in cell space, from the source's own decoded shapes placed here:
    (triangles (k, 3, 3) of its compressed meshes, materials, [(polytope, 4x4 placing it)])."""
    meshes, materials, polytopes = [], [], []

    def walk(shape, at, material):
        if isinstance(shape, CompressedMeshShape):
            vertices, triangles = shape.mesh()
            meshes.append((vertices @ at[:3, :3].T + at[:3, 3])[triangles])
            found = shape.triangle_materials().astype(np.int64)
            materials.append(np.where(found == 0, shape.user_data, found))
        elif isinstance(shape, CompoundShape):
            for instance in shape.instances:
                walk(instance.shape, at @ instance.matrix, material)
        elif isinstance(shape, ConvexPolytopeShape):
            polytopes.append((shape, at))
        else:
            raise AssertionError(f"{type(shape).__name__} in a test model")

    for _, collision in model.blocks_of(bhkNPCollisionObject):
        system = Packfile.from_bytes(model.blocks[collision.data].packfile).root
        walk(system.bodies[collision.body_id].shape, matrix @ world_matrix(model, collision.target), None)
    triangles = np.concatenate(meshes) if meshes else np.zeros((0, 3, 3))
    materials = np.concatenate(materials) if materials else np.zeros(0, np.int64)
    # The CK drops the triangles a placement makes degenerate: squared cross product at most 1e-7
    # in Havok units (bacup's valid_triangles; CigaretteMachine has two at scale 0.6).
    cross = np.cross(triangles[:, 1] - triangles[:, 0], triangles[:, 2] - triangles[:, 0]) / GAME_UNITS**2
    kept = (cross**2).sum(axis=1) > 1e-7
    return triangles[kept], materials[kept], polytopes


def on_surface(shape, at, points):
    """How far each point (cell space) lies from the polytope's surface (its planes moved out by
    the convex radius), measured in its own space (Havok units, scale undone)."""
    local = (points - at[:3, 3]) @ np.linalg.inv(at[:3, :3]).T / GAME_UNITS
    planes = shape.planes[: len(shape.faces)].astype(np.float64)
    return np.abs((local @ planes[:, :3].T + planes[:, 3]).max(axis=1) - shape.convex_radius)


@pytest.fixture(scope="module")
def models(corpus):
    return [NifFile.read(path) for path in MODELS]


@pytest.fixture(scope="module")
def built(models):
    placed = [(0x01000800 + 16 * number + turn, model, matrix)
              for number, model in enumerate(models) for turn, matrix in enumerate(PLACEMENTS)]
    messages = []
    data, xpri = physics.cell_physics(placed, cell_id=0x01001E58, messages=messages)
    return placed, data, xpri, messages


def test_every_merged_triangle_is_where_its_source_places_it(built):
    placed, data, xpri, messages = built
    assert messages == [] and xpri == []
    merged = cell_files.MergedMesh(NifFile.from_bytes(data))
    owner = np.full(len(merged.triangles), -1)
    surface_points = []
    for number, (_, model, matrix) in enumerate(placed):
        triangles, materials, polytopes = expected(model, matrix)
        found = merged.find(triangles)
        assert (found >= 0).all(), f"{MODELS[number // 3].name} at placement {number % 3}: {(found < 0).sum()} missing"
        assert (merged.materials[found] == materials).all()
        assert (owner[found] == -1).all()  # no triangle claimed by two sources
        owner[found] = number
        surface_points += [(shape, at) for shape, at in polytopes]
    # What no mesh triangle claims is the polytopes' surface, every corner on one of them within
    # its quantisation (the reader's slack, game units, over the smallest scale placed).
    corners = merged.triangles[owner == -1].reshape(-1)
    assert len(corners) and len(surface_points) == 3 * 5  # InsFloorMat01's, RedR_ButtonBox's 3, Poster01's
    distance = np.array([on_surface(shape, at, merged.vertices[corners]) for shape, at in surface_points])
    assert (distance.min(axis=0) <= merged.slack[corners] / GAME_UNITS / 0.6).all()
    # and each of their triangles has its polytope's material (its user data)
    nearest = distance.reshape(len(surface_points), -1, 3).max(axis=2).argmin(axis=0)
    materials = np.array([shape.user_data for shape, _ in surface_points])[nearest]
    assert (merged.materials[owner == -1] == materials).all() and len(np.unique(materials)) >= 3


def test_a_transposed_or_unscaled_placement_is_not_found(built, models):
    """The check above tells a wrong placement from the right one."""
    _, data, _, _ = built
    merged = cell_files.MergedMesh(NifFile.from_bytes(data))
    matrix = PLACEMENTS[1]
    transposed, unscaled = matrix.copy(), matrix.copy()
    transposed[:3, :3] = matrix[:3, :3].T
    unscaled[:3, :3] /= 1.35
    for wrong in (transposed, unscaled):
        triangles = expected(models[1], wrong)[0]
        assert (merged.find(triangles) == -1).mean() > 0.9


def test_the_file_rereads_and_writes_back_identically(built):
    _, data, _, _ = built
    nif = NifFile.from_bytes(data)
    assert nif.to_bytes() == data
    packfile = nif.blocks[3].packfile
    assert Packfile.from_bytes(packfile).to_bytes() == packfile


def test_its_structure_is_the_creation_kits(corpus):
    """Built from the CK's own merged triangles: the same blocks, names, flags, root translation,
    body, material and triangles. Fields that differ, and why: the header's max filepath (the CK
    writes uninitialised bytes there), the compressed mesh's sections, trees, quads and
    triangle-is-interior bits and the domain's w lanes (the CK's SAH tree and SIMD residue; this
    encoder halves at medians), the CK's 43 custom primitives (convex shapes, which the decoder
    skips and this encoder cannot write) and the one material only they use."""
    ck = NifFile.read(CK_PHYSICS)
    theirs = cell_files.MergedMesh(ck)
    ours_nif = NifFile.from_bytes(physics.physics_nif(theirs.vertices, theirs.triangles, theirs.materials.astype(np.int64),
                                                      cell_id=0x1E58).to_bytes())
    assert [b.type_name for b in ours_nif.blocks] == [b.type_name for b in ck.blocks]
    for field in ("name", "flags", "rotation", "scale", "collision_object"):
        assert getattr(ours_nif.blocks[0], field) == getattr(ck.blocks[0], field), field
    assert np.abs(np.subtract(ours_nif.blocks[0].translation, ck.blocks[0].translation)).max() < 1e-3
    assert ours_nif.blocks[0].extra_data.tolist() == ck.blocks[0].extra_data.tolist()
    assert (ours_nif.blocks[1].name, ours_nif.blocks[1].integer_data) == (ck.blocks[1].name, ck.blocks[1].integer_data)
    for field in ("target", "flags", "data", "body_id"):
        assert getattr(ours_nif.blocks[2], field) == getattr(ck.blocks[2], field), field
    assert ours_nif.header.max_filepath != ck.header.max_filepath  # the CK's junk, not reproduced
    ours_system = Packfile.from_bytes(ours_nif.blocks[3].packfile).root
    ck_system = Packfile.from_bytes(ck.blocks[3].packfile).root
    assert vars(ours_system.materials[0]) == vars(ck_system.materials[0])
    body, ck_body = ours_system.bodies[0], ck_system.bodies[0]
    for field in ("reserved_body_id", "motion_id", "quality_id", "material_id", "collision_filter_info", "flags",
                  "position", "orientation"):
        assert getattr(body, field) == getattr(ck_body, field), field
    for field in ("flags", "dispatch_type", "convex_radius", "user_data"):
        assert getattr(body.shape, field) == getattr(ck_body.shape, field), field
    ours = cell_files.MergedMesh(ours_nif)
    assert len(ours.triangles) == len(theirs.triangles)
    found = ours.find(theirs.vertices[theirs.triangles[::5]])
    assert (found >= 0).all() and (ours.materials[found] == theirs.materials[::5]).all()
    table = body.shape.properties.entries[0].object.materials
    ck_table = ck_body.shape.properties.entries[0].object.materials
    assert set(ck_table["material"].tolist()) - set(table["material"].tolist()) == {911716378}
    assert (table["flags"] == 1).all() and (ck_table["flags"] == 1).all()


def test_the_ck_merged_none_of_the_plugins_own_references(corpus):
    """None of the plugin's references of its own models is in XCRI, and the CK's merged mesh
    holds none of their compressed-mesh triangles: the CK merges only what it combined."""
    plugin = Plugin(CK / "AlootHomePlate.esp")
    cell = plugin.record(0x1E58)
    combined = set(combined_references(cell.field("XCRI"))[1])
    merged = cell_files.MergedMesh(NifFile.read(CK_PHYSICS))
    models = {path.name.lower(): path for path in HOMEPLATE.glob("*.nif")}
    checked = 0
    for form_id, (kind, _) in plugin.records.items():
        if kind != "REFR" or plugin.cell_of.get(form_id) != 0x1E58:
            continue
        record = plugin.record(form_id)
        base = plugin.record(struct.unpack("<I", record.field("NAME"))[0])
        model = base.text("MODL") if base is not None else None
        if model is None or model.replace("\\", "/").rsplit("/", 1)[-1].lower() not in models:
            continue
        assert form_id not in combined
        values = struct.unpack("<6f", record.field("DATA"))
        scale = struct.unpack("<f", record.field("XSCL"))[0] if record.field("XSCL") else 1.0
        nif = NifFile.read(models[model.replace("\\", "/").rsplit("/", 1)[-1].lower()])
        triangles = expected(nif, placement(values[3:], values[:3], scale))[0]
        assert (merged.find(triangles) == -1).all()
        checked += len(triangles)
    assert checked > 400


def test_a_system_the_ck_clones_is_named_and_the_rest_merged(corpus):
    """ScaffFrame1x2Str01 holds a static layer-1 mesh and a dynamic polytope on layer 49;
    44BullBarrel only a dynamic compound: each cloned system is named, the static mesh merged."""
    scaffold, barrel = NifFile.read(FO4 / "ScaffFrame1x2Str01.nif"), NifFile.read(FO4 / "44BullBarrel.nif")
    messages = []
    data, _ = physics.cell_physics([(0x10, scaffold, PLACEMENTS[1]), (0x11, barrel, PLACEMENTS[2])], messages=messages)
    assert len(messages) == 2 and messages[0].startswith("00000010 (") and messages[1].startswith("00000011 (")
    assert all("not all static on layer 1: the Creation Kit clones such a system" in text for text in messages)
    merged = cell_files.MergedMesh(NifFile.from_bytes(data))
    triangles = expected(scaffold, PLACEMENTS[1])[0][:168]  # the static mesh's (168), not the polytope's
    assert len(merged.triangles) == 168 and (merged.find(triangles) >= 0).all()
    assert physics.cell_physics([(0x11, barrel, PLACEMENTS[0])]) == (None, [])


def test_a_model_whose_collision_cannot_be_read_is_named_and_the_rest_built(corpus, models):
    broken = NifFile.read(MODELS[0])
    system = broken.blocks[next(c.data for _, c in broken.blocks_of(bhkNPCollisionObject))]
    system.packfile = system.packfile[:200]
    messages = []
    data, _ = physics.cell_physics([(0x20, broken, PLACEMENTS[0]), (0x21, models[1], PLACEMENTS[1])], messages=messages)
    assert len(messages) == 1 and messages[0] == (f"00000020 ({MODELS[0]}): collision left out: "
                                                 f"collision block 3: 3 section headers cannot fit in the file")
    merged = cell_files.MergedMesh(NifFile.from_bytes(data))
    triangles = expected(models[1], PLACEMENTS[1])[0]
    assert len(merged.triangles) == len(triangles) and (merged.find(triangles) >= 0).all()
    assert physics.cell_physics([(0x20, broken, PLACEMENTS[0])]) == (None, [])


def test_xpri_is_the_previs_files_references_not_the_combined_ones(corpus):
    """The corpus cell's XPRI: 15 references, none combined (XCRI), each an object of the cell's
    previs file by its FormID: previs's index, so a build without new previs drops it with VISI
    and RVIS."""
    cell = Plugin(CK / "AlootHomePlate.esp").record(0x1E58)
    xpri = np.frombuffer(cell.field("XPRI"), "<u4").tolist()
    tome = (CK / "Vis/Fallout4.esm/00001E58.uvd").read_bytes()
    assert len(xpri) == 15 and not set(xpri) & set(combined_references(cell.field("XCRI"))[1])
    assert all(struct.pack("<I", form_id) in tome for form_id in xpri)
    assert set(previs.PREVIS_FIELDS) == {"VISI", "RVIS", "XPRI"}


def test_a_material_entry_of_0_takes_the_shapes_user_data(corpus):
    """As the CK's CombinedData::GetMaterial (bacup): a table entry of 0 means the shape's user data."""
    couch = NifFile.read(MODELS[5])
    block = couch.blocks[next(c.data for _, c in couch.blocks_of(bhkNPCollisionObject))]
    packfile = Packfile.from_bytes(block.packfile)
    shape = packfile.root.bodies[0].shape
    table = shape.properties.entries[0].object.materials
    before = shape.triangle_materials()
    first = int(table["material"][0])
    table["material"][0] = 0
    block.packfile = packfile.to_bytes()
    data, _ = physics.cell_physics([(0x30, couch, PLACEMENTS[1])])
    merged = cell_files.MergedMesh(NifFile.from_bytes(data))
    found = merged.find(expected(NifFile.read(MODELS[5]), PLACEMENTS[1])[0])
    assert (found >= 0).all() and (before == first).any()
    assert (merged.materials[found] == np.where(before == first, shape.user_data, before)).all()


def test_a_static_sphere_is_named_not_merged(corpus):
    """Workshop_HighTechLightFloor05_On's static layer-1 sphere: the CK keeps a sphere as a custom
    primitive, which this writer cannot store, so it is named and nothing is written for it."""
    path = FO4 / "Workshop_HighTechLightFloor05_On.nif"
    messages = []
    assert physics.cell_physics([(0x40, NifFile.read(path), PLACEMENTS[1])], messages=messages) == (None, [])
    assert messages == [f"00000040 ({path}): collision left out: collision block 37: a sphere shape: the Creation Kit "
                        f"keeps it as a custom primitive, which this writer cannot store"]


def test_the_ck_keeps_convex_shapes_as_custom_primitives(corpus):
    """Why the built file triangulates what the CK's does not: the CK's merged mesh holds 43
    primitives (a, b, b, b) that are not triangles, each in a section flagged 1, whose first index
    names a header in the section's shared index stream (vertex count << 8 | tag count << 6 |
    1 << 4 | type, then its first shared word, then the tags; bacup ``layout_shared_stream``):
    all 43 are type 2, convex polytopes of 8 vertices (boxes) with one tag, the convex radius as
    the upper half of a float (0.0043, 0.01 and 0.05 Havok units), their vertices inside their
    tree leaf's box by the radius."""
    system = Packfile.from_bytes(NifFile.read(CK_PHYSICS).blocks[3].packfile).root
    data = system.bodies[0].shape.data
    headers, radii, boxes = [], set(), []
    for section in data.sections:
        first, count = section.primitives >> 8, section.primitives & 0xFF
        leaves = decode_tree(section.nodes, section.aabb[:, :3], 1)
        for index, primitive in enumerate(data.primitives[first:first + count].astype(np.int64)):
            if len(set(primitive.tolist())) >= 3:
                continue
            assert section.flags == 1 and (primitive[1:] == primitive[1]).all()
            slot = (section.shared >> 8) + primitive[0] - section.num_packed
            header, first_word, tag = (int(value) for value in data.shared_indices[slot:slot + 3])
            headers.append(header)
            radius = float((np.array([tag], np.uint32) << np.uint32(16)).view(np.float32)[0])
            radii.add(round(radius, 4))
            # Its 8 vertices: two 11/11/10 words per u64 of the shared vertices, high word first,
            # in the box of its leaf of the section's tree (bacup ``decode_custom_vertices``,
            # mode 1), which holds them grown by the convex radius on every side.
            low, high = leaves[index].astype(np.float64)
            words = data.shared_vertices[section.page << 16 | first_word:][:4].astype(np.uint64)
            codes = np.stack([words >> np.uint64(32), words & np.uint64(0xFFFFFFFF)], axis=1).reshape(-1)
            steps = np.stack([codes & 0x7FF, codes >> 11 & 0x7FF, codes >> 22 & 0x3FF], axis=1).astype(np.float64)
            vertices = low + steps * (high - low) / (2047.0, 2047.0, 1023.0)
            assert (vertices.min(axis=0) - low >= 0.98 * radius).all()
            assert (high - vertices.max(axis=0) >= 0.98 * radius).all()
            # and they are a box's corners: in pairs through their centre, all as far from it
            centred = vertices - vertices.mean(axis=0)
            reach = np.linalg.norm(centred, axis=1)
            opposite = np.linalg.norm(centred[:, None] + centred[None], axis=2).min(axis=1)
            boxes.append(np.ptp(reach) < 0.01 * reach.max() and opposite.max() < 0.01 * reach.max())
    assert len(headers) == 43 and set(headers) == {8 << 8 | 1 << 6 | 1 << 4 | 2}
    assert radii == {0.0043, 0.01, 0.05} and all(boxes)
