#pragma once
// Included by every header that does I/O (sockets, the C client). The pure libraries (the parsers,
// verifier/judge, verifier/render) are compiled with ZKVERIFY_PURE, so including one there fails
// the build: the rule "pure code includes no I/O header" holds by construction.
#ifdef ZKVERIFY_PURE
#error \
    "an I/O header was included from pure code (verifier/judge, verifier/render, the parsers): move the I/O to probes/ or verifier/commands/"
#endif
