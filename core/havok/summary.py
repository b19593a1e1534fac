"""What ``cli.py info --json`` reports about a bhkPhysicsSystem or bhkRagdollSystem block."""

from ..errors import FormatError
from .classes.physics_system import PhysicsSystemData
from .container import Packfile
from .shapes.base import summary_of
from .tagfile import describe, is_tagfile


def body_summary(system, body):
    material = system.material_of(body)
    return {
        "motion": system.motion_type(body),
        "layer": body.layer,
        "mass": round(system.mass(body), 4),
        "friction": round(material.friction, 2),  # hkHalf keeps 8 significant bits
        "restitution": round(material.bounciness, 2),
        "shape": summary_of(body.shape),
    }


def system_summary(index, block):
    """{block, kind, constraints, bodies}; {block, kind, error} when the packfile cannot be read;
    {block, kind, kept} for a Havok tagfile (Starfield), which is carried unchanged."""
    entry = {"block": index, "kind": block.kind}
    if is_tagfile(block.packfile):
        entry["kept"] = describe(block.packfile)
        return entry
    try:
        system = Packfile.from_bytes(block.packfile).root
        if not isinstance(system, PhysicsSystemData):
            raise FormatError(f"the packfile holds a {system.class_name}, not physics system data")
        entry["constraints"] = len(system.constraints)
        entry["bodies"] = [body_summary(system, body) for body in system.bodies]
    except FormatError as error:
        entry["error"] = str(error)
    return entry
