"""A reference's bound as the Creation Kit merges its model's shape spheres (ck_rules.groups):
nested and concentric spheres (one shape's sphere holding the others, as in many real models)
give the holding sphere itself, whichever comes first; apart, the smallest sphere holding both.
Expected spheres are worked out here; every Fallout 4 corpus model with several shapes is
checked against the spheres merged here, one after the other (a holder after two others it holds
does not shrink their merged sphere back), and its bound holds every shape's sphere."""

import numpy as np
import pytest
from support import corpus_nifs

from precombined_nif.core.precombined.ck_rules.groups import merged_bound, placed_bound, shape_bounds


def sphere(center, radius):
    return np.array(center, np.float64), float(radius)


def assert_sphere(found, center, radius):
    assert found is not None
    np.testing.assert_allclose(found[0], center, atol=1e-9)
    assert found[1] == pytest.approx(radius, abs=1e-9)


@pytest.mark.parametrize("order", [(0, 1, 2), (1, 0, 2), (2, 1, 0), (1, 2, 0)])
def test_spheres_inside_one_give_that_one(order):
    spheres = [sphere((1, 2, 3), 10), sphere((4, 2, 3), 2), sphere((1, -3, 3), 4.5)]  # both inside the first
    assert_sphere(merged_bound([spheres[k] for k in order]), (1, 2, 3), 10)


@pytest.mark.parametrize("radii", [(3, 5), (5, 3), (4, 4), (0, 2)])
def test_concentric_spheres_give_the_larger(radii):
    found = merged_bound([sphere((-7, 0.5, 2), r) for r in radii])
    assert_sphere(found, (-7, 0.5, 2), max(radii))


def test_touching_inside_counts_as_inside():
    # The small sphere touches the big one's surface from within: distance 3 + radius 2 = 5.
    assert_sphere(merged_bound([sphere((0, 0, 0), 5), sphere((3, 0, 0), 2)]), (0, 0, 0), 5)
    assert_sphere(merged_bound([sphere((3, 0, 0), 2), sphere((0, 0, 0), 5)]), (0, 0, 0), 5)


def test_apart_spheres_give_the_one_through_their_far_sides():
    # Far sides at x = -1 and x = 10: centre 4.5, radius 5.5.
    assert_sphere(merged_bound([sphere((0, 0, 0), 1), sphere((7, 0, 0), 3)]), (4.5, 0, 0), 5.5)
    # Along a diagonal: the far sides' midpoint on the line between the centres.
    direction = np.array([1.0, 2.0, 2.0]) / 3.0  # unit
    found = merged_bound([sphere((0, 0, 0), 2), sphere(3 * direction, 2)])
    assert_sphere(found, 1.5 * direction, 3.5)


def test_placed_bound_scales_and_moves_a_nested_pair():
    found = placed_bound([sphere((0, 0, 0), 4), sphere((1, 0, 0), 1)], (100, 0, 50), (0.0, 0.0, 0.0), 1.5)
    assert_sphere(found, (100, 0, 50), 6)


def holds(outer, inner, slack=1e-4):
    """Whether sphere ``outer`` holds ``inner`` (to float32 rounding of the file's values)."""
    (c, r), (c2, r2) = outer, inner
    return np.linalg.norm(np.asarray(c2) - np.asarray(c)) + r2 <= r + slack * max(1.0, r)


def pair_bound(first, second):
    """The smallest sphere holding two: the one holding the other, else the sphere through the
    two far points on the line between the centres."""
    if holds(first, second, 0):
        return first
    if holds(second, first, 0):
        return second
    (c1, r1), (c2, r2) = (np.asarray(first[0], np.float64), first[1]), (np.asarray(second[0], np.float64), second[1])
    along = (c2 - c1) / np.linalg.norm(c2 - c1)
    near, far = c1 - r1 * along, c2 + r2 * along
    return (near + far) / 2, float(np.linalg.norm(far - near) / 2)


def fo4_models():
    found = []
    for path, nif in corpus_nifs(b"BSTriShape"):
        if getattr(nif.header, "bs_version", None) == 130 and len(bounds := shape_bounds(nif)) > 1:
            found.append((path, bounds))
    return found


def test_every_fo4_corpus_model_of_several_shapes_gets_a_bound_holding_them():
    models = fo4_models()
    assert len(models) >= 51
    nested = 0
    for path, bounds in models:
        merged = merged_bound(bounds)
        assert all(holds(merged, b) for b in bounds), path
        expected = bounds[0]
        for other in bounds[1:]:
            expected = pair_bound(expected, other)
        np.testing.assert_allclose(merged[0], expected[0], atol=1e-6 * max(1.0, expected[1]), err_msg=str(path))
        assert merged[1] == pytest.approx(expected[1], rel=1e-9, abs=1e-9), path
        nested += any(holds(b, other, 0) for b in bounds for other in bounds if other is not b)
        if all(holds(bounds[0], other, 0) for other in bounds):  # the first holds the rest: it is the bound
            assert merged[1] == bounds[0][1] and np.array_equal(merged[0], bounds[0][0]), path
    assert nested >= 7  # the layout this test is about: real models where one shape's sphere holds another's
