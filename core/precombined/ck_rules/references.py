"""Which placed references the Creation Kit combines, from their records and their bases'.

Only a REFR whose base is a STAT or a SCOL is combined (PJMail's deep dive, "Which Cell
References are Precombineable"), and not when the reference
- is deleted (record flag 0x20) or initially disabled (0x800) (the deep dive; bacup
  precombine.rs ``reference_gate``);
- has an enable parent (XESP), an attach ref (XATR), an emittance (XEMI) or a location ref type
  (XLRT, the usual way to keep one out) (the deep dive), scripts (VMAD) or is a primitive (XPRM)
  (bacup ``reference_gate``, the CK's own test);
- has a linked reference (XLKR) whose keyword is not MultirefLOD, or another reference links to
  it (the deep dive; bacup leaves every linked one out);
or when its base has a forced location ref type (FTYP) (the deep dive) or is flagged a marker
(record flag 0x800000, bacup records.rs), or its model crashes the CK or stays uncombined
(``meshes``). Two things the CK gets wrong in what it does combine (the deep dive, "CK
Precombine Generation Bugs"): it ignores a material swap set on the base only (MODS; the
combined mesh shows the model's own textures) and the reference's alpha (XALP).

Nor when its base can be scrapped in the workshop: a constructible object (COBJ) creates it
(CNAM), directly or through a form list (FLST) holding it (public notes on precombine
exclusions: "If the created object of a scrap recipe is a formlist with the object in it, that
counts, too. Regular recipes most certainly count, too"). The corpus cell shows it: the CK's
XCRI lists none of the 23 references of AlootHomePlate.esp's own posters, carpet runner,
chemistry shelf and tool racks, whose bases its scrap recipes create (through form lists but
the shelf), while its wood basket, of no recipe, is combined; nothing else in their records,
their models' blocks or collision sets them apart, and their records' stamps (2015-2016) are
older than the CELL's PCMB (2021-08-02).
"""

DELETED = 0x20
INITIALLY_DISABLED = 0x800
BASE_MARKER = 0x800000
COMBINED_BASES = ("STAT", "SCOL")
MULTIREF_LOD = "multireflod"
EXCLUDING_FIELDS = {
    "XESP": "an enable parent (XESP)",
    "XATR": "an attach ref (XATR)",
    "XEMI": "an emittance (XEMI)",
    "XLRT": "a location ref type (XLRT)",
    "VMAD": "scripts (VMAD)",
    "XPRM": "a primitive (XPRM)",
}

# Verdicts of a reference.
COMBINED, EXCLUDED, CRASHES, NEEDS = "combined", "excluded", "crashes the CK", "needs"


def reference_reasons(record):
    """Why the CK leaves a placed reference's winning record out, from the record alone."""
    reasons = []
    if record.type != "REFR":
        reasons.append(f"a placed {record.type}, not a REFR: only REFRs are combined")
    if record.flags & DELETED:
        reasons.append("deleted")
    if record.flags & INITIALLY_DISABLED:
        reasons.append("initially disabled")
    present = {kind for kind, _ in record.fields}
    reasons += [text for field, text in EXCLUDING_FIELDS.items() if field in present]
    return reasons


def linked_keywords(record):
    """The keyword FormIDs (as the record stores them) of its linked references (XLKR: keyword,
    reference)."""
    return [int.from_bytes(data[:4], "little") for kind, data in record.fields if kind == "XLKR" and len(data) >= 8]


def linked_targets(record):
    """The reference FormIDs (as the record stores them) its XLKR fields link to."""
    return [int.from_bytes(data[4:8], "little") for kind, data in record.fields if kind == "XLKR" and len(data) >= 8]


def link_reason(keyword_editor_id, keyword_text):
    """Why a linked reference keeps it out (None for MultirefLOD): ``keyword_editor_id`` is the
    keyword's EditorID ("" for no keyword)."""
    if keyword_editor_id.lower() == MULTIREF_LOD:
        return None
    return f"a linked reference (XLKR, keyword {keyword_editor_id or keyword_text})"


def base_reasons(base):
    """Why the CK leaves out every reference to this base record."""
    if base.type not in COMBINED_BASES:
        return [f"its base is of type {base.type}: only STAT and SCOL bases are combined"]
    reasons = []
    if base.field("FTYP") is not None:
        reasons.append("its base has a forced location ref type (FTYP)")
    if base.flags & BASE_MARKER:
        reasons.append("its base is flagged a marker")
    return reasons


SCRAPPABLE = "its base can be scrapped in the workshop: a constructible object (COBJ) creates it"


def created_object(recipe):
    """The created object (CNAM, as stored) of a constructible object, or None."""
    data = recipe.field("CNAM")
    return None if data is None or len(data) < 4 else int.from_bytes(data[:4], "little")


def form_list_items(form_list):
    """The FormIDs (as stored) a form list holds (LNAM)."""
    return [int.from_bytes(data[:4], "little") for kind, data in form_list.fields if kind == "LNAM" and len(data) >= 4]


def reference_notes(record, base):
    """What the CK gets wrong in combining this reference."""
    present = {kind for kind, _ in record.fields}
    notes = []
    if base is not None and base.field("MODS") is not None and "XMSP" not in present:
        notes.append("its base's material swap (MODS) is ignored by the CK: the combined mesh shows the model's textures")
    if "XALP" in present:
        notes.append("its alpha (XALP) is ignored by the CK")
    return notes


def scol_components(scol):
    """The component STAT FormIDs (as stored) of a SCOL: each ONAM followed by its placements."""
    return [int.from_bytes(data[:4], "little") for kind, data in scol.fields if kind == "ONAM" and len(data) >= 4]
