"""The on-disk kernel cache.

An entry is keyed by the generated IR (which is a function of the kernel's
source, its specialised signature and constexprs; file paths in its
locations are reduced to base names so a checkout elsewhere hits), the
target, the compile options, the frontend version and the compiler version:
    $WEFT_CACHE_DIR (default ~/.cache/weft) / <compiler version> / <key> / <artifact>
A machine without libWeftCAPI (a GPU box without LLVM) cannot ask the
compiler for its version: it uses $WEFT_COMPILER_VERSION, else the only
version directory in the cache.
"""
import contextlib
import fcntl
import hashlib
import json
import os
import re
import tempfile

from . import _capi
from ._errors import CompilationError

FRONTEND_VERSION = "1"


def cache_dir():
    return os.environ.get("WEFT_CACHE_DIR") or \
        os.path.join(os.path.expanduser("~"), ".cache", "weft")


def cache_only():
    return os.environ.get("WEFT_CACHE_ONLY", "") not in ("", "0")


def _version_dir(root):
    try:
        return re.sub(r"[^A-Za-z0-9._-]+", "_", _capi.version())
    except ImportError as e:
        if os.environ.get("WEFT_COMPILER_VERSION"):
            return re.sub(r"[^A-Za-z0-9._-]+", "_", os.environ["WEFT_COMPILER_VERSION"])
        found = [d for d in os.listdir(root)] if os.path.isdir(root) else []
        if len(found) == 1:
            return found[0]
        raise CompilationError(
            f"no compiler ({e}) and the kernel cache {root} holds "
            f"{len(found)} compiler versions {found}; set WEFT_COMPILER_VERSION") from None


def key(ir, files, target, options):
    for path in files:
        ir = ir.replace(json.dumps(path), json.dumps(os.path.basename(path)))
    blob = json.dumps([FRONTEND_VERSION, ir, target, sorted(options.items())])
    return hashlib.sha256(blob.encode()).hexdigest()


def lookup_or_compile(ir, files, name, target, options):
    """The artifacts {name: bytes} of `ir` for `target`, from the cache or
    compiled now (and stored)."""
    root = cache_dir()
    k = key(ir, files, target, options)
    entry = os.path.join(root, _version_dir(root), k)
    if not os.path.isdir(entry):
        if cache_only():
            recorded = _record_miss(k, ir, name, target, options)
            raise CompilationError(
                f"kernel {name} for {target} {options} is not in the kernel cache "
                f"({entry}) and WEFT_CACHE_ONLY=1 forbids compiling; run the same "
                "code where the compiler is, with the same WEFT_CACHE_DIR, and copy it"
                + (f" (request saved as {recorded}: `python3 -m weft fill-cache` "
                   "compiles it there)" if recorded else ""))
        _record_miss(k, ir, name, target, options)
        with _compiling(entry) as missing:
            if missing:
                arts = _capi.compile_ir(ir, target, options)
                _store(entry, name, target, arts)
                return arts
    with open(os.path.join(entry, "index.json")) as f:
        names = json.load(f)["artifacts"]
    out = {}
    for n in names:
        with open(os.path.join(entry, n), "rb") as f:
            out[n] = f.read()
    return out


@contextlib.contextmanager
def _compiling(entry):
    """Holds the lock of `entry` and says whether it is still missing: of
    the processes that miss one kernel at once (the ranks of a job, test
    suites sharing a cache) one compiles it and the others wait for it,
    instead of each compiling it again. The lock is the kernel's alone and
    the kernel's compilation takes no other, so no two processes wait on
    each other; the system drops it if its holder dies. Once the entry is
    stored the lock file goes: a waiter holding it finds the entry, and so
    does any later process, which then locks a new file or none."""
    parent, k = os.path.split(entry)
    os.makedirs(parent, exist_ok=True)
    lock = os.path.join(parent, ".lock-" + k)
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        except OSError:  # a file system without locks: each process that misses compiles
            pass
        missing = not os.path.isdir(entry)
        yield missing
        if missing and os.path.isdir(entry):
            os.unlink(lock)
    finally:
        os.close(fd)  # releases the lock


def _record_miss(k, ir, name, target, options):
    """With $WEFT_CACHE_MISSES set, saves what a miss needed (the IR as
    generated here, so its locations name this machine's files) as
    <dir>/<key>.json for fill(); returns that path. A cache-only run's
    misses travel to where the compiler is; a run that compiles records
    what it compiled (scripts/compare_codegen.py replays them)."""
    where = os.environ.get("WEFT_CACHE_MISSES")
    if not where:
        return None
    os.makedirs(where, exist_ok=True)
    path = os.path.join(where, k + ".json")
    request = {"key": k, "kernel": name, "target": target, "options": options, "ir": ir}
    fd, tmp = tempfile.mkstemp(dir=where, prefix=".tmp-")
    with os.fdopen(fd, "w") as f:
        json.dump(request, f)
    os.replace(tmp, path)  # ranks missing the same kernel write the same file
    return path


def fill(paths):
    """Compiles saved miss requests (files, or directories of *.json) into
    the cache under their own keys; returns (compiled, already there)."""
    root = cache_dir()
    version = _version_dir(root)
    files = []
    for p in paths:
        files += sorted(os.path.join(p, f) for f in os.listdir(p) if f.endswith(".json")) \
            if os.path.isdir(p) else [p]
    compiled = present = 0
    for path in files:
        with open(path) as f:
            r = json.load(f)
        entry = os.path.join(root, version, r["key"])
        with _compiling(entry) as missing:
            if missing:
                _store(entry, r["kernel"], r["target"],
                       _capi.compile_ir(r["ir"], r["target"], r["options"]))
        compiled += missing
        present += not missing
    return compiled, present


def _store(entry, name, target, arts):
    """Writes a private directory and renames it into place, so a process
    that finds the entry (without the lock) never sees half of it."""
    parent = os.path.dirname(entry)
    os.makedirs(parent, exist_ok=True)
    tmp = tempfile.mkdtemp(dir=parent, prefix=".tmp-")
    for n, data in arts.items():
        with open(os.path.join(tmp, n), "wb") as f:
            f.write(data)
    with open(os.path.join(tmp, "index.json"), "w") as f:
        json.dump({"kernel": name, "target": target, "artifacts": sorted(arts)}, f)
    try:
        os.rename(tmp, entry)
    except OSError:  # another process stored it first
        for n in os.listdir(tmp):
            os.unlink(os.path.join(tmp, n))
        os.rmdir(tmp)
