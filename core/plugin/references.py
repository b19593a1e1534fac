"""Which reference placed each copy of a precombined cell. The cell's CELL record lists in XCRI
the combined meshes (u32 count), a u32 count of the u32s that follow the meshes' name hashes,
the meshes' name hashes, then (reference FormID, combined mesh hash) pairs: the count is twice
the references (xEdit's wbDefinitionsFO4.pas "Combined References"; in the corpus cell every
second value is one of the meshes' hashes, 719 of 719); each REFR gives its base record (NAME), position and rotation in radians
(DATA) and scale (XSCL), and a copy sits exactly where its reference's placement puts it.
The game composes a reference's rotation as Rx(-x) Ry(-y) Rz(-z), the matrix a precombined
instance stores (checked on the corpus cells: every copy at a reference's position has it)."""

import os
import re
import struct
from pathlib import Path

import numpy as np

from ..errors import FormatError

POSITION_TOLERANCE = 0.01  # game units
ROTATION_TOLERANCE = 1e-3  # matrix entries (scaled)
CELL_NAME = re.compile(r"^([0-9A-Fa-f]{8})_")


def cell_form_id(cell_path):
    """The cell FormID a precombined file's name starts with (``00001E58_..._OC.nif``), or None."""
    match = CELL_NAME.match(Path(str(cell_path).replace("\\", "/")).name)
    return int(match.group(1), 16) if match else None


def rotation_matrix(angles):
    """The 3x3 matrix of a reference's DATA rotation (radians about x, y, z)."""
    x, y, z = -np.asarray(angles, np.float64)
    cx, sx, cy, sy, cz, sz = np.cos(x), np.sin(x), np.cos(y), np.sin(y), np.cos(z), np.sin(z)
    about_x = np.array([[1, 0, 0], [0, cx, -sx], [0, sx, cx]])
    about_y = np.array([[cy, 0, sy], [0, 1, 0], [-sy, 0, cy]])
    about_z = np.array([[cz, -sz, 0], [sz, cz, 0], [0, 0, 1]])
    return about_x @ about_y @ about_z


def reference_placement(position, angles, scale):
    """The 4x4 matrix placing a model at a reference's DATA position and rotation and its scale."""
    matrix = np.eye(4)
    matrix[:3, :3] = rotation_matrix(angles) * scale
    matrix[:3, 3] = position
    return matrix


def reference_angles(matrix):
    """The DATA rotation (radians about x, y, z) whose rotation_matrix is ``matrix`` (a pure
    rotation): its transpose is Rz(z) Ry(y) Rx(x), decomposed as such; at gimbal lock (y at
    +-90 degrees) x is 0."""
    m = np.asarray(matrix, np.float64).T
    y = -np.arcsin(np.clip(m[2, 0], -1.0, 1.0))
    if abs(m[2, 0]) < 1 - 1e-9:
        x, z = np.arctan2(m[2, 1], m[2, 2]), np.arctan2(m[1, 0], m[0, 0])
    else:
        x, z = 0.0, np.arctan2(-m[0, 1], m[1, 1])
    return float(x), float(y), float(z)


class Reference:
    """A REFR: its FormID (as the cell lists it), placement, and its base record's EditorID,
    type and model path (None when the base lives in a master that was not given)."""

    def __init__(self, form_id, plugin, position, angles, scale, base_id, base):
        self.form_id = form_id
        self.plugin = plugin  # the file holding the REFR
        self.position = np.asarray(position, np.float64)
        self.angles = angles
        self.scale = scale
        self.base_id = base_id
        self.editor_id = base.text("EDID") if base is not None else None
        self.base_type = base.type if base is not None else None
        self.model = base.text("MODL") if base is not None else None

    def matrix(self):
        return rotation_matrix(self.angles) * self.scale


def combined_references(xcri):
    """(mesh hashes, reference FormIDs as stored, each reference's mesh hash) of an XCRI field;
    ValueError when its counts do not fit its size."""
    if len(xcri) < 8:
        raise ValueError(f"XCRI of {len(xcri)} bytes")
    meshes, count = struct.unpack_from("<II", xcri)
    if count % 2 or 8 + 4 * (meshes + count) != len(xcri):
        raise ValueError(f"XCRI says {meshes} meshes and {count} reference values (pairs) but holds {len(xcri)} bytes")
    values = np.frombuffer(xcri, "<u4", meshes + count, 8)
    return values[:meshes].tolist(), values[meshes::2].tolist(), values[meshes + 1::2].tolist()


class CellReferences:
    """The references a plugin's cell lists for its precombined meshes. ``plugins``: the cell's
    plugin first, then any of its masters the user gave (references in other masters stay
    unresolved and are counted)."""

    def __init__(self, plugins, cell_id):
        self.plugins = list(plugins)
        plugin = self.plugins[0]
        cell = plugin.record(cell_id)
        if cell is None or cell.type != "CELL":
            cell = next((plugin.record(f) for f, (kind, _) in plugin.records.items()
                         if kind == "CELL" and f & 0xFFFFFF == cell_id & 0xFFFFFF), None)
        if cell is None:
            raise FormatError(f"holds no CELL {cell_id:08X}", path=plugin.path)
        self.cell = cell
        xcri = cell.field("XCRI")
        if xcri is None:
            raise FormatError(f"CELL {cell_id:08X} has no XCRI (no precombined meshes)", path=plugin.path)
        try:
            self.mesh_hashes, self.form_ids, self.reference_meshes = combined_references(xcri)
        except ValueError as error:
            raise FormatError(f"CELL {cell_id:08X}: {error}", path=plugin.path) from None
        self.references = []
        self.unresolved = []
        for form_id in self.form_ids:
            reference = self._reference(form_id)
            (self.references if reference is not None else self.unresolved).append(reference or form_id)

    def _resolve(self, plugin, form_id):
        """(plugin, record) for a FormID as ``plugin`` stores it: its own record, else the first
        of the plugins given holding it (an override in a plugin given before the master that
        defines the record wins, as later plugins' do in the game)."""
        record = plugin.record(form_id)
        if record is not None:
            return plugin, record
        index = form_id >> 24
        origin = (plugin.masters[index] if index < len(plugin.masters) else plugin.name).lower()
        for other in self.plugins:
            names = [name.lower() for name in other.masters]
            if other.name.lower() == origin:
                local = other.local_index() << 24 | form_id & 0xFFFFFF
            elif origin in names:
                local = names.index(origin) << 24 | form_id & 0xFFFFFF
            else:
                continue
            found = other.record(local)
            if found is not None:
                return other, found
        return None, None

    def _reference(self, form_id):
        plugin, record = self._resolve(self.plugins[0], form_id)
        if record is None or record.field("DATA") is None or record.field("NAME") is None:
            return None
        data = record.field("DATA")
        if len(data) != 24:
            raise FormatError(f"{record.type} {record.form_id:08X}: DATA of {len(data)} bytes, not 24", path=plugin.path)
        if len(record.field("NAME")) != 4:
            raise FormatError(f"{record.type} {record.form_id:08X}: NAME of {len(record.field('NAME'))} bytes, not 4",
                              path=plugin.path)
        values = struct.unpack("<6f", data)
        scale_field = record.field("XSCL")
        scale = struct.unpack("<f", scale_field)[0] if scale_field and len(scale_field) == 4 else 1.0
        base_id = struct.unpack_from("<I", record.field("NAME"))[0]
        _, base = self._resolve(plugin, base_id)
        return Reference(form_id, plugin, values[:3], values[3:], scale, base_id, base)


def match_instances(references, translations, matrices):
    """For each instance (its translation, and its 3x3 rotation times scale), the Reference whose
    placement equals it (position within 0.01, matrix within 1e-3), or None."""
    if not references or not len(translations):
        return [None] * len(translations)
    positions = np.array([r.position for r in references])
    placements = np.array([r.matrix() for r in references])
    found = []
    for translation, matrix in zip(np.asarray(translations, np.float64), np.asarray(matrices, np.float64)):
        near = np.flatnonzero(np.abs(positions - translation).max(axis=1) <= POSITION_TOLERANCE)
        same = [i for i in near if np.abs(placements[i] - matrix).max() <= ROTATION_TOLERANCE]
        found.append(references[min(same, key=lambda i: np.abs(positions[i] - translation).max())] if same else None)
    return found


PLUGIN_SUFFIXES = (".esm", ".esp", ".esl")


def cell_instances(nif):
    """Every placed copy of a precombined NIF: [(block index, record index, instance number,
    instance)] in file order."""
    from ..nif.blocks.precombined import BSPackedCombinedGeomDataExtra

    return [
        (block_index, record_index, number, instance)
        for block_index, block in nif.blocks_of(BSPackedCombinedGeomDataExtra)
        for record_index, record in enumerate(block.records)
        for number, instance in enumerate(record.instances)
    ]


def geometry_hashes(nif):
    """The geometry-file hashes a cell's records carry."""
    from ..nif.blocks.precombined import BSPackedCombinedGeomDataExtra

    return {int(entry["filename_hash"]) for _, block in nif.blocks_of(BSPackedCombinedGeomDataExtra)
            for entry in (block.objects if block.shared else ())}


def find_cell_plugin(cell_path, hashes, data=None):
    """The plugin of a cell file found in its Data folder (``data``, by default the folder
    holding its ``meshes`` folder): the one whose geometry hash (``<plugin> - geometry``) is
    among ``hashes``, those the cell's records carry. None when not found."""
    from ..archives.data import data_folder_of
    from ..precombined.names import geometry_hash

    data = Path(data) if data is not None else data_folder_of(cell_path)
    if data is None or not hashes or not data.is_dir():  # a Data folder set in the preferences may be gone
        return None
    for candidate in sorted(data.iterdir()):
        if candidate.suffix.lower() in PLUGIN_SUFFIXES and geometry_hash(candidate.stem.lower()) in hashes:
            return candidate
    return None


def references_of_cell(nif, cell_path, plugins):
    """(CellReferences, [(block, record, instance number, Reference or None)]) for a precombined
    cell, ``plugins`` being open Plugins (the cell's first)."""
    cell_id = cell_form_id(cell_path)
    if cell_id is None:
        raise FormatError("the file name does not start with the cell's FormID (XXXXXXXX_..._OC.nif)", path=cell_path)
    cell = CellReferences(plugins, cell_id)
    copies = cell_instances(nif)
    if not copies:
        return cell, []
    instances = np.array([instance for *_, instance in copies])
    matches = match_instances(cell.references, instances["translation"],
                              instances["rotation"] * instances["scale"][:, None, None])
    return cell, [(*where, match) for (*where, _), match in zip(copies, matches)]


def references_report(nif, cell_path, plugin_paths):
    """What ``cli.py info CELL --plugin P`` shows: a dict with the cell's counts and, per
    instance, the reference placing it (None when it belongs to a master not given)."""
    from .records import Plugin

    plugins = [Plugin(path) for path in plugin_paths]
    try:
        cell, matches = references_of_cell(nif, cell_path, plugins)
    finally:
        for plugin in plugins:
            plugin.close()
    return {
        "plugin": plugins[0].name,
        "cell": f"{cell.cell.form_id:08X}",
        "combined_meshes": len(cell.mesh_hashes),
        "references": len(cell.form_ids),
        "resolved_references": len(cell.references),
        "masters_not_given": [m for m in plugins[0].masters if m.lower() not in {p.name.lower() for p in plugins}],
        "instances": [
            {"block": block, "record": record, "instance": number,
             **({"form_id": f"{ref.form_id:08X}", "base_form_id": f"{ref.base_id:08X}", "base_type": ref.base_type,
                 "editor_id": ref.editor_id, "model": ref.model} if ref is not None else {"form_id": None})}
            for block, record, number, ref in matches
        ],
    }


def render_references(report):
    lines = [f"references: {report['plugin']}, CELL {report['cell']}: {report['combined_meshes']} combined meshes, "
             f"{report['references']} references ({report['resolved_references']} in the plugins given)"]
    for item in report["instances"]:
        where = f"  block {item['block']} record {item['record']} #{item['instance']}:"
        if item["form_id"] is None:
            lines.append(f"{where} -")
        else:
            lines.append(f"{where} REFR {item['form_id']} base {item['base_form_id']} "
                         f"{item['editor_id'] or ''} {item['model'] or ''}".rstrip())
    matched = sum(item["form_id"] is not None for item in report["instances"])
    missing = len(report["instances"]) - matched
    line = f"  {matched} of {len(report['instances'])} instances matched a reference"
    if missing:
        masters = ", ".join(report["masters_not_given"]) or "no master"
        line += f"; {missing} placed by references of masters not given ({masters})"
    lines.append(line)
    return "\n".join(lines)
