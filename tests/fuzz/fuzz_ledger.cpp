// The ledger's JSON (the state file's content: ledger_from_json), which anyone who can write the file
// controls. Only std::invalid_argument may come out; a ledger read is written back and read the same.
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "fuzz_check.hpp"
#include "model/judge/ledger.hpp"
#include "model/render/json_text.hpp"

using namespace zkverify;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto json = nlohmann::json::parse(fuzz::text_of(data, size), nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) return 0;  // the state file reports invalid JSON before the ledger is read
  Ledger ledger;
  try {
    ledger = ledger_from_json(json);
  } catch (const std::invalid_argument& error) {
    FUZZ_CHECK(error.what()[0] != '\0');
    return 0;
  }
  auto written = to_json(ledger);
  FUZZ_CHECK(to_json(ledger_from_json(written)) == written);
  // What the state file writes: never throws, whatever bytes the strings hold.
  FUZZ_CHECK(!json_text(written).empty());
  return 0;
}
