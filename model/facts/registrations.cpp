#include "model/facts/registrations.hpp"

#include <fmt/format.h>

namespace zkverify {

std::vector<std::string> kafka_client_paths() { return {"/brokers/ids", "/controller", "/controller_epoch"}; }

std::string session_text(std::int64_t session) { return fmt::format("0x{:x}", static_cast<std::uint64_t>(session)); }

}  // namespace zkverify
