"""Base models as a build reads them: each MODL found in the Data folder (loose files win, then
the archives in load order) and read once, with its verdict and its shapes' bounds
(ck_rules.models), whatever number of bases and references use it."""

from ..ck_rules.models import Models, model_key


class ModelSource(Models):
    """The models of Data folders: ``check`` as the plan asks, ``nif`` the NifFile read (None
    when the model is not found or cannot be read)."""

    def __init__(self, data_folders):
        super().__init__(data_folders)
        self.nifs = {}

    def keep(self, key, nif):
        self.nifs[key] = nif

    def nif(self, model):
        self.check(model)
        return self.nifs.get(model_key(model))
