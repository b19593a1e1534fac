"""The Creation Kit's precombined resource index, ``<Plugin>.cdx`` beside ``<Plugin> - Geometry.csg``.

``bcdx``, a u32 row count, then 16-byte rows (kind, CELL, value, extra), sorted by (CELL, kind,
extra, value) without duplicates: one row per resource a precombined cell needs (the CK's
own ``AlootHomePlate.cdx``; Bryant-21/bacup ``previs/src/cdx.rs``):

- 0x86 a combined mesh: value = the ``_OC`` file name's second number, extra = the cell;
- 0x80 a geometry object: value = its ``.csg`` data offset, extra = the ``.csg`` name hash;
- 0x81 a BGSM (lighting shader name), 0x82 a BGEM (effect shader name), 0x84 a colour texture
  (texture set slots 0, 3, 4; an effect shader's source, greyscale and environment textures),
  0x83 a data texture (slots 1, 2, 5, 6, 7; an effect shader's normal and environment mask):
  value = BSCRC32 of the lower-case file stem, extra = of its folder under ``materials\\`` or
  ``textures\\``;
- 0x87 the cell's previs file (value = BSCRC32 of the cell's ``%08x`` id, extra = of
  ``vis\\<master>``), or 0x88 when it has none (BSCRC32 of "" and of ``vis``).

Interior cells' rows have the cell's FormID as CELL and the kind as above. An exterior cell's
rows are keyed by its world: CELL holds the WRLD and the kind carries the grid (x in bits 20-31,
y in bits 8-19) over the kind without its 0x80 bit. A cell's key is therefore (CELL, the kind's
bits above the low byte), marked EXTERIOR for an exterior cell (the cell at 0, 0 has no grid bits).
"""


import numpy as np

from ..data_paths import data_relative
from ..errors import FormatError
from ..files import read_bytes, write_replacing
from ..stream import ReadStream, WriteStream
from .names import bscrc32

MAGIC = b"bcdx"
ROW = np.dtype([("kind", "<u4"), ("cell", "<u4"), ("value", "<u4"), ("extra", "<u4")])
GEOMETRY, MATERIAL, EFFECT_MATERIAL, DATA_TEXTURE, COLOR_TEXTURE = 0x80, 0x81, 0x82, 0x83, 0x84
MESH, VISIBILITY, NO_VISIBILITY = 0x86, 0x87, 0x88
KIND_NAMES = {GEOMETRY: "geometry", MATERIAL: "material", EFFECT_MATERIAL: "effect material", DATA_TEXTURE: "data texture",
              COLOR_TEXTURE: "colour texture", MESH: "combined mesh", VISIBILITY: "visibility", NO_VISIBILITY: "no visibility"}
INTERIOR = 0x80  # the kind bit of interior rows
EXTERIOR = 1 << 32  # a key's mark of an exterior cell, above the 32 bits of its grid and kind
COLOR_SLOTS = (0, 3, 4)  # texture set slots whose textures are colour data; slots 1, 2, 5, 6, 7 are data
TEXTURE_SLOTS = 8  # the CK indexes no slot past 7
EFFECT_TEXTURES = (("source_texture", COLOR_TEXTURE), ("greyscale_texture", COLOR_TEXTURE),
                   ("env_map_texture", COLOR_TEXTURE), ("normal_texture", DATA_TEXTURE), ("env_mask_texture", DATA_TEXTURE))


def resource_kind(kind):
    """The resource kind (0x80-0x88) of a stored kind, interior or exterior."""
    return kind & 0x7F | INTERIOR


def cell_key(cell, kind):
    """(CELL word, grid bits, marked EXTERIOR for an exterior row) of a row: the cell it belongs to."""
    kind = int(kind)
    return int(cell), kind & 0xFFFFFF00 | (0 if kind & INTERIOR else EXTERIOR)


def grid_of(kind):
    """(x, y) of an exterior row's kind."""
    x, y = kind >> 20 & 0xFFF, kind >> 8 & 0xFFF
    return x - (x & 0x800) * 2, y - (y & 0x800) * 2


def exterior_key(world, x, y):
    return world, (x & 0xFFF) << 20 | (y & 0xFFF) << 8 | EXTERIOR


def stored_kind(key, kind):
    """The kind a row of the cell ``key`` stores for a resource kind."""
    return kind if not key[1] else key[1] & 0xFFFFFF00 | kind & 0x7F


def sort_order(rows):
    return np.lexsort((rows["value"], rows["extra"], rows["kind"], rows["cell"]))


def resource_id(path, root):
    """(value, extra) of a material or texture path: BSCRC32 of its stem and of its folder, both
    relative to the Data folder and starting with ``root`` (``materials`` or ``textures``)."""
    relative = data_relative(path).lower()
    if not relative.startswith(root + "\\"):
        relative = f"{root}\\{relative}"
    folder, _, name = relative.rpartition("\\")
    return bscrc32(name.rsplit(".", 1)[0] if "." in name else name), bscrc32(folder)


class CdxFile:
    """A .cdx: ``rows`` (a ROW array, sorted)."""

    def __init__(self, rows=None, path=None):
        self.rows = np.zeros(0, ROW) if rows is None else np.asarray(rows, ROW)
        self.path = path

    def sync(self, s):
        magic = s.raw(MAGIC, 4)
        if magic != MAGIC:
            raise s.error(f"not a precombined resource index (magic {magic!r}, expected {MAGIC!r})", 0)
        count = s.count(len(self.rows), item_size=ROW.itemsize, what="rows")
        self.rows = s.array(self.rows, ROW, count)

    @classmethod
    def from_bytes(cls, data, path=None):
        cdx = cls(path=path)
        stream = ReadStream(data)
        try:
            cdx.sync(stream)
            if stream.remaining:
                raise stream.error(f"its count says {len(cdx.rows)} rows, but it holds {stream.remaining} bytes more")
            cdx.check()
        except FormatError as error:
            raise error.located(path=str(path) if path is not None else None) from None
        cdx.rows = cdx.rows.copy()
        return cdx

    @classmethod
    def read(cls, path):
        return cls.from_bytes(read_bytes(path), path)

    def check(self):
        """Rows sorted and unique, as the game looks them up; kinds known."""
        keys = self.rows[sort_order(self.rows)]
        if len(self.rows) and not np.array_equal(keys, self.rows):
            raise FormatError(f"its rows are not sorted by cell, kind, extra and value (row {first_unsorted(self.rows)})")
        if len(self.rows) > 1 and not np.any(self.rows[1:].view(("<u4", 4)) != self.rows[:-1].view(("<u4", 4)), axis=1).all():
            raise FormatError("it holds the same row twice")
        unknown = [int(k) for k in np.unique(self.rows["kind"]) if resource_kind(int(k)) not in KIND_NAMES]
        if unknown:
            raise FormatError(f"row kind {unknown[0]:#x} is none the Creation Kit writes")

    def to_bytes(self):
        rows = np.unique(np.asarray(self.rows, ROW))  # sorted field by field: kind first, which is not the file's order
        stream = WriteStream()
        CdxFile(rows[sort_order(rows)]).sync(stream)
        return bytes(stream.out)

    def write(self, path):
        write_replacing(path, self.to_bytes())

    # -- cells ------------------------------------------------------------------------------
    def cell_mask(self, key):
        kinds = self.rows["kind"]
        exterior = (kinds & INTERIOR) == 0
        return (self.rows["cell"] == key[0]) & (kinds & 0xFFFFFF00 == key[1] & 0xFFFFFF00) & (exterior == bool(key[1] & EXTERIOR))

    def key_of_mesh(self, cell_id, mesh_id):
        """The key of the cell listing ``mesh_id`` (its 0x86 row names the cell), or None."""
        mesh = (self.rows["value"] == mesh_id) & (self.rows["extra"] & 0xFFFFFF == cell_id & 0xFFFFFF)
        mesh &= (self.rows["kind"] & 0xFF | INTERIOR) == MESH
        found = self.rows[mesh]
        return cell_key(found["cell"][0], found["kind"][0]) if len(found) else None

    def has_previs(self, key):
        """Whether the cell ``key`` has its previs row (0x87, or 0x88: none)."""
        kinds = self.rows["kind"][self.cell_mask(key)] & 0x7F | INTERIOR
        return bool(np.isin(kinds, (VISIBILITY, NO_VISIBILITY)).any())

    def meshes_of(self, key):
        rows = self.rows[self.cell_mask(key)]
        return sorted(int(v) for v in rows["value"][(rows["kind"] & 0x7F | INTERIOR) == MESH])

    def replace_cell(self, key, rows):
        self.rows = np.concatenate([self.rows[~self.cell_mask(key)], np.asarray(rows, ROW)])
        self.rows = np.unique(self.rows)
        self.rows = self.rows[sort_order(self.rows)]


def first_unsorted(rows):
    keys = np.stack([rows["cell"], rows["kind"], rows["extra"], rows["value"]], axis=1).astype(np.int64)
    for index in range(1, len(keys)):
        if tuple(keys[index]) < tuple(keys[index - 1]):
            return index
    return 0


def rows_array(items):
    return np.array(list(items), ROW) if items else np.zeros(0, ROW)


def mesh_rows(nif, cell_id, mesh_id, key):
    """The rows one combined mesh (``_OC`` file) gives its cell: the mesh, its records' geometry,
    its shaders' materials and textures."""
    from ..nif.blocks.precombined import BSPackedCombinedGeomDataExtra
    from ..nif.blocks.shaders import BSEffectShaderProperty, BSLightingShaderProperty, BSShaderTextureSet

    rows = {(MESH, mesh_id, cell_id)}
    for _, block in nif.blocks_of(BSPackedCombinedGeomDataExtra):
        if block.shared:
            rows |= {(GEOMETRY, int(o["data_offset"]), int(o["filename_hash"])) for o in block.objects}
    for _, shader in nif.blocks_of(BSLightingShaderProperty):
        if shader.name:
            rows.add((MATERIAL, *resource_id(shader.name, "materials")))
        textures = nif.blocks[shader.texture_set] if 0 <= shader.texture_set < len(nif.blocks) else None
        if isinstance(textures, BSShaderTextureSet):
            for slot, path in enumerate(list(textures.textures)[:TEXTURE_SLOTS]):
                if path:
                    rows.add((COLOR_TEXTURE if slot in COLOR_SLOTS else DATA_TEXTURE, *resource_id(path, "textures")))
    for _, shader in nif.blocks_of(BSEffectShaderProperty):
        if shader.name:  # an unnamed effect shader adds no rows (bacup, from retail)
            rows.add((EFFECT_MATERIAL, *resource_id(shader.name, "materials")))
            rows |= {(kind, *resource_id(getattr(shader, name), "textures"))
                     for name, kind in EFFECT_TEXTURES if getattr(shader, name)}
    return rows_array((stored_kind(key, kind), key[0], value, extra) for kind, value, extra in rows)


def visibility_row(key, cell_id, master):
    """The 0x87 row of a cell whose previs file is ``vis\\<cell %08x>.uvd`` of ``master``."""
    return rows_array([(stored_kind(key, VISIBILITY), key[0], bscrc32(f"{cell_id & 0xFFFFFF:08x}"),
                        bscrc32(f"vis\\{master.lower()}"))])


def no_visibility_row(key):
    return rows_array([(stored_kind(key, NO_VISIBILITY), key[0], bscrc32(""), bscrc32("vis"))])


class CellRows:
    """A cell's rows made anew: ``rows``, and ``kept`` (how many old rows were kept because
    meshes of the cell were not at hand to tell whether they still need them) and ``missing``
    (those meshes)."""

    def __init__(self, rows, kept, missing):
        self.rows, self.kept, self.missing = rows, kept, missing


def rebuild_cell(cdx, key, cell_id, meshes, visibility=None):
    """The rows of the cell ``key`` from its combined meshes ``meshes`` ({mesh id: NifFile or
    None when its file is not at hand}). Its previs row stays (else ``visibility``, else 0x88).
    With every mesh at hand the rows are exactly the meshes'; else the old rows stay too, since
    the missing meshes may share any of them."""
    old = cdx.rows[cdx.cell_mask(key)]
    parts = [mesh_rows(nif, cell_id, mesh_id, key) for mesh_id, nif in sorted(meshes.items()) if nif is not None]
    previs = old[np.isin(old["kind"] & 0x7F | INTERIOR, (VISIBILITY, NO_VISIBILITY))]
    parts.append(previs if len(previs) else visibility if visibility is not None else no_visibility_row(key))
    missing = sorted(mesh_id for mesh_id, nif in meshes.items() if nif is None)
    new = np.unique(np.concatenate(parts))
    kept = 0
    if missing:
        kept = int(np.count_nonzero(~np.isin(old, new)))
        new = np.unique(np.concatenate([new, old]))
    return CellRows(new, kept, missing)


def resource_names(nif):
    """{(resource kind, value, extra): the path} of a combined mesh's materials and textures."""
    from ..nif.blocks.shaders import BSEffectShaderProperty, BSLightingShaderProperty, BSShaderTextureSet

    names = {}
    for _, shader in nif.blocks_of(BSLightingShaderProperty):
        if shader.name:
            names[(MATERIAL, *resource_id(shader.name, "materials"))] = data_relative(shader.name)
        textures = nif.blocks[shader.texture_set] if 0 <= shader.texture_set < len(nif.blocks) else None
        for slot, path in enumerate(list(textures.textures)[:TEXTURE_SLOTS] if isinstance(textures, BSShaderTextureSet) else ()):
            if path:
                names[(COLOR_TEXTURE if slot in COLOR_SLOTS else DATA_TEXTURE, *resource_id(path, "textures"))] = path
    for _, shader in nif.blocks_of(BSEffectShaderProperty):
        if shader.name:
            names[(EFFECT_MATERIAL, *resource_id(shader.name, "materials"))] = data_relative(shader.name)
            names.update({(kind, *resource_id(getattr(shader, name), "textures")): getattr(shader, name)
                          for name, kind in EFFECT_TEXTURES if getattr(shader, name)})
    return names


def row_name(kind, cell_id, value, extra, names, plugins):
    """What a row stands for, when known: a path (``names``: resource_names of the cell's
    meshes), a file name, a .csg offset, a previs file (``plugins``: names to try)."""
    kind = resource_kind(kind)
    if kind == MESH:
        return f"{extra & 0xFFFFFF:08X}_{value:08X}_OC.nif"
    if kind == GEOMETRY:
        plugin = next((p for p in plugins if bscrc32(f"{p.rsplit('.', 1)[0]} - geometry") == extra), None)
        return f"{plugin.rsplit('.', 1)[0] + ' - Geometry.csg' if plugin else f'geometry file {extra:08X}'} at {value:#x}"
    if kind == VISIBILITY:
        master = next((p for p in plugins if bscrc32(f"vis\\{p.lower()}") == extra), None)
        if master is not None and cell_id is not None and bscrc32(f"{cell_id & 0xFFFFFF:08x}") == value:
            return f"previs of {cell_id & 0xFFFFFF:08X} ({master})"
        return f"previs of {master}" if master else None
    if kind == NO_VISIBILITY:
        return "no previs"
    return names.get((kind, value, extra))
