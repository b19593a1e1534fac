"""Which .tri each shape key is written to: the role its morph was read with, or the one the
user gives it; keys no .tri gave go to the object's choice for new keys."""

from ...core.tri import naming
from .. import schema

AUTO = "AUTO"
# How a NIF names its BodySlide .tri (bodyslide_link)
THROUGH_BODYTRI, BY_NAME, NEW_BODYTRI = "BODYTRI", "NAME", "NEW"
KINDS = {naming.BODYSLIDE: "bodyslide"}  # the morph kind a role writes (FaceGen: difference, or modifier as read)


def sources(obj):
    """{role: what was kept of the .tri its morphs came from} (io.tri.importer.keep_source)."""
    stored = obj.get(schema.TRI_SOURCES)
    return {} if stored is None else stored.to_dict()


def records(obj):
    stored = obj.get(schema.TRI_MORPHS)
    return {} if stored is None else stored.to_dict()


def new_role_choice(obj):
    """What the object names for its new keys: a role, or AUTO."""
    return obj.get(schema.TRI_NEW_MORPHS, AUTO)


def new_role(obj):
    """Where ``obj``'s shape keys of no .tri go: the role it names, else (AUTO) expression when a
    FaceGen file gave it morphs, BodySlide when only a BodySlide file did; None: not written."""
    chosen = new_role_choice(obj)
    if chosen in naming.ROLES:
        return chosen
    kinds = sources(obj)
    if any(role in kinds for role in naming.FACEGEN_ROLES):
        return naming.EXPRESSION
    return naming.BODYSLIDE if naming.BODYSLIDE in kinds else None


def set_new_role(obj, role):
    obj[schema.TRI_NEW_MORPHS] = role


def key_role(obj, key_name):
    """(role or None, whether a .tri gave the key)."""
    record = records(obj).get(key_name)
    if record is None:
        return new_role(obj), False
    return record["role"], record["digest"] != ""


def assign(obj, key_name, role):
    """Write the key to ``role``'s .tri from now on (encoded anew there)."""
    stored = records(obj)
    old = stored.get(key_name)
    kind = KINDS.get(role, old["kind"] if old is not None and old["kind"] != "bodyslide" else "difference")
    stored[key_name] = {"role": role, "kind": kind, "name": key_name, "index": -1, "digest": ""}
    obj[schema.TRI_MORPHS] = stored


def bodyslide_link(objects):
    """How the NIF names the BodySlide .tri of these objects' morphs: THROUGH_BODYTRI (a file was
    read through the NIF's BODYTRI), BY_NAME (each was found under the NIF's name, and no BODYTRI
    named it: the NIF stays as it was), NEW_BODYTRI (a new file: a BODYTRI naming it is added)."""
    stored = [sources(obj).get(naming.BODYSLIDE) for obj in objects]
    if any(found is not None and found.get("linked", True) for found in stored):
        return THROUGH_BODYTRI
    return BY_NAME if stored and all(found is not None for found in stored) else NEW_BODYTRI
