"""Pictures of imports, rendered headless with the bpy module (Workbench: no display, no GPU).

    .venv/bin/python tools/render_pictures.py [--check] [NAME...]    (python3 tasks.py pictures [--check])

imports the corpus files of each picture with ``cli.py import``, as its caption says, and
renders the result into docs/pictures/NAME.png; with --check, renders into a temporary folder
instead and reports each picture that differs from the committed one by more than THRESHOLD
(exit status 1), so the pictures double as a visual regression check.

    .venv/bin/python tools/render_pictures.py --blend IN.blend OUT.png [--size W H]

renders a saved .blend the same way (``python3 tasks.py main`` does, for its sample cell); where
Workbench cannot run (it needs an OpenGL driver, e.g. Mesa's EGL), with Cycles on the CPU.
"""

import argparse
import colorsys
import math
import os
import re
import subprocess
import sys
import tempfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
PICTURES_DIR = ROOT / "docs" / "pictures"
CORPUS = "../shared/corpus"  # as the captions spell it: relative to the repository root
SIZE = (640, 400)  # small PNGs (each under 200 KB): they live in the repository

# A picture has changed when more than this share of its pixels differ by more than a twentieth
# of full scale in some channel (alpha included): small enough to catch a moved, missing or
# recoloured part, large enough to pass anti-aliasing noise.
THRESHOLD = 0.005
PIXEL_TOLERANCE = 0.05

WIRE_COLOUR = (0.1, 0.75, 0.2, 1.0)  # Havok collision
BONE_COLOUR = (0.95, 0.45, 0.1, 1.0)


@dataclass
class Picture:
    name: str
    title: str
    files: list  # paths (or shell patterns) under CORPUS, or names ``make`` writes into a temporary folder
    options: list = field(default_factory=list)  # more cli.py import arguments
    view: tuple = (-35.0, 25.0)  # camera azimuth (degrees from -Y towards +X) and elevation
    frame: int = None  # the scene frame to show (animations)
    see_through: float = 0.0  # when set, meshes as wire this thick (a share of the scene's size), to show bones
    bones_in_front: bool = False  # bones drawn over the (solid) meshes that hold them, as Blender's "In Front"
    zoom: float = 1.0  # the camera this much closer than where the scene's bounding sphere just fits
    make: callable = None  # (temporary folder) -> None: writes files not in the corpus

    def command(self):
        """The import command, as the caption gives it (a shell expands its patterns as paths() does)."""
        files = self.files if self.make else [f"{CORPUS}/{name}" for name in self.files]
        quoted = [f'"{arg}"' if " " in arg else arg for arg in files + self.options]
        return " ".join([".venv/bin/python", "cli.py", "import", *quoted, "--blend", f"{self.name}.blend"])

    def paths(self, folder):
        """The files to import, patterns expanded (sorted, as a shell does)."""
        if self.make:
            return [str(folder / name) for name in self.files]
        paths = []
        for name in self.files:
            found = sorted(str(path.relative_to(ROOT)) for path in ROOT.glob(f"{CORPUS}/{name}"))
            if not found:
                raise SystemExit(f"render_pictures: {self.name}: no file {CORPUS}/{name} (the corpus belongs beside the repository)")
            paths += found
        return paths


def xbox_smg(folder):
    """New Vegas's 22smg.nif in the Xbox 360 layout (tools/xbox_sample.py, as the README makes it)."""
    from xbox_sample import write_xbox_sample

    write_xbox_sample(folder / "22smg_xbox360.nif")


CK = "ck-precombined/Meshes/PreCombined"
PICTURES = [
    Picture(
        "ck_cell",
        "A Creation Kit precombined cell (Home Plate, 11 cells and the physics cell), geometry from the "
        "plugin's .csg, a colour per material, Havok collision as green wire",
        [f"{CK}/*.NIF"],
        ["--csg", f"{CORPUS}/ck-precombined/AlootHomePlate - Geometry.csg"],
        view=(-40.0, 35.0),
    ),
    Picture(
        "fo4_body",
        "A Fallout 4 skinned body (BSSubIndexTriShape, BSSkin), as wire over its armature (bones in orange)",
        ["pynifly/tests/tests/FO4/BTBaseMaleBody.nif"],
        view=(150.0, 10.0),
        see_through=0.0004,
    ),
    Picture(
        "bsm2_frame",
        "A Banuba .bsm2 mesh (Cut.bsm2, a head), skinned to its armature of two bones (in orange, drawn in front) "
        "and shown in the pose its animation 'Take 001' holds (its keys are all the same)",
        ["bsm2/Cut.bsm2"],
        view=(-40.0, 10.0),
        bones_in_front=True,
        zoom=1.3,
    ),
    Picture(
        "xbox_fnv",
        "An Xbox 360 New Vegas mesh (22smg.nif, written in the console layout by tests/xbox_writer.py: "
        "big-endian, half floats, strips in the skin partition) imported as the PC file it converts to, its Havok "
        "collision as wire",
        ["22smg_xbox360.nif"],
        view=(-60.0, 20.0),
        make=xbox_smg,
    ),
]


# -- rendering ------------------------------------------------------------------------------------
def colour_of(name):
    """A light colour of its own for each mesh, the same on every run."""
    hue = (zlib.crc32(name.encode()) % 360) / 360.0
    return (*colorsys.hsv_to_rgb(hue, 0.35, 0.9), 1.0)


def show_wires_and_bones(bpy, scene, scale, see_through=0.0, bones_in_front=False):
    """Workbench renders every mesh solid and no armature: collision objects (drawn as wire in the
    viewport) get a wireframe modifier, armatures a stand-in mesh of skinned bone segments (drawn
    over everything with ``bones_in_front``)."""
    for obj in list(scene.objects):
        if obj.type == "MESH" and obj.display_type in {"WIRE", "BOUNDS"}:
            add_wire(obj, scale * 0.0006)
            obj.color = WIRE_COLOUR
            obj.hide_render = False  # the importer keeps collision out of renders
        elif obj.type == "MESH":
            material = obj.active_material
            # A colour per material, whichever cell's copy (".001") of it the object has.
            obj.color = colour_of(re.sub(r"\.\d{3}$", "", material.name) if material else obj.data.name)
            if see_through:
                add_wire(obj, scale * see_through)
        elif obj.type == "ARMATURE":
            add_bone_mesh(bpy, scene, obj, bones_in_front)


def add_wire(obj, thickness):
    wire = obj.modifiers.new("picture wire", "WIREFRAME")
    wire.thickness = thickness
    wire.use_relative_offset = False


def add_bone_mesh(bpy, scene, armature, in_front=False):
    """Each posed bone as Blender draws it, an octahedron from head to tail."""
    points, faces = [], []
    for bone in armature.pose.bones:
        head = np.array(armature.matrix_world @ bone.head)
        axis = np.array(armature.matrix_world @ bone.tail) - head
        length = float(np.linalg.norm(axis))
        if length < 1e-6:
            continue
        side = np.cross(axis, (0.0, 0.0, 1.0) if abs(axis[2]) < 0.9 * length else (1.0, 0.0, 0.0))
        side *= 0.1 * length / np.linalg.norm(side)
        up = np.cross(axis, side) / length
        waist = head + 0.1 * axis
        first = len(points)
        points += [head, head + axis, waist + side, waist + up, waist - side, waist - up]
        for a, b in ((2, 3), (3, 4), (4, 5), (5, 2)):
            faces += [(first, first + a, first + b), (first + 1, first + b, first + a)]
    if not faces:
        return
    mesh = bpy.data.meshes.new(f"{armature.name} bones")
    mesh.from_pydata([tuple(point) for point in points], [], faces)
    bones = bpy.data.objects.new(mesh.name, mesh)
    scene.collection.objects.link(bones)
    bones.color = BONE_COLOUR
    bones.show_in_front = in_front


def world_corners(bpy, scene):
    """The world-space bounding-box corners of the solid meshes (of the wire ones when there are
    none): a cell's collision may reach over cells that are not imported."""
    depsgraph = bpy.context.evaluated_depsgraph_get()
    solid, wire = [], []
    for obj in scene.objects:
        if obj.type == "MESH" and obj.visible_get():
            evaluated = obj.evaluated_get(depsgraph)
            matrix = np.array(evaluated.matrix_world)
            box = np.array([tuple(corner) for corner in evaluated.bound_box])
            (wire if obj.display_type in {"WIRE", "BOUNDS"} else solid).append(box @ matrix[:3, :3].T + matrix[:3, 3])
    return np.concatenate(solid or wire or [np.zeros((1, 3))])


def aim_camera(bpy, scene, corners, view, size, zoom=1.0):
    """A camera looking at the middle of ``corners`` from ``view``, far enough to see them all
    (``zoom`` times closer: the bounding sphere fits, while a compact shape looks small in it)."""
    from mathutils import Vector

    camera = bpy.data.objects.new("picture camera", bpy.data.cameras.new("picture camera"))
    scene.collection.objects.link(camera)
    scene.camera = camera
    centre = (corners.min(axis=0) + corners.max(axis=0)) / 2
    radius = max(float(np.linalg.norm(corners - centre, axis=1).max()), 1e-3)
    azimuth, elevation = (math.radians(angle) for angle in view)
    direction = Vector((math.sin(azimuth) * math.cos(elevation), -math.cos(azimuth) * math.cos(elevation), math.sin(elevation)))
    field_of_view = camera.data.angle * min(size) / max(size)  # the narrower side's
    distance = radius / math.sin(field_of_view / 2) / zoom
    camera.location = Vector(centre) + direction * distance
    camera.rotation_euler = (-direction).to_track_quat("-Z", "Y").to_euler()
    camera.data.clip_start = distance / 1000
    camera.data.clip_end = distance + radius * 2


def workbench_works():
    """Whether Workbench can render here. It needs an OpenGL context (a GPU driver or Mesa's
    software EGL); without one Blender aborts the whole process, so a child process tries first."""
    probe = subprocess.run([sys.executable, __file__, "--probe"], capture_output=True, timeout=300)
    return probe.returncode == 0


def probe():
    """A tiny Workbench render (the child process of workbench_works)."""
    import bpy

    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    scene.camera = bpy.data.objects.new("probe", bpy.data.cameras.new("probe"))
    scene.collection.objects.link(scene.camera)
    scene.render.engine = "BLENDER_WORKBENCH"
    scene.render.resolution_x = scene.render.resolution_y = 8
    bpy.ops.render.render()
    return 0


def use_cycles(bpy, scene):
    """Cycles on the CPU, lit by a grey sky and a sun: no object colours, so the materials show."""
    scene.render.engine = "CYCLES"
    scene.cycles.device = "CPU"
    scene.cycles.samples = 16
    scene.cycles.use_denoising = False
    world = bpy.data.worlds.new("picture sky")
    world.color = (0.6, 0.6, 0.6)
    scene.world = world
    sun = bpy.data.objects.new("picture sun", bpy.data.lights.new("picture sun", "SUN"))
    sun.data.energy = 3.0
    sun.rotation_euler = scene.camera.rotation_euler
    scene.collection.objects.link(sun)


def render(bpy, output, view=(-35.0, 25.0), size=SIZE, see_through=0.0, engine="BLENDER_WORKBENCH", bones_in_front=False,
           zoom=1.0):
    """Render the current scene into the PNG ``output`` with ``engine`` (Workbench, or Cycles)."""
    scene = bpy.context.scene
    corners = world_corners(bpy, scene)
    scale = float(np.linalg.norm(corners.max(axis=0) - corners.min(axis=0))) or 1.0
    show_wires_and_bones(bpy, scene, scale, see_through, bones_in_front)
    aim_camera(bpy, scene, world_corners(bpy, scene), view, size, zoom)
    if engine == "CYCLES":
        use_cycles(bpy, scene)
    else:
        scene.render.engine = "BLENDER_WORKBENCH"
    scene.display.shading.light = "STUDIO"
    scene.display.shading.color_type = "OBJECT"
    scene.display.shading.show_cavity = True
    scene.display.shading.show_object_outline = True
    scene.display.render_aa = "8"
    scene.render.film_transparent = True
    scene.render.resolution_x, scene.render.resolution_y = size
    scene.render.resolution_percentage = 100
    scene.render.image_settings.file_format = "PNG"
    scene.render.image_settings.color_mode = "RGBA"
    scene.render.image_settings.compression = 100  # the smallest files: the pictures live in the repository
    scene.render.filepath = str(output)
    bpy.ops.render.render(write_still=True)


def pixels(bpy, path):
    """An image's RGBA pixels as a (height, width, 4) float array."""
    image = bpy.data.images.load(str(path))
    try:
        values = np.empty(len(image.pixels), np.float32)
        image.pixels.foreach_get(values)
        return values.reshape(image.size[1], image.size[0], 4)
    finally:
        bpy.data.images.remove(image)


def changed_share(bpy, new, old):
    """The share of pixels that differ beyond PIXEL_TOLERANCE (1.0 when the sizes differ)."""
    a, b = pixels(bpy, new), pixels(bpy, old)
    if a.shape != b.shape:
        return 1.0
    return float((np.abs(a - b).max(axis=2) > PIXEL_TOLERANCE).mean())


def take(bpy, cli, picture, folder, output, size=SIZE):
    """Import the picture's files as its caption says, then render; returns what cli.py printed
    (an import that fails raises, naming the picture)."""
    if picture.make:
        picture.make(folder)
    blend = folder / f"{picture.name}.blend"
    status = cli.main(["import", *picture.paths(folder), *picture.options, "--blend", str(blend)])
    if status:
        raise SystemExit(f"render_pictures: {picture.name}: the import failed (status {status})")
    if picture.frame is not None:
        bpy.context.scene.frame_set(picture.frame)
    render(bpy, output, picture.view, size, picture.see_through, bones_in_front=picture.bones_in_front, zoom=picture.zoom)


def main(argv):
    parser = argparse.ArgumentParser(prog="render_pictures.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help="pictures to render (default: all)")
    parser.add_argument("--check", action="store_true", help="compare with the committed pictures instead")
    parser.add_argument("--against", type=Path, default=PICTURES_DIR, help="--check: the pictures to compare with")
    parser.add_argument("--output", type=Path, default=PICTURES_DIR, help="where to write the pictures")
    parser.add_argument("--blend", nargs=2, metavar=("IN.blend", "OUT.png"), help="render a saved .blend")
    parser.add_argument("--size", nargs=2, type=int, default=SIZE, metavar=("W", "H"))
    parser.add_argument("--probe", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.probe:
        return probe()
    # Paths as given, from the working folder (the pictures' own paths are from the repository's).
    args.against, args.output = args.against.resolve(), args.output.resolve()
    args.blend = [Path(path).resolve() for path in args.blend] if args.blend else None
    workbench = workbench_works()
    if args.blend and not workbench:
        print("render_pictures: Workbench cannot render here (no OpenGL driver): rendering with Cycles", file=sys.stderr)
    elif not workbench:
        print("render_pictures: Workbench cannot render here (it needs an OpenGL driver, e.g. Mesa's EGL); "
              "the pictures are Workbench renders", file=sys.stderr)
        return 1
    os.chdir(ROOT)  # the captions' paths are relative to the repository root
    sys.path.insert(0, str(ROOT))
    import cli

    cli.load_package()
    import bpy

    if args.blend:
        blend, output = args.blend
        bpy.ops.wm.open_mainfile(filepath=str(blend))
        render(bpy, output, size=tuple(args.size), engine="BLENDER_WORKBENCH" if workbench else "CYCLES")
        return 0
    unknown = set(args.names) - {picture.name for picture in PICTURES}
    if unknown:
        parser.error(f"no picture named {', '.join(sorted(unknown))}; there are {', '.join(p.name for p in PICTURES)}")
    changed = []
    with tempfile.TemporaryDirectory(prefix="precombined_nif-pictures-") as tmp:
        for picture in PICTURES:
            if args.names and picture.name not in args.names:
                continue
            committed = args.against / f"{picture.name}.png"
            output = Path(tmp) / f"{picture.name}.png" if args.check else args.output / f"{picture.name}.png"
            output.parent.mkdir(parents=True, exist_ok=True)
            take(bpy, cli, picture, Path(tmp), output, tuple(args.size))
            if not args.check:
                print(f"render_pictures: {output}: {picture.command()}")
            elif not committed.is_file():
                changed.append(f"{picture.name}: no picture {committed} to compare with")
            else:
                share = changed_share(bpy, output, committed)
                verdict = "changed" if share > THRESHOLD else "unchanged"
                print(f"render_pictures: {picture.name}: {verdict}, {share:.2%} of pixels differ (threshold {THRESHOLD:.2%})")
                if share > THRESHOLD:
                    changed.append(f"{picture.name}: {share:.2%} of pixels differ from {committed}")
    for line in changed:
        print(f"render_pictures: {line}", file=sys.stderr)
    return 1 if changed else 0


if __name__ == "__main__":
    status = main(sys.argv[1:])
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)  # bpy can hang at interpreter exit while add-ons are registered
