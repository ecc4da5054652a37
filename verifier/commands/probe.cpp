// Placeholder until the probe command is built: registers nothing but its name.
#include "verifier/commands/command.hpp"

#include <stdexcept>

namespace zkverify::verifier {
namespace {
class Placeholder final : public Command {
 public:
  [[nodiscard]] std::string_view name() const override { return "probe"; }
  CLI::App& add_to(CLI::App& app) override { return *app.add_subcommand("probe", "(not built yet)"); }
  int run(const Context&) override { throw std::logic_error("probe is not built yet"); }
};
}  // namespace
std::unique_ptr<Command> make_probe_command() { return std::make_unique<Placeholder>(); }
}  // namespace zkverify::verifier
