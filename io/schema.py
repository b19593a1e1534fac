"""What the extension stores in users' .blend files: the custom property keys and the mesh
attribute names it reads back on export. Saved .blend files keep them for as long as users keep
their files, so they are a file format: every key is spelled here and nowhere else, each name
being its key in capitals.

Changing it: a new key is added here (with the datablock it lives on and what it holds) and
needs no new version. Renaming a key, or changing what a stored value means, breaks the .blend
files saved before: then ``VERSION`` goes up and the exporter reads both spellings.
``tests/blender/test_schema_blender.py`` keeps the keys of the previous release and exports a
.blend saved with them.

The import writes ``VERSION`` into ``NIF_SCHEMA_VERSION`` on what it makes (a file's collection;
a .bsm2 import's objects; a Havok skeleton's armature and an animation's action; a mesh given
.tri morphs); a .blend
without it was saved by a release before the stamp, whose keys are these. The exporters refuse
data stamped with a newer version than this one (``check_version``): they would misread it.

Not here: the geometry-nodes instancers' ``rotation`` and ``scale`` point attributes, which
belong to the node group reading them (io/precombined/instancing.py).
"""

from ..core.errors import FormatError

VERSION = 1
NIF_SCHEMA_VERSION = "nif_schema_version"  # int: the VERSION the import wrote

# -- an imported file's collection --------------------------------------------------------
NIF_PATH = "nif_path"  # str: the file it was imported from (loose, or ARCHIVE.ba2:inner/path)
NIF_GAME = "nif_game"  # str: the file's game (core.nif.versions)
NIF_SOURCE = "nif_source"  # bytes: the file, zlib-compressed: the exporter's template (not for cells)
NIF_SCALE = "nif_scale"  # float: Blender units per game unit of the import, the export's default
NIF_BUILT_COLLISION = "nif_built_collision"  # bool: collision was built (else export keeps the stored one)
NIF_BUILT_SKIN = "nif_built_skin"  # bool: skins were built (else export keeps the stored ones)
REFERENCE_CELL_PLUGIN = "reference_cell_plugin"  # str: the plugin whose FormIDs reference_form_id uses
# A cell's precombine state in the load order (io/precombined/breakers.py)
PRECOMBINE_STATUS = "precombine_status"  # str: intact, or what broke the precombines
PRECOMBINE_CAUSES = "precombine_causes"  # str: one cause a line
PRECOMBINE_PREVIS = "precombine_previs"  # str: the previs state
PRECOMBINE_PLUGIN = "precombine_plugin"  # str: the plugin whose CELL gives the combined meshes

# -- objects made from a NIF's nodes and shapes -------------------------------------------
NIF_BLOCK = "nif_block"  # int: the block index (also on bones: their node's)
NIF_TYPE = "nif_type"  # str: the block's type name
NIF_FLAGS = "nif_flags"  # int: the block's flags (int32 bit pattern)
NIF_BASIS = "nif_basis"  # 16 floats: matrix_basis as the import made it (kept while it still holds)
NIF_PARENT = "nif_parent"  # int: the parent node's block index, -1 for a root
NIF_ROOT = "nif_root"  # int: an armature object's skeleton root node
NIF_BODY_PARTS = "nif_body_parts"  # [[body part, flags]]: a dismembered skin's partitions, in file order
NIF_SEGMENTS = "nif_segments"  # JSON: a BSSubIndexTriShape's segment layout
NIF_KF = "nif_kf"  # str: the collection of the .kf import (an empty standing for the file; its actions)

# -- Havok collision objects (io/havok/collision_import.py) ---------------------------------
NIF_COLLISION = "nif_collision"  # int: the collision object block it was built from
HAVOK_SOURCE = "havok_source"  # str: fingerprint of what was built: unchanged, the stored bytes are kept
HAVOK_SHAPE = "havok_shape"  # str: convex, capsule, sphere, box, compressed_mesh, compound...
HAVOK_MATERIAL = "havok_material"  # str: Bethesda material id as hex; also an INT face attribute
HAVOK_RADIUS = "havok_radius"  # float: convex radius, game units
HAVOK_MOTION = "havok_motion"  # str: static, dynamic, keyframed
HAVOK_MASS = "havok_mass"  # float: kg
HAVOK_FRICTION = "havok_friction"  # float
HAVOK_RESTITUTION = "havok_restitution"  # float
HAVOK_LAYER = "havok_layer"  # int: collision layer
# on an owner's object or bone: its collision block the import did not show (kept as stored)
NIF_COLLISION_LEFT_OUT = "nif_collision_left_out"  # int
# FO3 to Skyrim shapes (io/havok/legacy_collision_import.py)
HAVOK_MOPP = "havok_mopp"  # bool: a list of shapes under a MOPP tree
NIF_SHAPE = "nif_shape"  # int: the shape block a shape object shows (a transform or MOPP tree around it included)
HAVOK_SHAPE_SOURCE = "havok_shape_source"  # str: fingerprint of one shape object in its place: unchanged, its block is kept

# -- extra data empties (io/nif/extra_empties.py) ---------------------------------------------
NIF_EXTRA_KIND = "nif_extra_kind"  # str: connect_point, connect_child, furniture, bound, inventory_marker, constraint
NIF_EXTRA = "nif_extra"  # int: the extra data (or physics system) block
NIF_EXTRA_ITEM = "nif_extra_item"  # int: its entry in that block
NIF_EXTRA_BASIS = "nif_extra_basis"  # 16 floats: the local matrix as imported
NIF_EXTRA_OWNER = "nif_extra_owner"  # int: the node block it hung under
NIF_CONNECT_PARENT = "nif_connect_parent"  # str: a connect point's parent name naming no node
NIF_CONNECT_SKINNED = "nif_connect_skinned"  # bool: a child point block's skinned flag
NIF_ANIMATION_TYPE = "nif_animation_type"  # int: furniture position (later games)
NIF_ENTRY_POINTS = "nif_entry_points"  # int: furniture position (later games)
NIF_ORIENTATION = "nif_orientation"  # int: furniture position (FO3/FNV)
NIF_POSITION_REF_1 = "nif_position_ref_1"  # int: furniture position (FO3/FNV)
NIF_POSITION_REF_2 = "nif_position_ref_2"  # int: furniture position (FO3/FNV)
NIF_ZOOM = "nif_zoom"  # float: BSInvMarker
HAVOK_CONSTRAINT = "havok_constraint"  # str: a constraint's kind (ragdoll, limited_hinge, hinge, ball_and_socket)
HAVOK_BODY_A = "havok_body_a"  # str: the node owning body A ("body N" when none)
HAVOK_BODY_B = "havok_body_b"  # str: the node owning body B
HAVOK_LIMIT_PREFIX = "havok_"  # + a limit of core.havok.constraints.LIMITS: float, radians (torque: as stored)


def constraint_limit(name):
    """The key of a constraint limit (``twist_min``, ``max_friction_torque``...)."""
    return HAVOK_LIMIT_PREFIX + name


# -- precombined cells (io/precombined/importer.py): copies, their meshes, placeholders --------
PRECOMBINED_CELL = "precombined_cell"  # str: the cell file (NIF_PATH of its collection)
PRECOMBINED_BLOCK = "precombined_block"  # int: the precombined block index
PRECOMBINED_OBJECT = "precombined_object"  # int: the record index in its block
PRECOMBINED_INSTANCE = "precombined_instance"  # int: a copy's number among its record's
PRECOMBINED_GRAYSCALE_SCALE = "precombined_grayscale_scale"  # float: a copy's grayscale scale
PRECOMBINED_INSTANCE_RAW = "precombined_instance_raw"  # 18 floats: a copy's placement as stored
PRECOMBINED_INSTANCES_RAW = "precombined_instances_raw"  # 18 floats a copy: a geometry-nodes points mesh's
PRECOMBINED_SOURCE = "precombined_source"  # int: on a geometry-nodes instancer's hidden source object: its record
PRECOMBINED_HASH = "precombined_hash"  # str: a shared block record's geometry filename hash, hex
PRECOMBINED_OFFSET = "precombined_offset"  # int: its data offset (int32 bit pattern)
PRECOMBINED_VERTEX_DESC = "precombined_vertex_desc"  # str: a record mesh's stored vertex descriptor, hex
PRECOMBINED_RECORD_DESC = "precombined_record_desc"  # str: the record header's descriptor, hex
PRECOMBINED_LOD = "precombined_lod"  # int: the LOD a record mesh shows
PRECOMBINED_GEOMETRY_FILE = "precombined_geometry_file"  # str: the .csg/.psg an external record's geometry came from
PRECOMBINED = "precombined"  # bool: a new mesh object marked to export as a record (Object > Precombined)
PRECOMBINED_EXPORT_PREVIEW = "precombined_export_preview"  # str: on a cell's collection: what its export would write, a line each
# A copy named after the reference placing it (io/plugin/references.py); also an INT point attribute
# of geometry-nodes points (FormID bits, 0 when unmatched)
REFERENCE_FORM_ID = "reference_form_id"  # str: the REFR's FormID, hex, as REFERENCE_CELL_PLUGIN stores it
REFERENCE_PLUGIN = "reference_plugin"  # str: the plugin holding the REFR
BASE_FORM_ID = "base_form_id"  # str: its base record's FormID, hex
BASE_EDITOR_ID = "base_editor_id"  # str: its base's EditorID
BASE_MODEL = "base_model"  # str: its base's model path
# A whole cell's import (io/plugin/cell_import.py). On its collection:
CELL_DATA_FOLDER = "cell_data_folder"  # str: the Data folder whose load order it was read from
CELL_PLUGINS_TXT = "cell_plugins_txt"  # str: the plugins.txt giving that load order ("": every plugin there)
CELL_KEY = "cell_key"  # str: the CELL, Origin.esm:XXXXXX (the plugin defining it, its object id)
CELL_REFERENCES = "cell_references"  # str: every reference imported, Origin.esm:XXXXXX, one a line
CELL_PRECOMBINED = "cell_precombined"  # str: COPIES (combined references shown by the _OC files) or MODELS
# On each reference's object (with REFERENCE_FORM_ID: its load-order FormID, and the BASE_ keys):
CELL_REFERENCE = "cell_reference"  # str: the REFR/ACHR, Origin.esm:XXXXXX
CELL_BASE = "cell_base"  # str: its base, Origin.esm:XXXXXX (Add > Game Reference sets it, or BASE_MODEL alone)
CELL_BASE_TYPE = "cell_base_type"  # str: the base's record type (STAT, LIGH, SCOL...)
CELL_FLAGS = "cell_flags"  # int: the reference's record flags (int32 bit pattern)
CELL_PLACEMENT = "cell_placement"  # 7 floats: DATA (position, rotation in radians) and XSCL as read
CELL_COMBINED = "cell_combined"  # bool: the cell's XCRI lists it (in its precombined meshes)
CELL_NAME = "cell_name"  # str: the object's name as imported (a copy of it, renamed by Blender, is a duplicate)
CELL_PART = "cell_part"  # int: on a SCOL part's object (its parent the SCOL's): the part's number
PRECOMBINE_BREAKER = "precombine_breaker"  # str: the plugin overriding the copy's REFR after the precombines
PRECOMBINE_OVERRIDE = "precombine_override"  # str: what the game does with that override

# -- meshes, bones, materials and nodes of a NIF import ----------------------------------------
NIF_GEOMETRY = "nif_geometry"  # str: a shape mesh's fingerprint: unchanged, the stored geometry is kept
NIF_REST = "nif_rest"  # 16 floats: a bone's exact bind pose, row major
NIF_MATRIX = "nif_matrix"  # 16 floats: the bone's matrix_local as Blender made it
NIF_RECORD = "nif_record"  # dict: a material's shader record (core.nif.materials)
NIF_BLOCKS = "nif_blocks"  # dict: {role: block index} of the shader blocks it came from
NIF_FILE = "nif_file"  # str: the file those blocks are in
NIF_BS_VERSION = "nif_bs_version"  # int: that file's Bethesda version
NIF_MATERIAL_PATH = "nif_material_path"  # str: the BGSM/BGEM the shader names, Data-relative
BGSM_FILE = "bgsm_file"  # str: the material file the look came from
BGSM_LOOK = "bgsm_look"  # JSON: the look it gave (edited since: written back when asked)
NIF_TEXTURE = "nif_texture"  # str: an image node's texture path as stored
# INT face attributes of skinned shapes (-1: none)
NIF_BODY_PART = "nif_body_part"
NIF_SEGMENT = "nif_segment"  # also a BSSegmentedTriShape's segments (io/nif/triangle_groups.py)
NIF_SUBSEGMENT = "nif_subsegment"
NIF_LOD_LEVEL = "nif_lod_level"  # INT face attribute: a BSLODTriShape's LOD level (0 to 2)

# -- Starfield shapes (io/starfield/): a BSGeometry's object holds its LOD 0 mesh ----------------
SF_LOD_SLOT = "sf_lod_slot"  # int: a mesh object under a shape's object filling LOD slot 1 to 3
SF_MESH_LOD = "sf_mesh_lod"  # int: a mesh object under a slot's object: triangle list N (from 1) of its .mesh
SF_MESH_FILE = "sf_mesh_file"  # str: on a slot's object: where its .mesh was read (a file or ARCHIVE:inner; "" inline)
SF_MESH_BESIDE = "sf_mesh_beside"  # bool: on a slot's object: its .mesh was beside the NIF (so the export's goes beside)
SF_SOURCE = "sf_source"  # str: on a slot's object: fingerprint of its mesh, its mesh LODs and weights as imported
SF_VERTEX = "sf_vertex"  # INT point attribute of a slot's and a mesh LOD's mesh: the .mesh vertex each was imported from
SF_LOD_SOURCE = "sf_lod_source"  # str: on a mesh LOD object: fingerprint of its mesh and weights as imported
SF_LODS_KEPT = "sf_lods_kept"  # [int]: on a shape's object: slots whose mesh the import could not read (kept as stored)
SF_MAT_FILE = "sf_mat_file"  # str: on a material: the .mat file its textures came from
SF_MAT_TEXTURE = "sf_mat_texture"  # [int, int]: on an image node: the .mat object and component naming its texture

# -- actions of NIF animations (io/nif/animation_import.py) --------------------------------------
NIF_SEQUENCE = "nif_sequence"  # int: the NiControllerSequence block
NIF_NAME = "nif_name"  # str: the sequence's name as imported
NIF_FPS = "nif_fps"  # float: frames per second of the import
NIF_CYCLE_TYPE = "nif_cycle_type"  # int
NIF_FREQUENCY = "nif_frequency"  # float
NIF_FRAME_RANGE = "nif_frame_range"  # 2 floats: the frame range as imported
NIF_CHANNELS = "nif_channels"  # JSON: what each controlled block's keys were

# -- Havok animations (io/havok/animation) ---------------------------------------------------------
HKX_BONES = "hkx_bones"  # JSON: an armature's Havok skeleton bone names, in order
HKX_SKELETON = "hkx_skeleton"  # str: that skeleton's name
HKX_GAME = "hkx_game"  # str: FO4 or SSE (on the armature and on the action)
HKX_FPS = "hkx_fps"  # float: an action's frame rate
HKX_BINDING = "hkx_binding"  # JSON: skeleton name, track bones and indices, blend hint, float tracks
HKX_ANNOTATIONS = "hkx_annotations"  # JSON: [time, text]
HKX_ROOT_AXES = "hkx_root_axes"  # 6 floats: root motion up and forward
HKX_ROOT_MOTION = "hkx_root_motion"  # JSON: root motion not keyed on import (samples, duration, up, forward), written back as read

# -- Banuba .bsm2 (io/bsm2/mapping.py) -------------------------------------------------------------
BSM2_NORMAL = "bsm2_normal"  # FLOAT_VECTOR point attribute: the file's normals
BSM2_TANGENT = "bsm2_tangent"  # FLOAT_VECTOR point attribute
BSM2_TANGENT_SIGN = "bsm2_tangent_sign"  # FLOAT point attribute
BSM2_INTERVAL_NS = "bsm2_interval_ns"  # float: an action's key interval
BSM2_DURATION_NS = "bsm2_duration_ns"  # float: an action's duration
BSM2_BIND_RESIDUAL = "bsm2_bind_residual"  # 16 floats: on a bone, the scale or shear its rest cannot hold
BSM2_KEYS = "bsm2_keys"  # {"keys": zlib of float32 keys, "shape", "curves": digest}: an action's keys as the file had them
BSM2_INVERSE_BIND = "bsm2_inverse_bind"  # 16 floats: on a bone, its inverse bind matrix as the file had it
BSM2_NAME = "bsm2_name"  # {"file": bytes, "blender": str}: the file's own name where Blender's differs

# -- morphs from .tri files (io/tri), on a mesh object given them ----------------------------------
# {role (core.tri.naming): {"path", "data": the file zlib-compressed, "shape": its BodySlide shape name,
#  "vertices": the mesh's vertex count, "geometry": its geometry fingerprint, when read}}
TRI_SOURCES = "tri_sources"
# {shape key name: {"role", "kind": difference / modifier / bodyslide, "name": the morph's name in its
#  file, "index": its place there, "digest": the key's offsets as read ("" for a key given a role since)}}
TRI_MORPHS = "tri_morphs"
TRI_NEW_MORPHS = "tri_new_morphs"  # str: the role shape keys no .tri gave are written to ("AUTO" or unset: io.tri.roles.new_role)

def stamp(datablock):
    """Mark what an import made with this version of the keys."""
    datablock[NIF_SCHEMA_VERSION] = VERSION


def check_version(datablock):
    """Refuse a datablock a newer version of the extension made: its keys may mean other things."""
    found = datablock.get(NIF_SCHEMA_VERSION, 0)
    if isinstance(found, int) and found > VERSION:
        raise FormatError(
            f"{datablock.name!r} was imported by a newer version of the extension (its data version {found}, this "
            f"one reads up to {VERSION}): update the extension to export it"
        )
