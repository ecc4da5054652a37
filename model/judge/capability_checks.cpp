// What zkverify could use (the whitelist, the AdminServer), the servers' releases, and the TLS
// certificates' expiry.

#include <algorithm>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "model/facts/text.hpp"
#include "model/facts/time_text.hpp"
#include "model/judge/check_parts.hpp"
#include "model/judge/checks.hpp"
#include "model/judge/derived.hpp"
#include "model/parse/parsers.hpp"

namespace zkverify {

namespace {

// Mid-upgrade from 3.4: its servers answered every word without a whitelist (3.4.10+ reads the
// line too, so it is safe on both), while 3.5 and later answer only srvr until zoo.cfg lists them.
std::string upgrade_hint(const EnsembleFacts& facts) {
  auto answered_on_34 = [](const ServerProbe& probe) {
    return has_facts(probe.srvr) && probe.srvr->facts.version.starts_with("3.4.") && probe.refused_words.empty();
  };
  if (std::ranges::none_of(facts.probes, answered_on_34)) return {};
  return " (the 3.4 servers answered these words without it; 3.5 and later answer only srvr until the line is in "
         "their zoo.cfg)";
}

bool expiring(const CertificateFacts& certificate, const TlsCheckFacts& tls) {
  return certificate.not_after - tls.now < tls.expiry_warning;
}

}  // namespace

void check_capabilities(const EnsembleFacts& facts, const Derived& /*derived*/, Findings& findings) {
  std::map<std::string, std::vector<std::string>> refused;  // word -> servers
  for (const auto& probe : facts.probes) {
    for (const auto& word : probe.refused_words) refused[word].push_back(probe.address.name);
    if (!probe.admin_error.empty()) findings.add(FindingCode::admin_unavailable, probe.address.name, probe.admin_error);
  }
  if (refused.empty()) return;
  std::vector<std::string> words, parts;
  for (const auto& [word, names] : refused) {
    words.push_back(word);
    parts.push_back(fmt::format("{} on {}", word, fmt::join(names, ",")));
  }
  findings.add(FindingCode::not_whitelisted, "",
               fmt::format("not whitelisted: {}; zkverify used srvr instead. To enable them, add this line to each "
                           "server's zoo.cfg: {}{}",
                           fmt::join(parts, "; "), whitelist_line(words), upgrade_hint(facts)));
}

// Mid-upgrade, servers run different versions: expected, and worth a line.
void check_versions(const EnsembleFacts& facts, const Derived& /*derived*/, Findings& findings) {
  std::map<std::string, std::vector<std::string>> servers_by_version;
  for (const auto& probe : facts.probes)
    if (has_facts(probe.srvr) && !probe.srvr->facts.version.empty())
      servers_by_version[release_of(probe.srvr->facts.version)].push_back(probe.address.name);
  if (servers_by_version.size() < 2) return;
  std::vector<std::string> parts;
  for (const auto& [version, names] : servers_by_version)
    parts.push_back(fmt::format("{} on {}", version, fmt::join(names, ", ")));
  findings.add(
      FindingCode::mixed_versions, "",
      fmt::format("servers run different ZooKeeper versions (expected during an upgrade): {}", fmt::join(parts, "; ")));
}

// An expiring certificate in the middle of an upgrade is an outage waiting: the servers' (an expired
// one already failed its handshake: unreachable says so), and zkverify's own.
void check_certificates(const EnsembleFacts& facts, const Derived& derived, Findings& findings) {
  if (!facts.tls) return;
  const auto& tls = *facts.tls;
  for (const auto& row : derived.rows)
    if (row.certificate && expiring(*row.certificate, tls) && row.certificate->not_after > tls.now)
      findings.add(FindingCode::tls_cert_expiring, row.name,
                   fmt::format("{}'s certificate ({}) expires on {}, in {}", row.name, row.certificate->subject,
                               iso8601(row.certificate->not_after), counted(row.certificate_days_left, "day")));
  if (!tls.client_certificate || !expiring(*tls.client_certificate, tls)) return;
  const auto& own = *tls.client_certificate;
  findings.add(FindingCode::tls_cert_expiring, "",
               own.not_after <= tls.now
                   ? fmt::format("zkverify's client certificate ({}, --tls-cert) expired on {}: the servers refuse it",
                                 own.subject, iso8601(own.not_after))
                   : fmt::format("zkverify's client certificate ({}, --tls-cert) expires on {}, in {}", own.subject,
                                 iso8601(own.not_after), counted(days_left(own, tls.now), "day")));
}

namespace {

constexpr auto kTicketWarning = std::chrono::hours(1);           // a ticket cache's: renew it now
constexpr auto kPrincipalWarning = std::chrono::hours(24 * 14);  // the realm's admins need days

std::chrono::milliseconds left(KerberosFacts::Time when, KerberosFacts::Time now) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(when - now);
}

// "expires on T, in 3 days" (or "5 h", "29m59s") or "expired on T".
std::string expiry(KerberosFacts::Time when, KerberosFacts::Time now) {
  if (when <= now) return fmt::format("expired on {}", iso8601(when));
  auto span = left(when, now);
  auto in = span >= std::chrono::hours(48)  ? counted(std::chrono::round<std::chrono::days>(span).count(), "day")
            : span >= std::chrono::hours(2) ? fmt::format("{} h", std::chrono::round<std::chrono::hours>(span).count())
                                            : format_duration(span);
  return fmt::format("expires on {}, in {}", iso8601(when), in);
}

}  // namespace

// A ticket cache's ticket ends (a sidecar or a watch that outlives it is refused from then on); a
// keytab's principal expires (its keytab stops working). An expired ticket is also the sessions'
// refusal (auth-failed): this says why.
void check_kerberos(const EnsembleFacts& facts, const Derived& /*derived*/, Findings& findings) {
  if (!facts.kerberos) return;
  const auto& k = *facts.kerberos;
  auto who = fmt::format("zkverify's Kerberos principal {} ({})", k.principal, k.source);
  if (!k.from_keytab && k.ticket_ends && left(*k.ticket_ends, k.read_at) < kTicketWarning) {
    auto renew = k.renewable_until && *k.renewable_until > *k.ticket_ends
                     ? fmt::format(": renew it (kinit -R, renewable until {})", iso8601(*k.renewable_until))
                     : std::string(": get a new one (kinit), or give --sasl-keytab");
    findings.add(FindingCode::kerberos_expiring, "",
                 fmt::format("{}: its ticket {}{}", who, expiry(*k.ticket_ends, k.read_at), renew));
  }
  if (k.principal_expires && left(*k.principal_expires, k.read_at) < kPrincipalWarning)
    findings.add(FindingCode::kerberos_expiring, "",
                 fmt::format("{}: the KDC says its password or account {} (its keytab stops working then)", who,
                             expiry(*k.principal_expires, k.read_at)));
}

std::optional<ClientTls> client_tls(const EnsembleFacts& facts) {
  if (!facts.tls) return std::nullopt;
  ClientTls tls{facts.tls->client_certificate, 0};
  if (tls.certificate) tls.days_left = days_left(*tls.certificate, facts.tls->now);
  return tls;
}

}  // namespace zkverify
