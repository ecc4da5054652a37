// --tls-ca, --tls-cert and --tls-key as TlsClient reads them: any bytes as each file. Only BadInput
// may come out (naming the option), and never the bytes of the key.
#include <unistd.h>

#include <fstream>
#include <string>

#include "fuzz_check.hpp"
#include "model/facts/failure.hpp"
#include "probes/tls.hpp"

namespace {

std::string write_scratch(const char* suffix, std::string_view bytes) {
  auto path = "/tmp/zkverify-fuzz-tls-" + std::to_string(::getpid()) + suffix;
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return path;
}

void load(const zkverify::probes::TlsSettings& settings, std::string_view key_bytes) {
  try {
    zkverify::probes::TlsClient client(settings);
    FUZZ_CHECK(!settings.cert_file || client.client_certificate());
  } catch (const zkverify::BadInput& error) {
    std::string_view message = error.what();
    FUZZ_CHECK(message.starts_with("--tls-"));
    FUZZ_CHECK(key_bytes.size() < 16 || message.find(key_bytes) == std::string_view::npos);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto bytes = fuzz::text_of(data, size);
  auto file = write_scratch(".pem", bytes);
  load({file, std::nullopt, std::nullopt, true}, "");
  load({ZKVERIFY_TLS_TEST_DATA "/ca.pem", ZKVERIFY_TLS_TEST_DATA "/client.pem", file, true}, bytes);
  load({ZKVERIFY_TLS_TEST_DATA "/ca.pem", file, ZKVERIFY_TLS_TEST_DATA "/client.key", true}, "");
  ::unlink(file.c_str());
  return 0;
}
