#!/usr/bin/env python3
"""Lists the longest functions in zkverify's sources (a reviewer's aid, not a build step).

A function is a line that ends with ') ... {' (its signature may start lines above) and is not a
control statement, a namespace, a class or a lambda, up to its matching '}'. Good enough for code
formatted like this project's; prints "lines  file:line  signature", longest first.
"""
import re
import sys
from pathlib import Path

ROOTS = ["model", "probes", "verifier", "tests"]
NOT_FUNCTIONS = re.compile(r"^\s*(if|for|while|switch|else|do|try|catch|namespace|class|struct|enum|return)\b|=\s*\[|\[[&=a-z_, ]*\]\s*\(")


def functions(path):
    lines = path.read_text().splitlines()
    for i, line in enumerate(lines):
        header = line.rstrip()
        if not header.endswith("{") or ")" not in header or header.lstrip().startswith("//"):
            continue
        # The signature may span lines: walk back to the line that opens its parameter list.
        start = i
        while "(" not in lines[start] and start > 0 and not re.search(r"[;{}]\s*$", lines[start - 1]):
            start -= 1
        signature = " ".join(l.strip() for l in lines[start:i + 1])
        if NOT_FUNCTIONS.search(signature) or "(" not in signature:
            continue
        depth = 0
        for j in range(i, len(lines)):
            depth += lines[j].count("{") - lines[j].count("}")
            if depth <= 0:
                yield j - start + 1, start + 1, signature[:100]
                break


def main():
    top = Path(__file__).resolve().parent.parent
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 15
    found = []
    for root in ROOTS:
        for path in sorted((top / root).rglob("*.[ch]pp")):
            for length, line, signature in functions(path):
                found.append((length, f"{path.relative_to(top)}:{line}", signature))
    for length, where, signature in sorted(found, reverse=True)[:count]:
        print(f"{length:4}  {where:45}  {signature}")


if __name__ == "__main__":
    main()
