#!/usr/bin/python3
"""Validates zkverify's JSON output against the schemas in docs/schema.

    validate_json.py SCHEMA.json FILE      FILE ("-": stdin) against SCHEMA.json; when the schema has
                                           "x-json-lines": true, each non-empty line of FILE
    validate_json.py --check-schemas DIR   every DIR/*.json is a valid draft 2020-12 schema

Each error is printed with its JSON path and an excerpt of the instance there. Exit 0 valid, 1
invalid, 2 usage or unreadable (a file that cannot be read, a schema that is not JSON or not valid).
Uses Debian's python3-jsonschema (Draft202012Validator).
"""

import json
import pathlib
import sys

EXIT_VALID, EXIT_INVALID, EXIT_USAGE = 0, 1, 2
DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema"
EXCERPT_CHARS = 160
BRANCH_ERRORS = 3  # per oneOf/anyOf branch, when none of them matched

try:
    import jsonschema
    from jsonschema import Draft202012Validator
except ImportError as missing:  # pragma: no cover
    print(f"validate_json: {missing}: install python3-jsonschema (apt-get install python3-jsonschema)",
          file=sys.stderr)
    sys.exit(EXIT_USAGE)


class NotJson(Exception):
    pass


def usage(message=None):
    if message:
        print(f"validate_json: {message}", file=sys.stderr)
    print("usage: validate_json.py SCHEMA.json FILE\n       validate_json.py --check-schemas DIR", file=sys.stderr)
    return EXIT_USAGE


def strict_object(pairs):
    """json.loads' object hook: a key twice is an error (Python would keep the last silently)."""
    seen = {}
    for key, value in pairs:
        if key in seen:
            raise NotJson(f"duplicate key {key!r}")
        seen[key] = value
    return seen


def reject_constant(name):
    raise NotJson(f"{name} is not JSON")


def parse_json(text):
    """The JSON value of `text`; NotJson (with line and column) when it is none."""
    try:
        return json.loads(text, object_pairs_hook=strict_object, parse_constant=reject_constant)
    except json.JSONDecodeError as error:
        raise NotJson(f"not JSON: {error.msg} at line {error.lineno} column {error.colno}") from None


def read_text(path):
    if path == "-":
        return sys.stdin.read()
    return pathlib.Path(path).read_text(encoding="utf-8")


def excerpt(value):
    text = json.dumps(value, ensure_ascii=False, sort_keys=False)
    return text if len(text) <= EXCERPT_CHARS else text[: EXCERPT_CHARS - 3] + "..."


def json_path(error):
    path = getattr(error, "json_path", None)
    if path is not None:
        return path
    out = "$"
    for part in error.absolute_path:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


def branch_title(schema, index):
    branch = schema[index] if isinstance(schema, list) and index < len(schema) else {}
    if isinstance(branch, dict):
        for key in ("title", "description"):
            if isinstance(branch.get(key), str):
                text = branch[key]
                return text if len(text) <= 60 else text[:57] + "..."
        if "$ref" in branch:
            return branch["$ref"]
    return ""


def message_of(error):
    """The error's message, short: jsonschema quotes the whole instance in some (oneOf's)."""
    if error.validator in ("oneOf", "anyOf") and error.context:
        branches = error.validator_value if isinstance(error.validator_value, list) else []
        return f"matches none of the {len(branches)} {error.validator} branches"
    if error.validator == "oneOf":
        return "matches more than one oneOf branch"
    text = error.message
    return text if len(text) <= 2 * EXCERPT_CHARS else text[: 2 * EXCERPT_CHARS - 3] + "..."


def error_order(error):
    return (list(map(str, error.absolute_path)), error.message)


def print_error(error, prefix, indent=""):
    print(f"{indent}{prefix}{json_path(error)}: {message_of(error)}")
    print(f"{indent}  instance: {excerpt(error.instance)}")
    if error.validator in ("oneOf", "anyOf") and error.context:
        # No branch matched: the closest branches (fewest errors) in full, so that a renamed key or a
        # wrong type shows where it went wrong; the others by their first error.
        by_branch = {}
        for sub in error.context:
            by_branch.setdefault(sub.schema_path[0] if sub.schema_path else 0, []).append(sub)
        def wrong_type(subs):  # the branch wants another type here (e.g. the null of "X or null")
            return (len(subs) == 1 and subs[0].validator == "type" and
                    list(subs[0].absolute_path) == list(error.absolute_path))

        def rank(index):
            return (wrong_type(by_branch[index]), len(by_branch[index]))

        closest = min(rank(index) for index in by_branch)
        for index in sorted(by_branch, key=lambda i: (rank(i), i)):
            subs = sorted(by_branch[index], key=error_order)
            title = branch_title(error.validator_value, index)
            label = f"{indent}  {error.validator}[{index}]{' (' + title + ')' if title else ''}"
            if wrong_type(subs) and rank(index) != closest:
                print(f"{label}: not of type {json.dumps(subs[0].validator_value)} here")
                continue
            if rank(index) != closest:
                first = subs[0]
                print(f"{label}: {len(subs)} errors, e.g. {json_path(first)}: {message_of(first)}")
                continue
            print(f"{label}: closest, {len(subs)} error{'s' if len(subs) != 1 else ''}:")
            for sub in subs[:BRANCH_ERRORS]:
                print_error(sub, "", indent + "    ")
            if len(subs) > BRANCH_ERRORS:
                print(f"{indent}    ... and {len(subs) - BRANCH_ERRORS} more")


def load_schema(path):
    """The schema at `path`, checked; exits 2 when it cannot be used."""
    try:
        schema = parse_json(read_text(path))
        Draft202012Validator.check_schema(schema)
    except (OSError, UnicodeDecodeError) as error:
        print(f"validate_json: {path}: cannot read: {error}", file=sys.stderr)
        sys.exit(EXIT_USAGE)
    except NotJson as error:
        print(f"validate_json: {path}: {error}", file=sys.stderr)
        sys.exit(EXIT_USAGE)
    except jsonschema.exceptions.SchemaError as error:
        print(f"validate_json: {path}: not a valid schema: {json_path(error)}: {error.message}", file=sys.stderr)
        sys.exit(EXIT_USAGE)
    return schema


def validate_one(validator, instance, prefix):
    errors = sorted(validator.iter_errors(instance), key=error_order)
    for error in errors:
        print_error(error, prefix)
    return len(errors)


def validate_file(schema_path, file_path):
    schema = load_schema(schema_path)
    validator = Draft202012Validator(schema, format_checker=jsonschema.FormatChecker())
    try:
        text = read_text(file_path)
    except (OSError, UnicodeDecodeError) as error:
        print(f"validate_json: {file_path}: cannot read: {error}", file=sys.stderr)
        return EXIT_USAGE
    failures = 0
    if schema.get("x-json-lines") is True:
        lines = 0
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            lines += 1
            prefix = f"{file_path}:{number}: "
            try:
                instance = parse_json(line)
            except NotJson as error:
                print(f"{prefix}{error}")
                failures += 1
                continue
            failures += validate_one(validator, instance, prefix)
        if lines == 0:
            print(f"{file_path}: no JSON lines")
            failures += 1
        summary = f"{lines} line{'s' if lines != 1 else ''}"
    else:
        prefix = f"{file_path}: "
        try:
            instance = parse_json(text)
        except NotJson as error:
            print(f"{prefix}{error}")
            return EXIT_INVALID
        failures += validate_one(validator, instance, prefix)
        summary = "1 document"
    if failures:
        print(f"{file_path}: INVALID against {schema_path}: {failures} error{'s' if failures != 1 else ''}")
        return EXIT_INVALID
    print(f"{file_path}: valid against {schema_path} ({summary})")
    return EXIT_VALID


def check_schemas(directory):
    folder = pathlib.Path(directory)
    if not folder.is_dir():
        print(f"validate_json: {directory}: not a directory", file=sys.stderr)
        return EXIT_USAGE
    paths = sorted(folder.glob("*.json"))
    if not paths:
        print(f"validate_json: {directory}: no *.json", file=sys.stderr)
        return EXIT_USAGE
    bad = 0
    for path in paths:
        problems = []
        try:
            schema = parse_json(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError) as error:
            print(f"validate_json: {path}: cannot read: {error}", file=sys.stderr)
            return EXIT_USAGE
        except NotJson as error:
            problems.append(str(error))
            schema = None
        if schema is not None:
            try:
                Draft202012Validator.check_schema(schema)
            except jsonschema.exceptions.SchemaError as error:
                problems.append(f"not a valid schema: {json_path(error)}: {error.message}")
            if isinstance(schema, dict):
                if schema.get("$schema") != DRAFT_2020_12:
                    problems.append(f'"$schema" is not "{DRAFT_2020_12}"')
                for key in ("title", "description"):
                    if not isinstance(schema.get(key), str) or not schema[key]:
                        problems.append(f'no "{key}"')
        if problems:
            bad += 1
            for problem in problems:
                print(f"{path}: {problem}")
        else:
            print(f"{path}: ok")
    return EXIT_INVALID if bad else EXIT_VALID


def main(argv):
    if len(argv) == 2 and argv[0] == "--check-schemas":
        return check_schemas(argv[1])
    if argv and argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        return EXIT_VALID
    if len(argv) != 2 or any(arg.startswith("--") for arg in argv):
        return usage()
    return validate_file(argv[0], argv[1])


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except BrokenPipeError:  # | head
        sys.stderr.close()
        sys.exit(EXIT_INVALID)
