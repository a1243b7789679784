import os
import sys

import pytest

# The checkout's package unless one is installed, and the rank tests'
# helpers (backend, local arrays).
HERE = os.path.dirname(__file__)
sys.path.append(os.path.join(HERE, "..", ".."))
sys.path.append(os.path.join(HERE, "..", "ranks"))
import weft  # noqa: E402
from devices import BACKEND  # noqa: E402
import matrix  # noqa: E402


@pytest.fixture(scope="session", autouse=True)
def runtime():
    weft.init(BACKEND)
    yield
    weft.finalize()


def pytest_terminal_summary(terminalreporter):
    """How many (op, dtype, shape, target) cases the matrix checked: a
    parametrized test checks many ops at once."""
    for target, count in sorted(matrix.CASES.items()):
        terminalreporter.write_line(f"language matrix: {count} cases checked on {target}")
