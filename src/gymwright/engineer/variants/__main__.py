"""`python -m gymwright.engineer.variants [--write docs/engineer.md]`: print the variants table, or
write it between the markers of a docs page."""

from __future__ import annotations

import sys
from pathlib import Path

from gymwright.atomic import write_atomic
from gymwright.engineer.variants.library import embed_table, variants_table


def main(argv: list[str]) -> int:
    if len(argv) == 2 and argv[0] == "--write":
        path = Path(argv[1])
        write_atomic(path, embed_table(path.read_text()))
        print(f"wrote the variants table to {path}")
        return 0
    if argv:
        print("usage: python -m gymwright.engineer.variants [--write docs/engineer.md]", file=sys.stderr)
        return 2
    print(variants_table())
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
