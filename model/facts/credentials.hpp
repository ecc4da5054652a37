#pragma once
// Credentials a session presents (zoo_add_auth), and the pure parser of the file that holds them.
// The password is a secret: nothing here prints it, and no error message quotes the file's text.

#include <string>
#include <string_view>

#include "model/facts/failure.hpp"

namespace zkverify {

struct Credentials {
  std::string scheme;  // "digest": the only scheme this C client can use (it has no SASL)
  std::string user;
  std::string password;  // never printed, logged or stored
};

// What zoo_add_auth is given for `credentials`: "USER:PASSWORD" for digest.
std::string auth_data(const Credentials& credentials);

// One line "digest:USER:PASSWORD" (a trailing "\n" or "\r\n" tolerated; the password may hold ':').
// Throws BadInput saying what is wrong, never quoting the text (it may be the secret).
Credentials parse_credentials(std::string_view text);

}  // namespace zkverify
