"""A stand-in for what the corpus lacks to rebuild the Creation Kit's own cell 00001E58
(ck-precombined/): Fallout4.esm's bases and their models, made from the CK's own records.

How: each instance of the corpus's 11 combined meshes is matched to the plugin's REFR standing
where it stands (plugin.references.match_instances, as the cell importer matches them); the
records instanced at a reference are its base's shapes, in the order the file holds them. So a
base becomes a STAT of a written Fallout4.esm (non-occluder flagged when its mesh's group is),
whose model is a NIF written here: per record a BSTriShape (a BSMeshLODTriShape with the
record's three LOD sizes when LOD1 or LOD2 has triangles) holding the record's vertex bytes from
the .csg and its triangles, its transform the instance's placement relative to the REFR's (the
identity where that is within 1e-5 of it: float rounding of the REFR's rotation), its
bounding sphere the instance's bound brought back into the shape, its shader, texture set and
alpha the combined shape's; the base of a reference whose collision the CK cloned into a file
(its HavokRoot's first node stands at the REFR) gets those blocks back, its EditorID the CLONE
node's (CkCell._collision). Bases the plugin defines itself (its wood basket, whose model is the
game's) get their model at their MODL path. Fallout4.esm's own references (164 in XCRI, whose
records the corpus lacks): the copies no plugin REFR matches, taken together where they stand
alike (translation, rotation, scale), are as many in each file as XCRI's Fallout4.esm references
of its mesh (40 in 4 files), so each such placement becomes a REFR of the written Fallout4.esm
(XCRI's FormIDs of that mesh, highest first, in the order the file meets the placements) with a
base of its own made of its records. The 27 combined meshes the corpus lacks are out of this
test. The Fallout4.esm written holds the cell (interior) with those REFRs, the bases and a
MultirefLOD keyword for each keyword the listed references link with (the CK combined them, so
theirs is MultirefLOD)."""

import copy
import struct

import numpy as np
from plugin_writer import cell_with_children, group, interior_cells, plugin, record, zstring

from precombined_nif.core.formats import read_file
from precombined_nif.core.nif.blocks.nodes import NiNode
from precombined_nif.core.nif.blocks.tri_shape import BSMeshLODTriShape, BSTriShape
from precombined_nif.core.nif.file import NifFile
from precombined_nif.core.nif.header import Header
from precombined_nif.core.plugin.records import Plugin
from precombined_nif.core.plugin.references import CellReferences, Reference, match_instances, reference_angles
from precombined_nif.core.precombined.cell_edits import placement_matrix
from precombined_nif.core.precombined.csg import GeometryFile
from precombined_nif.core.transforms import transform_matrix, transform_parts

CELL = 0x1E58
FOLDER = "ck-precombined"
STAND_IN_BASES = 0x800000  # + the REFR's FormID: Fallout4.esm ids the game does not use


def placement_key(instance):
    return (tuple(np.round(instance["translation"], 2)), tuple(np.round(instance["rotation"].ravel(), 4)),
            round(float(instance["scale"]), 4))


class CkCell:
    """The CK's files read: ``copies`` [(group, block, record index, instance number, Reference
    or None, record, instance)] and per base (as the plugin stores it) its shapes."""

    def __init__(self, corpus):
        self.root = corpus / FOLDER
        self.plugin = Plugin(self.root / "AlootHomePlate.esp")
        self.cell = CellReferences([self.plugin], CELL)
        self.xcri = dict(zip(self.cell.form_ids, self.cell.reference_meshes))
        self.csg = GeometryFile(self.root / "AlootHomePlate - Geometry.csg")
        self.copies, self.bases, self.files = [], {}, {}
        for path in sorted((self.root / "Meshes/PreCombined").glob("*_OC.NIF")):
            group_id = int(path.name.split("_")[1], 16)
            nif = read_file(path)
            self.files[group_id] = nif
            found = []
            for index, block in enumerate(nif.blocks):
                for at, rec in enumerate(getattr(block, "records", ()) or ()):
                    for number, instance in enumerate(rec.instances):
                        found.append((group_id, index, at, number, rec, instance))
            matrices = [placement_matrix(instance) for *_, instance in found]
            owners = match_instances(self.cell.references, [m[:3, 3] for m in matrices], [m[:3, :3] for m in matrices])
            owners = self._stand_in_references(group_id, found, owners)
            for (group_id, index, at, number, rec, instance), owner in zip(found, owners):
                self.copies.append((group_id, index, at, number, owner, rec, instance))
        self.clones = {}  # REFR FormID: (file, the HavokRoot's nodes standing for its model's collision)
        for group_id, nif in self.files.items():
            havok = next((b for b in nif.blocks if getattr(b, "name", None) == "HavokRoot"), None)
            if havok is None:
                continue
            at = nif.blocks[havok.children[0]].translation
            owner, = {c[4] for c in self.copies if c[0] == group_id and c[4] is not None
                      and np.array_equal(np.float32(c[4].position), np.float32(at))}
            self.clones[owner.form_id] = (nif, list(havok.children))
        for group_id, index, at, number, owner, rec, instance in self.copies:
            if owner is None:
                continue
            shapes = self.bases.setdefault(owner.base_id, {}).setdefault(owner.form_id, [])
            shapes.append((group_id, self.files[group_id], index, at, rec, instance, owner))

    def _stand_in_references(self, group_id, found, owners):
        """The owners with a Reference standing in for each Fallout4.esm REFR of the mesh."""
        places = {}
        for (*_, instance), owner in zip(found, owners):
            if owner is None:
                places.setdefault(placement_key(instance), instance)
        missing = sorted((f for f in self.cell.unresolved if self.xcri[f] == group_id), reverse=True)
        assert len(missing) == len(places), (group_id, len(missing), len(places))
        made = {}
        for form_id, (key, instance) in zip(missing, places.items()):
            angles = reference_angles(np.asarray(instance["rotation"], np.float64))
            made[key] = Reference(form_id, self.plugin, instance["translation"].astype(np.float64), angles,
                                  float(instance["scale"]), STAND_IN_BASES + form_id, None)
        return [owner if owner is not None else made[placement_key(instance)]
                for (*_, instance), owner in zip(found, owners)]

    def close(self):
        self.csg.close()
        self.plugin.close()

    def geometry(self, nif, index, at):
        block, rec = nif.blocks[index], nif.blocks[index].records[at]
        offset = int(block.objects[at]["data_offset"])
        return self.csg.record_geometry(offset, rec.vertex_desc, rec.num_vertices, rec.lod_counts)

    def model(self, shapes):
        """The NifFile standing in for a base whose reference's copies are ``shapes``."""
        blocks = [NiNode("BSFadeNode", name="Scene Root", flags=14)]
        for group_id, nif, index, at, rec, instance, owner in shapes:
            _, vertices, triangles = self.geometry(nif, index, at)
            host = next(b for b in nif.blocks if isinstance(b, BSTriShape) and index in b.extra_data)
            lod = any(rec.lod_counts[1:])
            shape = (BSMeshLODTriShape if lod else BSTriShape)(vertex_desc=rec.vertex_desc)
            if lod:
                shape.lod_sizes = tuple(int(n) for n in rec.lod_counts)
            shape.vertex_data = vertices.copy()
            shape.set_triangles(triangles)
            local = np.linalg.inv(owner_matrix(owner)) @ placement_matrix(instance)
            if np.abs(local - np.eye(4)).max() < 1e-5:  # at the model's root: what is left is rounding
                local = np.eye(4)
            scale = float(np.cbrt(np.linalg.det(local[:3, :3])))
            shape.translation = tuple(map(float, local[:3, 3]))
            shape.rotation = tuple(map(float, (local[:3, :3] / scale).reshape(-1)))
            shape.scale = scale
            inverse = np.linalg.inv(placement_matrix(instance))
            shape.bound_center = tuple(map(float, inverse[:3, :3] @ instance["bound_center"] + inverse[:3, 3]))
            shape.bound_radius = float(instance["bound_radius"]) / float(instance["scale"])
            at_shader = len(blocks) + 1
            shader = copy.copy(nif.blocks[host.shader_property])
            extra = [shader]
            if 0 <= shader.texture_set < len(nif.blocks):
                extra.append(copy.copy(nif.blocks[shader.texture_set]))
                shader.texture_set = at_shader + 1
            if host.alpha_property != -1:
                shape.alpha_property = at_shader + len(extra)
                extra.append(copy.copy(nif.blocks[host.alpha_property]))
            shape.shader_property = at_shader
            blocks[0].children = [*blocks[0].children, len(blocks)]
            blocks += [shape, *extra]
        self._collision(blocks, shapes[0][-1])
        return NifFile(Header(user_version=12, bs_version=130), blocks, roots=[0])

    def clone_name(self, form_id):
        """The EditorID the CK named a reference's cloned collision with, or None."""
        if form_id not in self.clones:
            return None
        nif, nodes = self.clones[form_id]
        return nif.blocks[nodes[0]].name.removeprefix("CLONE ")

    def _collision(self, blocks, owner):
        """The CK's clone of a reference's model collision put back into the stand-in model: the
        first node's collision object and system on the root, each other node a child of the
        root placed by the CK's world matrix brought back by the REFR's placement."""
        if owner.form_id not in self.clones:
            return
        nif, nodes = self.clones[owner.form_id]
        inverse = np.linalg.inv(owner_matrix(owner))
        system = None
        for number, index in enumerate(nodes):
            node = nif.blocks[index]
            collision = copy.copy(nif.blocks[node.collision_object])
            if number == 0:
                target = 0
            else:
                target = len(blocks)
                world = transform_matrix(node.rotation, node.translation, node.scale)
                rotation, translation, scale = transform_parts(inverse @ world)
                if np.abs(np.subtract(rotation, np.eye(3).ravel())).max() < 1e-5:  # float rounding, as a shape's
                    rotation = tuple(np.eye(3).ravel())
                blocks.append(NiNode(name=node.name, flags=node.flags, translation=translation, rotation=rotation,
                                     scale=scale))
                blocks[0].children = [*blocks[0].children, target]
            blocks[target].collision_object, collision.target = len(blocks), target
            blocks.append(collision)
            if system is None:
                system = len(blocks)
                blocks.append(copy.copy(nif.blocks[collision.data]))
            collision.data = system


def owner_matrix(owner):
    matrix = np.eye(4)
    matrix[:3, :3] = owner.matrix()
    matrix[:3, 3] = owner.position
    return matrix


def write_stand_in(ck, folder):
    """The Data folder: the plugin (linked), the stand-in Fallout4.esm and the models; returns the
    {reference FormID: group} of the references the test can rebuild."""
    folder.mkdir(parents=True)
    (folder / "AlootHomePlate.esp").symlink_to(ck.root / "AlootHomePlate.esp")
    statics, expected, keywords, placed = [], {}, set(), []
    for base_id, references in sorted(ck.bases.items()):
        form_id, shapes = next(iter(references.items()))
        nif = ck.model(shapes)
        group_id = shapes[0][0]
        base = ck.plugin.record(base_id) if base_id >> 24 else None
        model = base.text("MODL") if base is not None else f"CK\\{base_id & 0xFFFFFF:06X}.nif"
        target = folder / "meshes" / model.replace("\\", "/")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(nif.to_bytes())
        if base is None:
            name = ck.clone_name(shapes[0][-1].form_id) or f"CK{base_id:06X}"
            statics.append(record("STAT", base_id, [("EDID", zstring(name)), ("OBND", bytes(12)),
                                                    ("MODL", zstring(model))], flags=0x10 if group_id >> 31 else 0))
        for reference, copies in references.items():
            expected[reference] = copies[0][0]
            refr = ck.plugin.record(reference)
            if refr is None:  # a Fallout4.esm REFR stood in for
                owner = copies[0][-1]
                placed.append(record("REFR", reference, [("NAME", struct.pack("<I", base_id)),
                                                         ("XSCL", struct.pack("<f", owner.scale)),
                                                         ("DATA", struct.pack("<6f", *owner.position, *owner.angles))]))
                continue
            keywords |= {struct.unpack_from("<I", data)[0] for kind, data in refr.fields if kind == "XLKR"}
    words = [record("KYWD", k, [("EDID", zstring("MultirefLOD"))]) for k in sorted(keywords) if k >> 24 == 0]
    cell = record("CELL", CELL, [("EDID", zstring("DmndPlayerHouse01")), ("DATA", struct.pack("<H", 1))])
    (folder / "Fallout4.esm").write_bytes(plugin([], [group("KYWD", words), group("STAT", statics),
                                                      interior_cells(cell_with_children(cell, CELL, temporary=placed))],
                                               flags=0x1))
    return expected
