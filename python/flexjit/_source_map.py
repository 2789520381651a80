"""Where each line of a program made from Python functions came from, so that a diagnostic about the
program points at the user's own file, line and column. Columns are 0-based character offsets
inside this module; ast's byte offsets are converted where they come in."""

import linecache


def char_col(line, byte_col):
    """The character offset of UTF-8 byte offset `byte_col` in `line`."""
    return len(line.encode("utf-8")[:byte_col].decode("utf-8", errors="ignore"))


class Line:
    """One program line: its text and the (program column, file column, exact) breakpoints of its
    origin. exact=False marks text flexjit wrote in place of a span (a captured value's name):
    every column inside it maps to the span's start."""

    def __init__(self, text, file=None, line=0, breakpoints=()):
        self.text = text
        self.file = file
        self.line = line
        self.breakpoints = list(breakpoints)

    def origin(self, col):
        """(file, line, column) of program column `col`, or None for a line flexjit wrote."""
        if self.file is None:
            return None
        best = (0, 0, True)
        for point in self.breakpoints:
            if point[0] <= col:
                best = point
        program_col, file_col, exact = best
        return self.file, self.line, file_col + (col - program_col if exact else 0)


def copied_line(text, file, line, start, replacements, end=None, prefix="", suffix=""):
    """A Line made from characters [start, end) of `text` (line `line` of `file`) with
    `replacements` [(start, end, new text)] (character columns, not overlapping) applied, between
    `prefix` and `suffix` (flexjit's text)."""
    end = len(text) if end is None else end
    out = [prefix]
    points = [(0, start, False)]
    pos = start
    for begin, stop, new in sorted(replacements):
        points.append((sum(map(len, out)), pos, True))
        out.append(text[pos:begin])
        points.append((sum(map(len, out)), begin, False))
        out.append(new)
        pos = stop
    points.append((sum(map(len, out)), pos, True))
    out.append(text[pos:end])
    points.append((sum(map(len, out)), end, False))
    out.append(suffix)
    return Line("".join(out), file, line, points)


def format_block(severity, file, line, col, message):
    """One diagnostic as flexjit prints it; `col` 0-based in characters."""
    block = f"{file}:{line}:{col + 1}: {severity}: {message}"
    source = linecache.getline(file, line).rstrip("\n")
    if source:
        block += f"\n    {source}\n    {' ' * col}^"
    return block


def format_diagnostics(diagnostics, lines, fallback):
    """The diagnostics of a program built from `lines`, mapped to the users' files and formatted as
    flexjit formats them (file:line:col: severity: message, the source line, a caret). Returns the
    message and the mapped diagnostics as (severity, file, line, col, message) tuples, col 1-based
    in characters. `fallback` (file, line) stands for lines flexjit wrote."""
    blocks = []
    mapped = []
    for d in diagnostics:
        where = None
        if 1 <= d.line <= len(lines):
            program_line = lines[d.line - 1]
            where = program_line.origin(char_col(program_line.text, max(d.col - 1, 0)))
        if where is None:
            where = (fallback[0], fallback[1], 0)
        file, line, col = where
        mapped.append((d.severity, file, line, col + 1, d.message))
        blocks.append(format_block(d.severity, file, line, col, d.message))
    return "\n".join(blocks), mapped
