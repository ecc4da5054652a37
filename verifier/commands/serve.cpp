// Placeholder until the serve command is built: registers nothing but its name.
#include "verifier/commands/command.hpp"

#include <stdexcept>

namespace zkverify::verifier {
namespace {
class Placeholder final : public Command {
 public:
  [[nodiscard]] std::string_view name() const override { return "serve"; }
  CLI::App& add_to(CLI::App& app) override { return *app.add_subcommand("serve", "(not built yet)"); }
  int run(const Context&) override { throw std::logic_error("serve is not built yet"); }
};
}  // namespace
std::unique_ptr<Command> make_serve_command() { return std::make_unique<Placeholder>(); }
}  // namespace zkverify::verifier
