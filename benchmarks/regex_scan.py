"""The yardstick: a bare regular-expression scan of a dump, as a one-off script would do it.

Reads the module's files and runs one multi-line regular expression over them that
pulls out the fields of every allocation line, value line, value-record head and
live-range line, keeping each match's groups. Prints the number of matches.

    python benchmarks/regex_scan.py DUMP [SIBLING ...]
"""

import re
import sys

LINES = re.compile(
    rb"^(?:allocation (\d+): (?:0x[0-9a-f]+, )?size (\d+)([^\n]*)"
    rb"| value: <(\d+) ([^\s>]+)[^>]*> \(size=(\d+),offset=(\d+)\): ([^\n]*)"
    rb"|<(\d+) ([^\s>]+)[^>\n]*>"
    rb"|    (\d+):(\S+)"
    rb"|    ([^\s{}:]+)\{([\d,]*)\}:(\d+)-(\d+))$",
    re.M,
)


def main(paths):
    matches = 0
    for path in paths:
        with open(path, "rb") as f:
            data = f.read()
        for m in LINES.finditer(data):
            m.groups()
            matches += 1
    print(matches)


if __name__ == "__main__":
    main(sys.argv[1:])
