"""Bodies added to and replaced in physics systems: the fields the game's files hold for each
motion type, and everything a replaced body's neighbours hold kept."""

import numpy as np
import pytest
from packfiles import nif_systems

from precombined_nif.core.errors import FormatError
from precombined_nif.core.havok import Packfile, add_body, replace_body
from precombined_nif.core.havok.classes.physics_system import PhysicsSystemData, half_to_float
from precombined_nif.core.havok.shapes.convex import ConvexPolytopeShape, SphereShape

BOX = [[x, y, z] for x in (-10, 10) for y in (-10, 10) for z in (0, 30)]


def round_trip(system):
    written = Packfile(system).to_bytes()
    assert Packfile.from_bytes(written).to_bytes() == written
    return Packfile.from_bytes(written).root


def test_keyframed_body_is_like_the_games():
    """Keyframed bodies of the corpus: motion properties id 0xFFFF and none stored, zero inverse
    mass and inertia, body flags clear."""
    system = PhysicsSystemData()
    add_body(system, ConvexPolytopeShape.build(BOX), motion="keyframed", position=(0, 0, 70))
    again = round_trip(system)
    (body,) = again.bodies
    motion = again.motion_of(body)
    assert again.motion_type(body) == "keyframed" and len(again.motion_properties) == 0
    assert motion["motion_properties_id"] == 0xFFFF and body.flags == 0
    assert not motion["inverse_inertia_local"].any() and motion["inverse_mass"] == 0
    assert np.allclose(motion["center_of_mass_world"][:3], body.position[:3])


def test_corpus_keyframed_bodies_match(corpus):
    for name, (_, data) in nif_systems().items():
        system = Packfile.from_bytes(data).root
        for body in getattr(system, "bodies", []):
            if system.kind == "physics" and system.motion_type(body) == "keyframed":
                motion = system.motion_of(body)
                assert motion["motion_properties_id"] == 0xFFFF and body.flags == 0, name
                assert not motion["inverse_inertia_local"].any(), name


def two_body_system():
    system = PhysicsSystemData()
    add_body(system, ConvexPolytopeShape.build(BOX), motion="dynamic", mass=5.0, layer=5, friction=0.3)
    add_body(system, SphereShape.build(4.0), motion="keyframed", layer=8)
    add_body(system, ConvexPolytopeShape.build(BOX, 1.0), layer=1, restitution=0.9)
    system.bodies[0].collision_filter_info |= 0x1200
    system.materials[0].restitution_combine_policy = 3
    system.motion_properties[0]["linear_damping"] = 0.75
    return round_trip(system)


@pytest.mark.parametrize("motion", ["static", "dynamic", "keyframed"])
def test_replace_body_keeps_the_others(motion):
    system = two_body_system()
    new_shape = ConvexPolytopeShape.build(np.array(BOX) * 2)
    rebuilt = round_trip(
        replace_body(system, 0, new_shape, motion=motion, mass=7.0, layer=6, friction=0.6, restitution=0.2)
    )
    assert len(rebuilt.bodies) == 3 and len(rebuilt.materials) == 3
    moving = [body for body in rebuilt.bodies if rebuilt.motion_type(body) != "static"]
    assert len(rebuilt.motion_cinfos) == len(moving)
    assert len(rebuilt.motion_properties) == (motion == "dynamic")
    body = rebuilt.bodies[0]
    assert rebuilt.motion_type(body) == motion and body.layer == 6
    assert body.collision_filter_info & ~0xFF == 0x1200  # bits above the layer kept
    material = rebuilt.material_of(body)
    assert half_to_float(material.dynamic_friction) == pytest.approx(0.6, abs=0.005)
    assert material.restitution_combine_policy == 3  # kept from the replaced body's material
    if motion == "dynamic":
        assert rebuilt.mass(body) == pytest.approx(7.0)
        assert rebuilt.motion_properties[0]["linear_damping"] == 0.75  # its motion properties kept
    assert len(body.shape.mesh()[1]) == 12 and np.ptp(body.shape.mesh()[0][:, 0]) == pytest.approx(40, abs=1e-3)
    for number in (1, 2):
        old, new = system.bodies[number], rebuilt.bodies[number]
        assert new.shape.encode()[0] == old.shape.encode()[0]
        assert rebuilt.motion_type(new) == system.motion_type(old) and new.layer == old.layer
        assert rebuilt.material_of(new).restitution == system.material_of(old).restitution
        if system.motion_of(old) is not None:
            assert rebuilt.motion_of(new).tobytes() == system.motion_of(old).tobytes()
    assert len(rebuilt.referenced_objects) == 3 and rebuilt.referenced_objects[0] is rebuilt.bodies[0].shape


def test_replace_body_in_a_corpus_system_round_trips(corpus):
    """Replacing a static body by itself with its own options gives back what it held."""
    checked = 0
    for name, (_, data) in nif_systems().items():
        system = Packfile.from_bytes(data).root
        if system.kind != "physics" or len(system.bodies) != 1 or system.motion_type(system.bodies[0]) != "static":
            continue
        body = system.bodies[0]
        material = system.material_of(body)
        options = {
            "layer": body.layer,
            "friction": half_to_float(material.dynamic_friction),
            "restitution": half_to_float(material.restitution),
            "position": np.asarray(body.position[:3], np.float64) * 69.99125,
            "rotation": body.orientation,
        }
        packfile = Packfile.from_bytes(data)
        packfile.root = replace_body(system, 0, body.shape, **options)
        again = Packfile.from_bytes(packfile.to_bytes()).root
        assert vars(again.materials[0]).keys() == vars(material).keys()
        assert all(np.array_equal(getattr(again.materials[0], key), value) for key, value in vars(material).items()), name
        new = again.bodies[0]
        for key, value in vars(body).items():
            if key == "orientation":  # normalised again: within float rounding
                assert np.allclose(new.orientation, value, atol=1e-7), name
            elif key != "shape":
                assert np.array_equal(getattr(new, key), value), (name, key)
        assert new.shape.encode()[0] == body.shape.encode()[0]
        checked += 1
    assert checked >= 20


def rotation_matrix(q):
    """The rotation of unit quaternion (x, y, z, w), computed here."""
    x, y, z, w = q
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])  # fmt: skip


@pytest.mark.parametrize("motion", ["static", "keyframed"])
def test_replace_body_keeps_the_position_w_and_the_orientation_sign(motion):
    """A position's w (what a tool's transform left, as the CK's -6.9e-10) is no option, and q
    and -q turn alike: a body built anew keeps the w and the sign its file has, moved or turned."""
    system = PhysicsSystemData()
    add_body(system, SphereShape.build(4.0), motion=motion, position=(70, 0, 0))
    body = system.bodies[0]
    body.position = (*body.position[:3], np.float32(-6.869790292185485e-10).item())
    body.orientation = (0.0, 0.0, 0.6, -0.8)
    if motion == "keyframed":
        system.motion_cinfos["orientation"][0] = body.orientation
    system = round_trip(system)
    turned = (0.0, 0.0, 0.70710678, -0.70710678)  # a further turn about z, given with w < 0
    for rotation in (system.bodies[0].orientation, turned, tuple(-np.array(turned))):
        again = round_trip(replace_body(system, 0, SphereShape.build(4.0), motion=motion, position=(140, 7, 0), rotation=rotation))
        new = again.bodies[0]
        assert new.position[3] == np.float32(-6.869790292185485e-10)
        assert np.allclose(np.array(new.position[:3]) * 69.99125, (140, 7, 0), atol=1e-4)
        assert new.orientation[3] < 0 and np.allclose(rotation_matrix(new.orientation), rotation_matrix(rotation), atol=1e-6)
        if motion == "keyframed":
            assert tuple(again.motion_of(new)["orientation"]) == new.orientation


def test_replace_every_corpus_body_by_itself_keeps_its_vectors(corpus):
    """Every body of every corpus system (static, dynamic, keyframed) built anew with its own
    position and rotation holds the position (its w too) and the orientation (its sign too)."""
    checked = set()
    for name, (_, data) in nif_systems().items():
        system = Packfile.from_bytes(data).root
        if system.kind != "physics":
            continue
        for index, body in enumerate(system.bodies):
            options = {"position": np.asarray(body.position[:3], np.float64) * 69.99125, "rotation": body.orientation,
                       "motion": system.motion_type(body), "layer": body.layer}  # fmt: skip
            if options["motion"] == "dynamic":
                options["mass"] = system.mass(body)
            new = round_trip(replace_body(system, index, body.shape, **options)).bodies[index]
            assert np.allclose(new.position[:3], body.position[:3], rtol=1e-6, atol=1e-9), name
            assert new.position[3] == body.position[3], name
            assert np.allclose(new.orientation, body.orientation, atol=1e-7), name
            checked.add(options["motion"])
    assert checked == {"static", "dynamic", "keyframed"}


def test_replace_body_refuses_a_missing_body():
    with pytest.raises(FormatError, match="body 3"):
        replace_body(two_body_system(), 3, SphereShape.build(1.0))


MATERIAL_SETTINGS = ("dynamic_friction", "static_friction", "restitution", "name")  # what a body chooses


def material_constants(material):
    values = {key: value for key, value in vars(material).items() if key not in MATERIAL_SETTINGS}
    values["max_contact_impulse"] = np.float32(values["max_contact_impulse"]).view(np.uint32).item()
    return values


@pytest.mark.parametrize("motion", ["static", "dynamic", "keyframed"])
def test_new_bodies_hold_the_games_constants(corpus, motion):
    """Material bytes (max contact impulse 0x7F7FFFEE, not FLT_MAX) and a dynamic body's motion
    properties (damping 0x3DCD0000 / 0x3D4D0000 and the rest) as every corpus body of that
    motion has them."""
    system = PhysicsSystemData()
    add_body(system, ConvexPolytopeShape.build(BOX), motion=motion, mass=5.0)
    new = round_trip(system)
    (body,) = new.bodies
    games_materials, games_properties = [], []
    for _, (kind, data) in nif_systems().items():
        game = Packfile.from_bytes(data).root
        if kind != "physics":
            continue
        for game_body in game.bodies:
            if game.motion_type(game_body) == motion and game.material_of(game_body).trigger_type == 0:
                games_materials.append(material_constants(game.material_of(game_body)))
                if motion == "dynamic":
                    properties = game.motion_properties[int(game.motion_of(game_body)["motion_properties_id"])]
                    games_properties.append(properties.tobytes())
    assert games_materials
    assert all(found == material_constants(new.material_of(body)) for found in games_materials)
    assert material_constants(new.material_of(body))["max_contact_impulse"] == 0x7F7FFFEE
    if motion == "dynamic":
        properties = new.motion_properties[int(new.motion_of(body)["motion_properties_id"])].tobytes()
        assert games_properties and set(games_properties) == {properties}
