#pragma once
// zkverify's own Kerberos credentials as MIT's library finds them (KRB5_CONFIG, KRB5CCNAME): when
// they stop working, for the judge's kerberos-expiring. Facts only.

#include <optional>
#include <string>

#include "model/facts/credentials.hpp"

namespace zkverify::probes {

// With a keytab: a ticket from it, fresh (one exchange with the KDC, which says when the principal's
// key and account expire; the ticket itself is not kept). Without: the ticket cache's principal and
// its ticket-granting ticket. Blocks on the KDC (its own timeouts, krb5.conf's): call it from a worker.
KerberosFacts read_kerberos(const std::optional<std::string>& keytab);

}  // namespace zkverify::probes
