#!/usr/bin/env python3
"""The house rules a compiler does not check, over every source of zkverify; prints each breach as
FILE:LINE: what, and exits 1 if there is any.

- Includes go only downward (ARCHITECTURE.md): each folder may include itself and the folders below
  it, never above; the model includes no I/O header of the system or of a library either.
- No detached thread (`.detach()`), no sleeping poll loop (`sleep_for` / `sleep_until`) outside the
  tests: waits are timers and condition variables with deadlines.
- Condition variables only in the executor, the actor primitive and the stop signals; a mutex only
  there or as one of the leaf locks ARCHITECTURE.md names (LEAF_LOCKS); no condition-variable wait
  cut into slices (`wait_until(lock, std::min(...))`: a second event to look at belongs in the wait).
- No function longer than 60 lines (scripts/function-lengths.py's reading of a function).
- No test name with a ';' (CTest splits it into two entries that match no test).
- The unit tests listed as pure (tests/CMakeLists.txt: ZKVERIFY_PURE_UNIT_TESTS, left out of the TSan
  build) include model/ headers and the pure test helpers only, and no thread header.
"""
import re
import subprocess
import sys
from pathlib import Path

TOP = Path(__file__).resolve().parent.parent

# Each folder, and the folders it may include (besides itself). Order is the layering, bottom first.
LAYERS = {
    "model/facts": [],
    "model/parse": ["model/facts"],
    "model/books": ["model/facts"],
    "model/judge": ["model/facts", "model/parse", "model/books"],
    "model/render": ["model/facts", "model/parse", "model/books", "model/judge"],
    "probes": ["model"],
    "verifier/store": ["model", "probes/io.hpp"],
    "verifier/check": ["model", "probes", "verifier/store"],
    "verifier/sidecar": ["model", "probes", "verifier/store", "verifier/check"],
    "verifier/commands": ["model", "probes", "verifier/store", "verifier/check", "verifier/sidecar"],
    "verifier/main.cpp": ["probes", "verifier/commands"],
}

# System and library headers that mean I/O, threads or a clock read: never in the model.
IMPURE = re.compile(
    r"<(thread|future|mutex|condition_variable|fstream|iostream|filesystem|unistd\.h|sys/.*|netdb\.h|"
    r"arpa/.*|netinet/.*|spawn\.h|pwd\.h|boost/asio.*|boost/beast.*|zookeeper/.*)>")

# The test helpers that run no thread, and the headers that start or synchronise threads.
PURE_HELPERS = {"synthetic.hpp", "test_data.hpp"}
THREADS = re.compile(r"<(thread|future|mutex|condition_variable|semaphore|latch|barrier|stop_token|boost/asio.*)>")

# Where a condition variable may be (and its mutex).
WAITS = {"probes/executor.hpp", "probes/executor.cpp", "probes/actor.hpp", "probes/actor.cpp",
         "probes/stop_signals.hpp", "probes/stop_signals.cpp"}
# Mutexes that guard a value and cross no wait and no call out (ARCHITECTURE.md, "Locks").
LEAF_LOCKS = {"probes/tls.hpp", "probes/tls.cpp", "probes/relay.hpp", "probes/sasl_client.cpp", "probes/round_trip.cpp",
              "verifier/sidecar/session_lender.hpp",
              "verifier/sidecar/stoppable_factory.hpp", "verifier/commands/serve.cpp"}

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^">]+)[">]')


def layer_of(relative):
    best = None
    for folder in LAYERS:
        if relative == folder or relative.startswith(folder + "/"):
            if best is None or len(folder) > len(best):
                best = folder
    return best


def allowed(layer, target):
    if target == layer or target.startswith(layer + "/"):
        return True
    if layer == "verifier/main.cpp" and target.startswith("verifier/"):
        return target.startswith("verifier/commands/")
    return any(target == a or target.startswith(a + "/") for a in LAYERS[layer])


def includes(path):
    """Each #include of the file: its line number, '<' or '"', and what it names."""
    for number, line in enumerate(path.read_text().splitlines(), 1):
        match = INCLUDE.match(line)
        if match:
            yield number, *match.groups()


def check_includes(path, relative, problems):
    layer = layer_of(relative)
    if layer is None:
        return
    for number, kind, target in includes(path):
        if kind == '"' and "/" in target and not allowed(layer, target):
            problems.append(f"{relative}:{number}: {layer} may not include \"{target}\" (includes go only downward)")
        if kind == "<" and layer.startswith("model/") and IMPURE.match(f"<{target}>"):
            problems.append(f"{relative}:{number}: the model is pure: <{target}> is I/O, a thread or a clock")


def check_patterns(path, relative, problems):
    if relative.startswith("tests/"):
        for number, line in enumerate(path.read_text().splitlines(), 1):
            name = re.match(r'\s*TEST_CASE\("([^"]*)"', line)
            if name and ";" in name.group(1):
                problems.append(f"{relative}:{number}: a test name with ';' (CTest splits it into two entries)")
        return
    for number, line in enumerate(path.read_text().splitlines(), 1):
        code = line.split("//")[0]
        if ".detach()" in code:
            problems.append(f"{relative}:{number}: a detached thread (join it, or hand the work to the executor)")
        if re.search(r"\bsleep_(for|until)\s*\(", code):
            problems.append(f"{relative}:{number}: a sleep (wait for the event, with a deadline: a timer or a condition)")
        check_locks(relative, number, code, problems)


def check_locks(relative, number, code, problems):
    if re.search(r"std::condition_variable(_any)?\b", code) and relative not in WAITS:
        problems.append(f"{relative}:{number}: a condition variable (await an answer on the executor, or tell an actor)")
    if re.search(r"std::(recursive_|shared_|timed_)?mutex\b", code) and relative not in WAITS | LEAF_LOCKS:
        problems.append(f"{relative}:{number}: a mutex that is not a named leaf lock (state belongs to an actor; "
                        "or name it in LEAF_LOCKS and ARCHITECTURE.md)")
    if re.search(r"\.wait_(until|for)\(\s*\w+\s*,\s*std::min\(", code):
        problems.append(f"{relative}:{number}: a wait cut into slices (wake on the event itself)")


def check_pure_tests(problems):
    cmake = (TOP / "tests" / "CMakeLists.txt").read_text()
    listed = re.search(r"set\(ZKVERIFY_PURE_UNIT_TESTS\s+([^)]*)\)", cmake)
    if not listed:
        problems.append("tests/CMakeLists.txt: no set(ZKVERIFY_PURE_UNIT_TESTS ...)")
        return
    for name in listed.group(1).split():
        relative = f"tests/{name}"
        for number, kind, target in includes(TOP / relative):
            if (kind == '"' and not target.startswith("model/") and target not in PURE_HELPERS) or \
                    (kind == "<" and THREADS.match(f"<{target}>")):
                problems.append(f"{relative}:{number}: listed as a pure unit test (no TSan), but includes "
                                f"{kind}{target}{'>' if kind == '<' else kind}")


def check_unit_test_names(problems):
    # CTest runs each unit test case by its name (catch_discover_tests): Catch2 reads a name that
    # starts with '-' as an option, and the case fails without running.
    for path in sorted((TOP / "tests" / "unit").glob("*.cpp")):
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if re.search(r'TEST_CASE\(\s*"-', line):
                problems.append(f"tests/unit/{path.name}:{number}: a test case named with a leading '-' "
                                "(CTest's Catch2 reads it as an option)")


def check_lengths(problems, limit=60):
    script = TOP / "scripts" / "function-lengths.py"
    out = subprocess.run([sys.executable, str(script), "100000"], capture_output=True, text=True, check=True).stdout
    for row in out.splitlines():
        length, where, *_ = row.split(maxsplit=2)
        if int(length) > limit:
            problems.append(f"{where}: a function of {length} lines (at most {limit})")


def main():
    problems = []
    for root in ("model", "probes", "verifier", "tests"):
        for path in sorted((TOP / root).rglob("*.[ch]pp")):
            relative = path.relative_to(TOP).as_posix()
            check_includes(path, relative, problems)
            check_patterns(path, relative, problems)
    check_pure_tests(problems)
    check_unit_test_names(problems)
    check_lengths(problems)
    for problem in problems:
        print(problem)
    if problems:
        print(f"check-house: {len(problems)} breaches of the house rules", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
