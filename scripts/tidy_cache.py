#!/usr/bin/env python3
"""Which files clang-tidy must read again: its findings on a file are a function of the file's inputs
(the clang-tidy version, .clang-tidy, the compile command, and the content of every file the compiler
read for it, system headers included, as the build's Ninja depfiles list them). A file whose inputs
match a line of the record passed with zero findings before, and would again, so scripts/lint.sh skips
it: clang-tidy over every file is ~950 CPU-s, a third of what the test command's background builds
cost. A file whose inputs cannot be read (no compile command, no depfile: not built yet) is always
checked. The record is committed; lint.sh rewrites it after a clean run.

  tidy_cache.py stale BUILD RECORD FILE...    prints the FILEs that must be checked, one per line
  tidy_cache.py record BUILD RECORD FILE...   writes RECORD: every FILE's inputs, as clean
"""
import hashlib
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Inputs:
    """The inputs of a build directory's files: keys that do not depend on where the tree or the
    build directory is (a fresh clone's paths are not the developer's)."""

    def __init__(self, build):
        self.build = os.path.abspath(build)
        self.hashes = {}
        with open(os.path.join(self.build, "compile_commands.json"), encoding="utf-8") as f:
            self.commands = {os.path.abspath(entry["file"]): entry["command"] for entry in json.load(f)}
        version = subprocess.run(["clang-tidy-14", "--version"], capture_output=True, text=True, check=True).stdout
        with open(os.path.join(ROOT, ".clang-tidy"), "rb") as f:
            self.common = hashlib.sha256(version.encode() + f.read()).hexdigest()

    def normal(self, text):
        return text.replace(self.build, "<build>").replace(ROOT, "<src>")

    def content(self, path):
        if path not in self.hashes:
            try:
                with open(path, "rb") as f:
                    data = f.read()
            except OSError:
                data = b"<missing>"
            if path.startswith(self.build + "/"):  # generated (the precompiled header's source): paths in it
                data = self.normal(data.decode(errors="replace")).encode()
            self.hashes[path] = hashlib.sha256(data).hexdigest()
        return self.hashes[path]

    def deps(self, objects):
        """{object: [paths]} for the objects whose depfile Ninja holds and is up to date."""
        out = subprocess.run(["ninja", "-C", self.build, "-t", "deps", *objects], capture_output=True, text=True)
        found, current = {}, None
        for line in out.stdout.splitlines():
            if line and not line.startswith(" "):
                target = line.split(":")[0]
                current = target if "(VALID)" in line else None
                if current:
                    found[current] = []
            elif current and line.strip():
                found[current].append(os.path.normpath(os.path.join(self.build, line.strip())))
        return found

    def keys(self, files):
        """{file: key} for the files whose inputs are all known."""
        objects = {}
        for file in files:
            command = self.commands.get(os.path.abspath(file))
            words = command.split() if command else []
            if "-o" in words:
                objects[file] = words[words.index("-o") + 1]
        deps = self.deps(sorted(set(objects.values()))) if objects else {}
        keys = {}
        for file, obj in objects.items():
            if obj not in deps:
                continue
            digest = hashlib.sha256((self.common + self.normal(self.commands[os.path.abspath(file)])).encode())
            # Sorted by the normalised path: by the real one, a tree under /tmp sorts before /usr's
            # headers, one under /work after them (3204ad5's fresh clone missed every key so).
            for path, content in sorted((self.normal(path), self.content(path)) for path in deps[obj]):
                digest.update(f"\n{path} {content}".encode())
            keys[os.path.relpath(os.path.abspath(file), ROOT)] = digest.hexdigest()
        return keys


def read_record(path):
    try:
        with open(path, encoding="utf-8") as f:
            return {tuple(line.split(" ", 1)[::-1]) for line in f.read().splitlines() if " " in line}
    except FileNotFoundError:
        return set()


def main(argv):
    if len(argv) < 4 or argv[1] not in ("stale", "record"):
        sys.exit(__doc__)
    action, build, record, files = argv[1], argv[2], argv[3], argv[4:]
    keys = Inputs(build).keys(files)
    if action == "stale":
        clean = read_record(record)  # {(path, key)}
        for file in files:
            relative = os.path.relpath(os.path.abspath(file), ROOT)
            if (relative, keys.get(relative)) not in clean:
                print(file)
        return
    partial = record + ".partial"
    with open(partial, "w", encoding="utf-8") as f:
        for relative in sorted(keys):
            f.write(f"{keys[relative]} {relative}\n")
    os.replace(partial, record)


if __name__ == "__main__":
    main(sys.argv)
