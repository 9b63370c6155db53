"""A number grouped with no-break spaces stays on one line in the lab's terminal output."""

import io

from rich.markdown import Markdown
from rich.text import Text

from minimodel._console import Console
from minimodel.messages import grouped


def _printed(renderable, width: int) -> list[str]:
    out = io.StringIO()
    Console(file=out, width=width, color_system=None).print(renderable)
    return out.getvalue().splitlines()


def test_a_spanish_grouped_number_is_never_split_across_lines():
    number = grouped(494032768, ",d", "es")
    assert number == "494\u00a0032\u00a0768"
    text = "La matriz atada tiene " + number + " parámetros en total"
    for width in range(20, 40):
        lines = _printed(Text(text), width) + _printed(Markdown(text), width)
        assert any(number in line for line in lines), (width, lines)


def test_ordinary_spaces_still_wrap():
    lines = _printed(Text("uno dos tres cuatro cinco seis siete"), 12)
    assert lines == ["uno dos tres", "cuatro cinco", "seis siete"]
