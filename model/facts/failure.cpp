#include "model/facts/failure.hpp"

#include "model/facts/named_category.hpp"

namespace zkverify {

std::string_view to_string(Failure failure) {
  switch (failure) {
    case Failure::usage: return "usage";
    case Failure::state_unreadable: return "state_unreadable";
    case Failure::state_unwritable: return "state_unwritable";
  }
  return "unknown";
}

const std::error_category& failure_category() {
  static const NamedCategory<Failure> category("zkverify");
  return category;
}

std::error_code make_error_code(Failure failure) { return {static_cast<int>(failure), failure_category()}; }

}  // namespace zkverify
