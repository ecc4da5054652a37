#include "integration/manifest_config.hpp"

#include <fmt/format.h>

namespace lab {

namespace {

// A Python list of (a, b) string pairs; the values are the lab's paths and lists (no quotes in them).
std::string python_pairs(const std::vector<std::pair<std::string, std::string>>& pairs) {
  std::string text = "[";
  for (const auto& [from, to] : pairs) text += fmt::format("(r\"{}\", r\"{}\"), ", from, to);
  return text + "]";
}

}  // namespace

Run run_manifest_config(const ManifestConfig& config) {
  auto script = fmt::format(R"sh(set -eu
w=$(mktemp -d); pid=; trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$w"' EXIT
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 - {}/deploy/kubernetes/{} "$w/zkverify.toml" "$port" <<'PYTHON'
import re, sys, yaml
maps = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d and d["kind"] == "ConfigMap"]
text = maps[0]["data"]["zkverify.toml"]
for key, value in {} + [("listen", "127.0.0.1:" + sys.argv[3])]:
    text, n = re.subn(r"^" + re.escape(key) + r" = .*$", key + ' = "' + value + '"', text, flags=re.M)
    assert n == 1, key + " is not in the configuration"
for path, lab_path in {}:
    assert path in text, path + " is not in the configuration"
    text = text.replace(path, lab_path)
assert "/etc/zkverify" not in text, text
open(sys.argv[2], "w").write(text)
PYTHON
timeout 120 "$ZKVERIFY" quorum --config "$w/zkverify.toml" | head -1
if {}; then
  timeout 120 "$ZKVERIFY" smoke --config "$w/zkverify.toml" --junit "$w/smoke.xml" >"$w/smoke.out" && echo "smoke passed" ||
    {{ grep -v '^PASS' "$w/smoke.out" || true; }}
fi
timeout -k 5 60 "$ZKVERIFY" serve --config "$w/zkverify.toml" --local pzoo-1 >"$w/serve.log" 2>&1 &
pid=$!
end=$(($(date +%s) + 40))
until [ "$(curl -s -o /dev/null -w '%{{http_code}}' "http://127.0.0.1:$port/readyz")" = 200 ]; do
  [ "$(date +%s)" -lt "$end" ] || {{ echo "never ready"; cat "$w/serve.log"; exit 1; }}; sleep 0.2; done
echo "serve ready"
)sh",
                            ZKVERIFY_SOURCE_DIR, config.manifest, python_pairs(config.keys), python_pairs(config.paths),
                            config.smoke ? "true" : "false");
  return sh(script);
}

}  // namespace lab
