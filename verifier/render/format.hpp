#pragma once
// How output is rendered: for people (text) or for scripts (JSON).

namespace zkverify::verifier {

enum class OutputFormat { text, json };

}  // namespace zkverify::verifier
