"""The programs an installed wheel carries in its bin/ (weft-run,
weft-compile, weft-opt), started by the console scripts pip puts on PATH
(pyproject.toml): each replaces this process with the program."""
import os
import sys

from . import _libs


def _exec(name):
    path = os.path.join(_libs.bin_dir(), name)
    if not os.access(path, os.X_OK):
        sys.exit(f"{name}: {path} is missing from this Weft installation")
    os.execv(path, [name] + sys.argv[1:])


def weft_run():
    _exec("weft-run")


def weft_compile():
    _exec("weft-compile")


def weft_opt():
    _exec("weft-opt")
