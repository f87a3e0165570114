"""The progress bar on a terminal: a bar a failed run leaves drawn is ended before the error."""

from __future__ import annotations

import io

import pytest

from berth.bench.progress import ProgressBar
from berth.bench.realtime import Progress


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(
    ("finished", "left_open"),
    [
        pytest.param(3, True, id="a bar left drawn by a stopped run is ended on its own line"),
        pytest.param(10, False, id="a finished bar has ended its line already"),
    ],
)
def test_end_leaves_the_cursor_on_a_fresh_line(finished: int, left_open: bool) -> None:
    terminal = _Terminal()
    bar = ProgressBar("kueue-large", terminal)
    bar(Progress(1.0, 10, 5, finished, 10))
    drawn = terminal.getvalue()

    bar.end()
    bar.end()  # once is enough

    assert terminal.getvalue().endswith("\n")
    assert terminal.getvalue() == (drawn + "\n" if left_open else drawn)
