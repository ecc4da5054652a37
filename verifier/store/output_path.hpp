#pragma once
// An output file (--state, --junit, --report) checked when the flag is read, before anything is
// probed: a run that could not write its result would hide the result it found.

#include <string>
#include <string_view>

namespace zkverify {

// Throws BadInput (exit 64) when `path` is a directory or not a regular file, and
// Error(Failure::state_unwritable) (exit 74) when its directory is missing or not writable; each
// names `flag` and `path`. An existing file is left as it is; one that is read before it is written
// (`read_first`: the ledger) and cannot be read is left to its reader, whose error says why (64).
void check_output_path(std::string_view flag, const std::string& path, bool read_first = false);

}  // namespace zkverify
