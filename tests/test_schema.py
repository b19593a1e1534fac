"""The keys stored in .blend files are spelled in io/schema.py alone, and keep the previous
release's spellings (a .blend it saved still exports: tests/blender/test_schema_blender.py)."""

import ast

from release_keys import CONSTRAINT_LIMITS, DROPPED, PREVIOUS_RELEASE
from support import ROOT

from precombined_nif.core.havok.constraints import LIMITS
from precombined_nif.io import schema

# The Blender side (the codec knows no .blend), and the command lines' Blender commands.
BLENDER_SIDE = ("io", "operators", "ui", "commands/blender.py", "preferences.py", "__init__.py")


def schema_keys():
    """{name: key} of every str constant of the schema."""
    return {name: value for name, value in vars(schema).items() if name.isupper() and isinstance(value, str)}


def spelled_keys(path, keys):
    """(line, key) of every string constant of ``path`` that is one of ``keys``, but docstrings
    and keyword arguments' values: those name other things (the root node of a new cell is
    ``name="precombined"``), keys are subscripts, getters' arguments, tested with ``in``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef)) and node.body
                  and isinstance(node.body[0], ast.Expr)}  # fmt: skip
    named = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.keyword)}
    return [(node.lineno, node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and node.value in keys and id(node) not in docstrings | named]  # fmt: skip


def blender_side_modules():
    for part in BLENDER_SIDE:
        path = ROOT / part
        yield from sorted(path.rglob("*.py")) if path.is_dir() else [path]


def test_every_key_is_spelled_in_the_schema_only():
    keys = set(schema_keys().values())
    found = [f"{path.relative_to(ROOT)}:{line}: {key!r}" for path in blender_side_modules()
             if path != ROOT / "io" / "schema.py" for line, key in spelled_keys(path, keys)]  # fmt: skip
    assert found == []


def test_the_scan_finds_a_key_spelled_elsewhere(tmp_path):
    """What the test above looks for: a key in a subscript, a call, a comparison; not in a docstring."""
    path = tmp_path / "module.py"
    path.write_text('"""Stores nif_block."""\n\ndef f(obj):\n    """nif_block"""\n'
                    '    return obj["nif_block"], obj.get("nif_path"), "nif_root" in obj, Node(name="nif_type")\n')
    assert spelled_keys(path, set(schema_keys().values())) == [(5, "nif_block"), (5, "nif_path"), (5, "nif_root")]


def test_names_are_their_keys_in_capitals_and_keys_are_unique():
    keys = schema_keys()
    assert [name for name, key in keys.items() if name != key.upper() and name != "HAVOK_LIMIT_PREFIX"] == []
    assert len(set(keys.values())) == len(keys)


def test_the_previous_release_keys_are_all_kept():
    kept = set(schema_keys().values()) | {schema.constraint_limit(limit) for limits in LIMITS.values() for limit in limits}
    assert PREVIOUS_RELEASE - DROPPED - kept == set()
    assert DROPPED & kept == set()
    # the limits the release list spells are those core names
    assert set(CONSTRAINT_LIMITS) == {limit for limits in LIMITS.values() for limit in limits}


def test_the_new_keys_are_these():
    """Adding keys is allowed (then this list grows); here: the stamp, the limits' prefix, and
    the keys of issue 36 (collision left out, lists under MOPP trees, shapes kept as their
    blocks; LOD shapes' faces), issue 31 (a cell's export preview), issue 34 (Starfield LODs,
    meshes and materials) and issue 35 (a mesh's .tri morphs: the files read, each key's morph,
    where new keys go)."""
    assert set(schema_keys().values()) - PREVIOUS_RELEASE == {
        schema.NIF_SCHEMA_VERSION, schema.HAVOK_LIMIT_PREFIX,
        schema.NIF_COLLISION_LEFT_OUT, schema.HAVOK_MOPP, schema.NIF_SHAPE, schema.HAVOK_SHAPE_SOURCE,
        schema.NIF_LOD_LEVEL, schema.PRECOMBINED_EXPORT_PREVIEW,
        schema.SF_LOD_SLOT, schema.SF_MESH_LOD, schema.SF_MESH_FILE, schema.SF_SOURCE, schema.SF_LODS_KEPT,
        schema.SF_MAT_FILE, schema.SF_MAT_TEXTURE,
        schema.TRI_SOURCES, schema.TRI_MORPHS, schema.TRI_NEW_MORPHS,
        schema.SF_VERTEX, schema.SF_LOD_SOURCE,  # issue 45: Starfield mesh LODs keep the slot's vertices
        schema.SF_MESH_BESIDE,  # a .mesh found beside its NIF is written beside the exported NIF
        # issue 41: a whole cell's import
        schema.CELL_DATA_FOLDER, schema.CELL_PLUGINS_TXT, schema.CELL_KEY, schema.CELL_REFERENCES,
        schema.CELL_PRECOMBINED, schema.CELL_REFERENCE, schema.CELL_BASE, schema.CELL_BASE_TYPE, schema.CELL_FLAGS,
        schema.CELL_PLACEMENT, schema.CELL_COMBINED, schema.CELL_NAME, schema.CELL_PART,
        schema.HKX_ROOT_MOTION,  # issue 44: root motion kept on the action as read
        schema.BSM2_KEYS, schema.BSM2_INVERSE_BIND,  # issue 44: .bsm2 keys and inverse binds as the file had them
    }
