"""Images out of the window: encoded as the name says, written atomically, refused in one
line."""
from __future__ import annotations

import pytest
from PySide6.QtGui import QColor, QImage

from app.images import image_bytes, write_image
from lab.io.files import OutputError


def red(w=8, h=6) -> QImage:
    image = QImage(w, h, QImage.Format.Format_RGB32)
    image.fill(QColor("#ff0000"))
    return image


@pytest.mark.parametrize("name, magic", [("a.png", b"\x89PNG"), ("a.jpg", b"\xff\xd8"),
                                         ("a.bmp", b"BM"), ("a.other", b"\x89PNG")])
def test_the_suffix_chooses_the_format(qtbot, name, magic):
    assert image_bytes(red(), name).startswith(magic)


def test_written_whole_in_a_new_folder_or_refused_in_one_line(qtbot, tmp_path):
    path = write_image(red(), tmp_path / "new" / "x.png", make_folder=True)
    back = QImage(str(path))
    assert (back.width(), back.height()) == (8, 6) and back.pixelColor(3, 3) == QColor("#ff0000")
    with pytest.raises(OutputError, match="folder does not exist"):
        write_image(red(), tmp_path / "missing" / "x.png")
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(OutputError) as err:
        write_image(red(), blocker / "x.png", make_folder=True)
    assert str(blocker / "x.png") in str(err.value) and "\n" not in str(err.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file", "new"]
