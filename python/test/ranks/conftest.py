import os
import sys

import pytest

# The checkout's package, unless one is installed (a wheel on a GPU machine).
sys.path.append(os.path.join(os.path.dirname(__file__), "..", ".."))
import weft  # noqa: E402
from devices import BACKEND  # noqa: E402


@pytest.fixture(scope="session", autouse=True)
def runtime():
    """One weft context for the whole run; every rank runs the same tests in
    the same order, so collective calls (allocations, barriers) match."""
    weft.init(BACKEND)
    yield
    weft.finalize()
