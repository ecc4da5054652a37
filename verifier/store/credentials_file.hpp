#pragma once
// The credentials file (--auth-file, or the file $ZKVERIFY_AUTH_FILE names): the only place the
// secret comes from, so that it never stands in the process's arguments or environment.

#include "probes/io.hpp"

#include <iosfwd>
#include <string>

#include "model/facts/credentials.hpp"

namespace zkverify::verifier {

// The file's credentials; a warning on `err` (naming the file and its mode) when group or others
// may read it. Throws a usage error naming the file and what is wrong, never quoting its text.
Credentials read_credentials_file(const std::string& path, std::ostream& err);

// The SASL password file (--sasl-password-file): one line, the password, checked and refused as the
// credentials file is.
std::string read_password_file(const std::string& path, std::ostream& err);

}  // namespace zkverify::verifier
