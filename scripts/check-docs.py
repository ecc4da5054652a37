#!/usr/bin/env python3
"""Checks the documentation's links; prints each problem as FILE:LINE: what, and exits 1 if there is any.

- In README.md, CHANGELOG.md, ARCHITECTURE.md and docs/**/*.md, every Markdown link or image
  `[text](target)` (and every reference definition `[label]: target`) whose target is not http(s) or
  mailto resolves: the file or folder exists relative to the page (a target starting with `/`, relative
  to the repository's root), and a `#anchor`, on the same page or on another .md page, is the
  GitHub-style slug of one of that page's headings (lowercase, punctuation dropped except '-' and '_',
  spaces to '-'; a repeated slug gets -1, -2, ...). Links inside fenced code blocks and inline code
  are ignored.
- Every docs/schema/*.json parses as JSON and is an object with "$schema" and "title" keys.
- README.md has at most 160 lines.

Standard library only. Run from anywhere: python3 scripts/check-docs.py
"""
import json
import re
import sys
from pathlib import Path
from urllib.parse import unquote

TOP = Path(__file__).resolve().parent.parent
README_LIMIT = 160

FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)[ \t]*(?:[ \t]#+[ \t]*)?$")
INLINE_CODE = re.compile(r"(`+)(?:.+?)\1")
# [text](target) or ![alt](target), the target optionally in <...> and followed by a "title".
LINK = re.compile(r"!?\[((?:[^\[\]\\]|\\.|\[[^\[\]]*\])*)\]\(\s*(<[^>]*>|[^\s()]*(?:\([^\s()]*\)[^\s()]*)*)"
                  r"(?:\s+(?:\"[^\"]*\"|'[^']*'|\([^)]*\)))?\s*\)")
DEFINITION = re.compile(r"^ {0,3}\[([^\]]+)\]:\s*(<[^>]*>|\S+)")
HTML_ANCHOR = re.compile(r"<a\s+(?:[^>]*?\s)?(?:name|id)\s*=\s*[\"']([^\"']+)[\"']", re.IGNORECASE)
EXTERNAL = re.compile(r"^(https?:|mailto:)", re.IGNORECASE)


def pages():
    found = [TOP / name for name in ("README.md", "CHANGELOG.md", "ARCHITECTURE.md")]
    found = [page for page in found if page.is_file()]
    docs = TOP / "docs"
    if docs.is_dir():
        found += sorted(page for page in docs.rglob("*.md") if page.is_file())
    return found


def prose_lines(text):
    """(line number, line) for each line outside fenced code blocks."""
    fence = None
    for number, line in enumerate(text.split("\n"), start=1):
        opening = FENCE.match(line)
        if fence is None:
            if opening:
                fence = opening.group(1)
                continue
            yield number, line
        elif opening and opening.group(1)[0] == fence[0] and len(opening.group(1)) >= len(fence) \
                and not line.strip()[len(opening.group(1)):].strip():
            fence = None


def without_inline_code(line):
    return INLINE_CODE.sub(lambda match: " " * len(match.group(0)), line)


def slug(heading):
    """GitHub's anchor for a heading's text."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)   # a link's text, not its target
    text = re.sub(r"<[^>]+>", "", text)                         # inline HTML tags
    text = text.strip().lower()
    text = "".join(ch for ch in text if ch.isalnum() or ch in "-_ " or ch.isspace())
    return re.sub(r"\s", "-", text)


_anchors = {}


def anchors(page):
    """Every anchor a page defines: its headings' slugs (duplicates numbered) and HTML anchors."""
    if page not in _anchors:
        found, seen = set(), {}
        for _, line in prose_lines(page.read_text(encoding="utf-8")):
            found.update(HTML_ANCHOR.findall(line))
            heading = HEADING.match(line)
            if not heading:
                continue
            base = slug(heading.group(2))
            if base in seen:
                seen[base] += 1
                found.add(f"{base}-{seen[base]}")
            else:
                seen[base] = 0
                found.add(base)
        _anchors[page] = found
    return _anchors[page]


def links(text):
    """(line number, target) for each link outside code."""
    for number, line in prose_lines(text):
        line = without_inline_code(line)
        definition = DEFINITION.match(line)
        if definition:
            yield number, definition.group(2)
            continue
        for match in LINK.finditer(line):
            yield number, match.group(2)


def check_link(page, target):
    """None when target resolves from page, else what is wrong."""
    target = target.strip()
    if target.startswith("<") and target.endswith(">"):
        target = target[1:-1].strip()
    if not target:
        return "empty link target"
    if EXTERNAL.match(target):
        return None
    path_part, _, anchor = target.partition("#")
    path_part = unquote(path_part.split("?", 1)[0])
    if path_part:
        base = TOP if path_part.startswith("/") else page.parent
        resolved = (base / path_part.lstrip("/")).resolve()
        try:
            shown = resolved.relative_to(TOP)
        except ValueError:
            return f"'{target}' points outside the repository"
        if not resolved.exists():
            return f"'{target}': {shown} does not exist"
    else:
        resolved = page
    if anchor:
        if resolved.is_dir():
            return f"'{target}': an anchor on a folder"
        if resolved.suffix.lower() == ".md" and unquote(anchor).lower() not in anchors(resolved):
            where = "this page" if resolved == page else resolved.relative_to(TOP)
            return f"'{target}': no heading of {where} has the anchor #{anchor}"
    return None


def check_schemas(problems):
    schema_dir = TOP / "docs" / "schema"
    if not schema_dir.is_dir():
        return
    for schema in sorted(schema_dir.glob("*.json")):
        name = schema.relative_to(TOP)
        try:
            data = json.loads(schema.read_text(encoding="utf-8"))
        except (ValueError, UnicodeDecodeError) as error:
            line = getattr(error, "lineno", 1)
            problems.append(f"{name}:{line}: not valid JSON: {getattr(error, 'msg', error)}")
            continue
        if not isinstance(data, dict):
            problems.append(f"{name}:1: not a JSON object")
            continue
        for key in ("$schema", "title"):
            if key not in data:
                problems.append(f"{name}:1: no \"{key}\" key")


def main():
    problems, count = [], 0
    checked = pages()
    for page in checked:
        name = page.relative_to(TOP)
        text = page.read_text(encoding="utf-8")
        for number, target in links(text):
            count += 1
            problem = check_link(page, target)
            if problem:
                problems.append(f"{name}:{number}: {problem}")
    readme = TOP / "README.md"
    if readme.is_file():
        lines = len(readme.read_text(encoding="utf-8").splitlines())
        if lines > README_LIMIT:
            problems.append(f"README.md:{README_LIMIT + 1}: {lines} lines, more than {README_LIMIT} "
                            "(move the detail to docs/)")
    check_schemas(problems)
    for problem in problems:
        print(problem)
    if problems:
        sys.exit(1)
    print(f"check-docs: {count} links in {len(checked)} files resolve")


if __name__ == "__main__":
    main()
