"""A Python environment where SGLang cannot be found, as on a machine without it.

``hiding_sglang(folder)`` writes a ``sitecustomize.py`` into ``folder`` whose import finder
refuses ``sglang`` and its modules, and returns a PYTHONPATH that puts it first: every Python
started with it (``python -m sglang.launch_server`` included) finds no SGLang.
"""

from __future__ import annotations

import os
from pathlib import Path

_SITECUSTOMIZE = """
import sys


class _NoSGLang:
    def find_spec(self, name, path=None, target=None):
        if name == "sglang" or name.startswith("sglang."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, _NoSGLang())
"""


def hiding_sglang(folder: Path) -> str:
    """The PYTHONPATH under which SGLang is not importable (this one's entries kept after)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "sitecustomize.py").write_text(_SITECUSTOMIZE, encoding="utf-8")
    rest = os.environ.get("PYTHONPATH", "")
    return os.pathsep.join([str(folder), *([rest] if rest else [])])
