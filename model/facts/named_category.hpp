#pragma once
// An std::error_category whose messages are an enum's stable names (its to_string), so that an
// error_code prints as findings and JSON do.

#include <string>
#include <system_error>

namespace zkverify {

template <class Enum>
class NamedCategory : public std::error_category {
 public:
  explicit NamedCategory(const char* name) : name_(name) {}
  [[nodiscard]] const char* name() const noexcept override { return name_; }
  [[nodiscard]] std::string message(int value) const override {
    return std::string(to_string(static_cast<Enum>(value)));
  }

 private:
  const char* name_;
};

}  // namespace zkverify
