"""Blender's ``--command`` line from the ``bpy`` module, for those without a Blender binary:

    <python with bpy> tools/blender_command.py extension build --source-dir . --output-dir build

does what ``blender --command extension build ...`` does, with the same code (Blender's
extension add-on). tasks.py runs it for ``build`` and ``install``.
"""

import os
import sys


def main(argv):
    if argv[:1] != ["extension"]:
        sys.stderr.write("usage: blender_command.py extension ARGS (the arguments of: blender --command extension)\n")
        return 2
    import bpy  # noqa: F401 (loads Blender, whose core add-ons include the extension tool)
    from bl_pkg import bl_extension_cli

    return bl_extension_cli.cli_extension_handler(argv[1:])


if __name__ == "__main__":
    status = main(sys.argv[1:])
    sys.stdout.flush()
    sys.stderr.flush()
    # Without a normal exit: bpy can hang at interpreter exit while add-ons are registered.
    os._exit(status)
