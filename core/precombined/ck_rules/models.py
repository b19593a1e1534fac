"""Models as a Data folder has them (loose files win, then the archives in load order), each
read and judged once however many bases use it."""

from pathlib import Path

from ...archives.data import DataFiles
from ...errors import FormatError
from .groups import shape_bounds
from .meshes import UNREADABLE, MeshVerdict, read_and_check

MESHES = "meshes"


def model_key(model):
    """A MODL path as the Data folder finds it: under meshes, lower case, forward slashes."""
    key = model.replace("\\", "/").strip("/").lower()
    return key if key.startswith(f"{MESHES}/") else f"{MESHES}/{key}"


class ModelCheck:
    """One model: ``where`` it was found (a loose path or ``ARCHIVE:inner path``, None when
    nowhere), its MeshVerdict (None when not found) and its shapes' ``bounds`` (groups)."""

    def __init__(self, where=None, verdict=None, bounds=()):
        self.where, self.verdict, self.bounds = where, verdict, bounds


class Models:
    """The models of one or more Data folders, checked on first use."""

    def __init__(self, data_folders):
        self.files = DataFiles(data_folders)
        self.checked = {}

    @property
    def problems(self):
        return self.files.problems

    def locate(self, model):
        found = self.files.locate(model_key(model), MESHES)
        return None if found is None else self.files.name(found)

    def check(self, model):
        key = model_key(model)
        if key not in self.checked:
            self.checked[key] = self._check(key)
        return self.checked[key]

    def _check(self, key):
        found = self.files.locate(key, MESHES)
        if found is None:
            return ModelCheck()
        where = self.files.name(found)
        try:
            data = found.read_bytes() if isinstance(found, Path) else found[0].read(found[1])
        except (FormatError, OSError) as error:
            return ModelCheck(where, MeshVerdict(verdict=UNREADABLE, error=str(error)))
        nif, verdict = read_and_check(data, where)
        self.keep(key, nif)
        return ModelCheck(where, verdict, shape_bounds(nif) if nif is not None else ())

    def keep(self, key, nif):
        """What a subclass keeps of a model read (the plan keeps only its verdict and bounds)."""

    def close(self):
        self.files.close()


def load_order_models(data_folder, plugins_txt=None):
    """(models, problems) of every STAT and SCOL base of a load order: [{"model": its MODL,
    "file": where the Data folder has it (None when nowhere), "bases": how many bases use it}],
    in the order of their keys; each model once, however many bases use it."""
    from ...plugin.base_models import base_models
    from ...plugin.load_order import LoadOrder

    order = LoadOrder(data_folder, plugins_txt)
    bases, problems = base_models(order)
    used = {}
    for _, _, model in bases.values():
        if model:
            key = model_key(model)
            if key not in used:
                used[key] = {"model": model, "file": None, "bases": 0}
            used[key]["bases"] += 1
    files = Models([order.data_folder])
    try:
        for item in used.values():
            item["file"] = files.locate(item["model"])
    finally:
        files.close()
    return [used[key] for key in sorted(used)], order.problems + problems + files.problems
