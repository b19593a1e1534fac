"""Name-to-class tables that class decorators fill (NIF block types, Havok classes)."""


class Registry:
    def __init__(self, what):
        self.what = what
        self.classes = {}

    def add(self, cls, names):
        for name in names:
            if name in self.classes:
                raise RuntimeError(f"{self.what} {name} registered twice")
            self.classes[name] = cls
        return cls

    def get(self, name, default=None):
        return self.classes.get(name, default)
