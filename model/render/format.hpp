#pragma once
// How output is rendered: for people (text) or for scripts (JSON).

namespace zkverify {

enum class OutputFormat { text, json };

}  // namespace zkverify
