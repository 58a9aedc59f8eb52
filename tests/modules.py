"""Loading a script or an example of the project as a module, for its tests."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

#: the project's root folder
ROOT = Path(__file__).resolve().parents[1]


def load_module(path: Path) -> ModuleType:
    """The module in the file ``path`` (named after it), freshly executed.

    Raises:
        FileNotFoundError: no such file; whatever the module raises as it runs.
    """
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
