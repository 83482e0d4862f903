"""docs/python.md's walk-through, run as a doctest in a folder holding only ``samples/``: what
the page shows is what the module prints."""

from __future__ import annotations

import doctest
import os
import shutil
from pathlib import Path

from conftest import ROOT


def test_the_walk_through_prints_what_the_page_shows(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "samples", tmp_path / "samples")
    here = os.getcwd()
    os.chdir(tmp_path)
    try:
        failures, tried = doctest.testfile(
            str(ROOT / "docs" / "python.md"),
            module_relative=False,
            optionflags=doctest.NORMALIZE_WHITESPACE,
            verbose=False,
        )
    finally:
        os.chdir(here)
    assert tried > 20
    assert failures == 0
