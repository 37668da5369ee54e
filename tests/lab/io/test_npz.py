"""lab.io.npz: members read one at a time and only when asked, headers checked before anything is
allocated, objects never unpickled, shapes bound by dimension name, text decoded strictly."""
import io
import tracemalloc

import numpy as np
import pytest

from lab.io import npz
from lab.io.npz import Archive
from tests.lab.bad_files import npy_bytes, object_member, raw_npy, write_members


def archive(tmp_path, **members):
    return Archive(write_members(tmp_path / "a.npz", members), "test file")


def test_arrays_of_any_layout_and_byte_order_read_as_saved(tmp_path):
    x = np.arange(12.0).reshape(4, 3)
    with archive(tmp_path, x=np.asfortranarray(x), big=x.astype(">f8"), i=x.astype(np.int16),
                 empty=np.zeros((0, 3))) as z:
        for key in ("x", "big", "i"):
            np.testing.assert_array_equal(z.array(key, ("n", 3)), x)
        assert z.array("empty", (None, 3)).shape == (0, 3)
        assert z.names == {"x", "big", "i", "empty"} and "x" in z and "y" not in z


def test_dimension_names_bind_on_first_use(tmp_path):
    with archive(tmp_path, x=np.zeros((4, 3)), r=np.zeros(5), any=np.zeros(9)) as z:
        z.array("x", ("n", 3))
        assert z.dims == {"n": 4}
        z.array("any", (None,))  # None binds nothing
        with pytest.raises(ValueError, match=r"r has shape \(5,\), expected \(n,\), n = 4"):
            z.array("r", ("n",))


def test_a_lying_header_is_refused_before_anything_is_allocated(tmp_path):
    lie = raw_npy("<f8", (200_000, 200_000), b"\0" * 64)  # 320 GB declared over 64 bytes
    with archive(tmp_path, W=lie) as z:
        tracemalloc.start()
        with pytest.raises(ValueError, match=r"declares \(200000, 200000\) float64"):
            z.array("W", (None, None))
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    assert peak < 1_000_000


def test_a_member_larger_than_the_limit_is_refused_unread(tmp_path, monkeypatch):
    monkeypatch.setattr(npz, "MAX_MEMBER_BYTES", 1000)
    with archive(tmp_path, x=np.zeros(1000), y=np.zeros(10)) as z:
        with pytest.raises(ValueError, match=r"x is 8128 bytes \(at most 1000\)"):
            z.array("x", (None,))
        assert z.array("y", (None,)).shape == (10,)


def test_members_not_asked_for_are_never_read(tmp_path):
    path = write_members(tmp_path / "a.npz", {"x": np.ones(3), "W": np.zeros(4096)})
    data = bytearray(path.read_bytes())
    at = data.index(b"W.npy") + 2000
    data[at] ^= 0xFF  # W's CRC no longer matches
    path.write_bytes(bytes(data))
    with Archive(path, "test file") as z:
        np.testing.assert_array_equal(z.array("x", (3,)), np.ones(3))
        with pytest.raises(ValueError, match="Bad CRC-32"):
            z.array("W", (None,))


def test_object_arrays_are_refused_without_unpickling(tmp_path):
    marker = tmp_path / "UNPICKLED"
    with archive(tmp_path, x=object_member(marker)) as z:
        with pytest.raises(ValueError, match="x must hold real numbers, got dtype object"):
            z.array("x", (None,))
    assert not marker.exists()
    # The marker is real: unpickling the same member does create it.
    np.load(io.BytesIO(object_member(marker)), allow_pickle=True)
    assert marker.exists()


@pytest.mark.parametrize("kinds, array, fragment", [
    (npz.REAL, np.zeros(3, complex), "real numbers, got dtype complex128"),
    (npz.REAL, np.zeros(3, bool), "real numbers, got dtype bool"),
    ("iu", np.zeros(3), "integers, got dtype float64"),
])
def test_dtypes_outside_the_kinds_are_refused(tmp_path, kinds, array, fragment):
    with archive(tmp_path, x=array) as z, pytest.raises(ValueError, match=fragment):
        z.array("x", (3,), kinds)


def test_text_members(tmp_path):
    members = {"empty": np.array(""), "big": np.array("ünï", dtype=">U3"),
               "long": np.array("x" * 100), "vector": np.array(["a"])}
    with archive(tmp_path, **members) as z:
        assert z.text("empty", 10) == "" and z.text("big", 10) == "ünï"
        with pytest.raises(ValueError, match=r"long is 100 characters long \(at most 99\)"):
            z.text("long", 99)
        with pytest.raises(ValueError, match="vector must be a text scalar"):
            z.text("vector", 99)


def test_refusals_are_one_line_naming_the_file(tmp_path):
    (tmp_path / "a.npz").write_bytes(npy_bytes(np.zeros(3)))
    with pytest.raises(ValueError) as err:
        Archive(tmp_path / "a.npz", "test file")
    assert str(err.value) == (f"{tmp_path / 'a.npz'}: not a usable test file: a single .npy "
                              "array, not an .npz archive")
    assert npz.one_line("a\nb\r\n  c") == "a b c"
