"""Which models the Creation Kit can put into a precombined mesh, read from a NIF's blocks.

It crashes (an access violation; PJMail's deep dive, "Static Object Meshes That Crash the CK")
on a model holding
- a *TriShape whose vertex descriptor has the Full Precision attribute (VF 0x400, bit 54 of the
  descriptor). The deep dive's "high precision" meshes (the CK's own SCOL meshes are): a build
  that gets through smears their textures into sky-high walls ("Smeared Textures");
- a *TriShape whose shader property is not a BSLightingShaderProperty or BSEffectShaderProperty;
- a corrupt block: one the reader refuses (cut short, a count past its end) or a link from a
  node or a shape to a block the file does not have.

It leaves the model uncombined, the references using it drawn on their own (the deep dive,
"Which Cell References are Precombineable", base object exclusions), when it has
- BSXFlags with Animated (bit 0), or with Havok (bit 1) and Dynamic (bit 6) (NifSkope's names;
  a static with collision has Havok alone);
- a NiBillboardNode, NiSwitchNode, NiParticleSystem, NiParticles (or a nif.xml subclass of
  these) or BSBehaviorGraphExtraData block;
- a kept shape of no vertex or of more than 65534 (bacup group.rs: a combined shape indexes its
  vertices with 16 bits; a source instance holds 1..65534).
Shapes below a node whose name holds a marker's (EditorMarker, LRTMarker,
AnimInteractionMarker, FurnitureMarker) are not kept: the CK leaves them out (bacup group.rs).

Three more leave it uncombined, settled from bacup's baker (``bake.rs`` takes neither) and the
CK's own output (the corpus cell's 38 combined meshes: 110 records, none skinned, only
BSLightingShaderProperty shaders and no BGEM row in its ``.cdx``, no controller): a skinned
shape, a controller on any block, a shape whose shader is a BSEffectShaderProperty.
"""

from typing import NamedTuple

from ...errors import FormatError
from ...nif import NifFile
from ...nif import vertex_format as vf
from ...nif.blocks.extra_data import NiIntegerExtraData
from ...nif.blocks.nodes import NiNode
from ...nif.blocks.objects import NiAVObject, NiObjectNET
from ...nif.blocks.tri_shape import BSTriShape
from ...nif.scene_graph import parents

CRASH, UNCOMBINED = "crash", "uncombined"
EFFECTS = {CRASH: "the CK crashes on it", UNCOMBINED: "the CK leaves it uncombined"}
# Verdicts, the worst finding's: a crash outweighs staying uncombined.
COMBINABLE, CRASHES, NOT_COMBINED = "combinable", "crashes the CK", "uncombined"
UNREADABLE, NOT_FALLOUT4, PRECOMBINED_CELL = "unreadable", "not a Fallout 4 model", "a precombined cell"

SHADERS = frozenset(("BSLightingShaderProperty", "BSEffectShaderProperty"))
UNCOMBINED_BLOCKS = frozenset((
    "NiBillboardNode", "NiSwitchNode", "NiLODNode", "NiParticles", "NiParticleSystem", "NiMeshParticleSystem",
    "BSStripParticleSystem", "NiAutoNormalParticles", "NiRotatingParticles", "NiParticleMeshes",
    "BSBehaviorGraphExtraData",
))
BSX_ANIMATED, BSX_HAVOK, BSX_DYNAMIC = 0x1, 0x2, 0x40
MARKERS = ("EditorMarker", "LRTMarker", "AnimInteractionMarker", "FurnitureMarker")
MAX_SOURCE_VERTICES = 0xFFFE
CELL_BLOCKS = frozenset(("BSPackedCombinedGeomDataExtra", "BSPackedCombinedSharedGeomDataExtra"))


class Finding(NamedTuple):
    """One reason a model cannot be combined: ``rule`` (a short name), ``effect`` (CRASH or
    UNCOMBINED), ``what`` is found, and where (``block`` index, its type and name)."""

    rule: str
    effect: str
    what: str
    block: int = None
    block_type: str = None
    name: str = None

    def text(self):
        """``what`` in ``Type 'name' (block n)``, or the block alone when ``what`` is empty."""
        block = f"{self.block_type}{f' {self.name!r}' if self.name else ''} (block {self.block})"
        if self.block is None:
            return f"{self.what}: {EFFECTS[self.effect]}"
        return f"{f'{self.what} in ' if self.what else ''}{block}: {EFFECTS[self.effect]}"

    def as_dict(self):
        return {"rule": self.rule, "effect": self.effect, "block": self.block, "block_type": self.block_type,
                "name": self.name, "text": self.text()}


def at(rule, effect, what, index, block):
    return Finding(rule, effect, what, index, block.type_name, getattr(block, "name", None) or None)


class Model:
    """A read NIF as the rules see it: its shapes, which of them are kept (not below a marker
    node), each block's parent."""

    def __init__(self, nif):
        self.nif = nif
        self.parent_of = parents(nif)
        self.shapes = nif.blocks_of(BSTriShape)
        self.kept = [(index, shape) for index, shape in self.shapes if not self.in_marker(index)]

    def in_marker(self, index):
        seen = set()
        while index is not None and index not in seen:
            seen.add(index)
            name = getattr(self.nif.blocks[index], "name", None) or ""
            if any(marker in name for marker in MARKERS):
                return True
            index = self.parent_of.get(index)
        return False


# -- the rules: each yields Findings ------------------------------------------------------------
def full_precision(model):
    for index, shape in model.shapes:
        if vf.flags_of(shape.vertex_desc) & vf.FULL_PRECISION:
            yield at("full precision", CRASH, "full-precision vertices", index, shape)


def shader(model):
    blocks = model.nif.blocks
    for index, shape in model.shapes:
        link = shape.shader_property
        if link == -1:
            what = "no shader property"
        elif not 0 <= link < len(blocks):
            continue  # a link past the last block: a corrupt block
        elif blocks[link].type_name not in SHADERS:
            what = f"a shader property that is a {blocks[link].type_name} (block {link})"
        else:
            continue
        yield at("no shader", CRASH, what, index, shape)


def broken_links(model):
    blocks = model.nif.blocks
    for index, block in enumerate(blocks):
        links = []
        if isinstance(block, NiObjectNET):
            links += [*block.extra_data, block.controller]
        if isinstance(block, NiAVObject):
            links.append(block.collision_object)
        if isinstance(block, NiNode):
            links += list(block.children)
        if isinstance(block, BSTriShape):
            links += [block.skin, block.shader_property, block.alpha_property]
        missing = sorted({int(link) for link in links if not -1 <= int(link) < len(blocks)})
        if missing:
            yield at("corrupt block", CRASH, f"a link to block {missing[0]} of only {len(blocks)}", index, block)


def bsx_flags(model):
    for index, block in model.nif.blocks_of(NiIntegerExtraData):
        if block.type_name != "BSXFlags":
            continue
        value = block.integer_data
        if value & BSX_ANIMATED:
            yield at("bsxflags", UNCOMBINED, f"BSXFlags 0x{value:X} Animated", index, block)
        elif value & BSX_HAVOK and value & BSX_DYNAMIC:
            yield at("bsxflags", UNCOMBINED, f"BSXFlags 0x{value:X} Havok and Dynamic", index, block)


def unsupported_blocks(model):
    for index, block in enumerate(model.nif.blocks):
        if block.type_name in UNCOMBINED_BLOCKS:
            yield at("unsupported block", UNCOMBINED, "", index, block)


def vertex_count(model):
    for index, shape in model.kept:
        count = shape.num_vertices
        if not 0 < count <= MAX_SOURCE_VERTICES:
            yield at("vertex count", UNCOMBINED, f"{count} vertices (1 to {MAX_SOURCE_VERTICES} combine)", index, shape)


def skinned(model):
    for index, shape in model.kept:
        if shape.skinned:
            yield at("skinned", UNCOMBINED, "a skinned shape", index, shape)


def controllers(model):
    for index, block in enumerate(model.nif.blocks):
        if isinstance(block, NiObjectNET) and block.controller != -1:
            yield at("controller", UNCOMBINED, f"a controller (block {block.controller})", index, block)


def effect_shader(model):
    blocks = model.nif.blocks
    for index, shape in model.kept:
        link = shape.shader_property
        if 0 <= link < len(blocks) and blocks[link].type_name == "BSEffectShaderProperty":
            yield at("effect shader", UNCOMBINED, f"an effect shader (block {link})", index, shape)


RULES = (full_precision, shader, broken_links, bsx_flags, unsupported_blocks, vertex_count, skinned, controllers,
         effect_shader)


class MeshVerdict:
    """What the CK does with one model: ``verdict`` (COMBINABLE, CRASHES, NOT_COMBINED, or why
    the rules do not apply: UNREADABLE, NOT_FALLOUT4, PRECOMBINED_CELL), the ``findings``
    behind it, ``error`` (what made it unreadable) and ``notes`` (facts that change no verdict)."""

    def __init__(self, findings=(), verdict=None, error=None, notes=()):
        self.findings = list(findings)
        self.error = error
        self.notes = list(notes)
        if verdict is None:
            effects = {finding.effect for finding in self.findings}
            verdict = CRASHES if CRASH in effects else NOT_COMBINED if UNCOMBINED in effects else COMBINABLE
        self.verdict = verdict

    def line(self):
        """The findings, or the error, after the verdict: one line."""
        details = [finding.text() for finding in self.findings] + ([self.error] if self.error else []) + self.notes
        return "; ".join([self.verdict, *details])

    def as_dict(self):
        return {"verdict": self.verdict, "findings": [finding.as_dict() for finding in self.findings],
                "error": self.error, "notes": self.notes}


def check_nif(nif):
    """The MeshVerdict of a read NifFile."""
    if nif.header.game != "FO4":
        return MeshVerdict(verdict=NOT_FALLOUT4, notes=[f"a {nif.header.game} file: the rules are Fallout 4's"])
    if any(block.type_name in CELL_BLOCKS for block in nif.blocks):
        return MeshVerdict(verdict=PRECOMBINED_CELL, notes=["the CK's own output, not a model a STAT places"])
    model = Model(nif)
    findings = [finding for rule in RULES for finding in rule(model)]
    notes = []
    if not model.kept:
        notes.append("only marker geometry: nothing to combine" if model.shapes else "no shape: nothing to combine")
    return MeshVerdict(findings, notes=notes)


def static_model(nif):
    """Whether a NifFile is a Fallout 4 model a STAT could place: no skinned shape, not a cell."""
    return (nif.header.game == "FO4" and not any(shape.skinned for _, shape in nif.blocks_of(BSTriShape))
            and not any(block.type_name in CELL_BLOCKS for block in nif.blocks))


def export_warnings(nif):
    """What an exporter of a static Fallout 4 model warns of: one line a reason the CK would crash
    on it or leave it uncombined, naming the block and the rule."""
    if not static_model(nif):
        return []
    return [f"Creation Kit precombines: {finding.text()}" for finding in check_nif(nif).findings]


def read_and_check(data, path=None):
    """(NifFile or None, MeshVerdict) of a NIF's bytes: a block the reader refuses is a corrupt
    block (the CK crashes on it), any other refusal makes the file unreadable."""
    try:
        nif = NifFile.from_bytes(bytearray(data), path=path)
    except FormatError as error:
        if error.block is None:
            return None, MeshVerdict(verdict=UNREADABLE, error=error.message)
        finding = Finding("corrupt block", CRASH, f"a corrupt block ({error.message})", error.block, error.block_type)
        return None, MeshVerdict([finding])
    return nif, check_nif(nif)


def check_bytes(data, path=None):
    return read_and_check(data, path)[1]


def check_path(path):
    """The MeshVerdict of a loose NIF or of ``ARCHIVE.ba2:inner/path``; a file that cannot be
    read at all is UNREADABLE, with the reason."""
    from ...archives.data import read_path

    try:
        data = read_path(path)
    except FormatError as error:
        return MeshVerdict(verdict=UNREADABLE, error=str(error))
    except OSError as error:
        return MeshVerdict(verdict=UNREADABLE, error=f"cannot be read: {error.strerror or error}")
    return check_bytes(data, path)
