"""The Creation Kit's verdict on an object (core.precombined.ck_rules.meshes), as the Precombined
panel shows it: for an object of an imported NIF, its file's (the reasons about its own block
first); for a copy of an imported precombined cell, its reference's model's, read from the
cell's Data folder (known when the import named the copy after its reference). Each file is
read and judged once a session: panels draw often."""

from ...core.archives.data import data_folder_of
from ...core.errors import FormatError
from ...core.precombined.ck_rules import meshes
from ...core.precombined.ck_rules.models import Models
from .. import schema
from ..nif.source import source_of, template_collection

SHOWN = 4
_judged = {}  # (what was judged, how it is told apart) -> MeshVerdict or None (a model not found)
ICONS = {meshes.CRASHES: "ERROR", meshes.NOT_COMBINED: "ERROR", meshes.COMBINABLE: "CHECKMARK"}


def _source_verdict(collection):
    key = ("source", collection.session_uid, len(collection[schema.NIF_SOURCE]))
    if key not in _judged:
        _judged[key] = meshes.check_nif(source_of(collection))
    return _judged[key]


def _copy_verdict(collection, model):
    folder = data_folder_of(collection.get(schema.NIF_PATH, ""))
    if folder is None:
        return None
    key = ("model", str(folder), model.lower())
    if key not in _judged:
        models = Models([folder])
        try:
            _judged[key] = models.check(model).verdict
        finally:
            models.close()
    return _judged[key]


def verdict_lines(obj):
    """(text, icon) lines of the object's verdict; none for an object of no import."""
    if schema.PRECOMBINED_OBJECT in obj:
        model = obj.get(schema.BASE_MODEL)
        collection = next((c for c in obj.users_collection if schema.NIF_PATH in c), None)
        if not model or collection is None:
            return [("Creation Kit: this copy's model is unknown (import the cell with its plugin)", "INFO")]
        verdict = _copy_verdict(collection, model)
        if verdict is None:
            return [(f"Creation Kit: its model {model} is not in the cell's Data folder", "INFO")]
        subject, block = f"its model {model}", None
    else:
        collection = template_collection([obj])
        if collection is None:
            return []
        try:
            verdict = _source_verdict(collection)
        except FormatError as error:  # drawn, not raised: a panel that raises draws nothing
            return [(f"Creation Kit: {error}", "ERROR")]
        subject, block = "this file", obj.get(schema.NIF_BLOCK)
        if verdict.verdict == meshes.NOT_FALLOUT4:
            return []
    lines = [(f"Creation Kit: {subject}: {verdict.verdict}", ICONS.get(verdict.verdict, "INFO"))]
    findings = sorted(verdict.findings, key=lambda finding: finding.block != block)  # this object's first
    lines += [(finding.text(), "BLANK1") for finding in findings[:SHOWN]]
    if len(findings) > SHOWN:
        lines.append((f"... and {len(findings) - SHOWN} more (cli.py precombines --meshes lists them)", "BLANK1"))
    return lines + [(text, "BLANK1") for text in ([verdict.error] if verdict.error else []) + verdict.notes]
