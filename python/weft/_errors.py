"""The two exception types of the package."""
import linecache
import re


class WeftError(RuntimeError):
    """A runtime failure (libweft): the C message, and the status name."""

    def __init__(self, message, status=None):
        super().__init__(message)
        self.status = status


class CompilationError(Exception):
    """A kernel the frontend or the compiler rejects. `filename`, `lineno`
    and `construct` (the offending source line) say where; str() reads
    "file:line: message" followed by that line."""

    def __init__(self, message, filename=None, lineno=None, construct=None):
        self.msg = message
        self.filename = filename
        self.lineno = lineno
        if construct is None and filename and lineno:
            construct = linecache.getline(filename, lineno).strip() or None
        self.construct = construct
        where = f"{filename}:{lineno}: " if filename and lineno else ""
        text = where + message
        if construct:
            text += "\n    " + construct
        super().__init__(text)


# "file:line:col: error: message" as MLIR's SourceMgr diagnostic handler
# prints a FileLineColLoc.
_DIAGNOSTIC = re.compile(r'^(.*?):(\d+):(\d+): error: (.*)$', re.M)


def from_diagnostics(text, what):
    """The CompilationError for the C API's message `text`: located at the
    first error that carries a Python location, else unlocated."""
    for match in _DIAGNOSTIC.finditer(text):
        filename, line = match.group(1), int(match.group(2))
        if filename.endswith(".py"):
            return CompilationError(f"{what}: {match.group(4)}", filename, line)
    return CompilationError(f"{what}: {text.strip()}")
