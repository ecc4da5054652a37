#!/usr/bin/env bash
# Tests the alerting rules for the sidecar's metrics, without a Prometheus server:
#   - promtool check rules deploy/prometheus/zkverify-rules.yml (syntax, PromQL, templates);
#   - promtool test rules tests/prometheus/zkverify-rules.test.yml (each alert firing and quiet);
#   - yamllint -d relaxed on both files;
#   - every alert has a severity, a summary and a description, and a runbook_url of one common base
#     ending in docs/alerting.md#<its name in lowercase>, a heading docs/alerting.md has.
#   tests/prometheus/test-rules.sh
# Needs promtool (Debian's prometheus package), yamllint and python3-yaml; scripts/install-deps.sh
# installs them. Exit 0 when all passed; the first failure is printed as FAIL: ... and exits 1.
set -euo pipefail
cd "$(dirname "$0")/../.."

rules=deploy/prometheus/zkverify-rules.yml
tests=tests/prometheus/zkverify-rules.test.yml
page=docs/alerting.md

fail() { echo "FAIL: $*" >&2; exit 1; }
run() {
  echo "+ $*"
  "$@" || fail "'$*' exited $?"
}

for tool in promtool yamllint python3; do
  command -v "$tool" >/dev/null || fail "$tool is not installed (scripts/install-deps.sh installs it)"
done

run promtool check rules "$rules"
run promtool test rules "$tests"
run yamllint -d relaxed "$rules" "$tests"

echo "+ the alerts' labels, annotations and runbook_url against $page"
python3 - "$rules" "$page" <<'PY' || fail "the alerts of $rules do not match what $page and this test expect"
import sys
import yaml

rules, page = sys.argv[1], sys.argv[2]
with open(page, encoding="utf-8") as f:
    headings = {line[3:].strip() for line in f if line.startswith("## ")}
with open(rules, encoding="utf-8") as f:
    groups = yaml.safe_load(f)["groups"]
problems, bases, count = [], set(), 0
for rule in (rule for group in groups for rule in group["rules"] if "alert" in rule):
    name, count = rule["alert"], count + 1
    labels, annotations = rule.get("labels", {}), rule.get("annotations", {})
    if labels.get("severity") not in ("critical", "warning"):
        problems.append(f"{name}: labels.severity is {labels.get('severity')!r}, not critical or warning")
    for key in ("summary", "description"):
        if not annotations.get(key):
            problems.append(f"{name}: no annotations.{key}")
    url = annotations.get("runbook_url", "")
    base, _, anchor = url.partition("/docs/alerting.md#")
    if anchor != name.lower():
        problems.append(f"{name}: runbook_url {url!r} does not end in /docs/alerting.md#{name.lower()}")
    bases.add(base)
    if name not in headings:
        problems.append(f"{name}: {page} has no heading '## {name}'")
if len(bases) > 1:
    problems.append(f"the runbook_urls have more than one base: {', '.join(sorted(bases))}")
for problem in problems:
    print(problem, file=sys.stderr)
if problems or not count:
    sys.exit(1)
print(f"{count} alerts, each with severity, summary, description and {base}/docs/alerting.md#<name>")
PY

echo "test-rules: all passed"
