#pragma once
// The arithmetic of ZooKeeper's majority quorums (QuorumMaj): one rule, used by the verdict, the
// restart plans and the membership views, so that no two places can disagree on it.

namespace zkverify {

// How many of `voters` make a quorum: more than half, so 3 of 4 and 4 of 6 (an even count gains no
// tolerance over the odd count below it).
constexpr int majority(int voters) { return voters / 2 + 1; }

static_assert(majority(1) == 1 && majority(2) == 2 && majority(3) == 2 && majority(4) == 3 && majority(5) == 3 &&
              majority(6) == 4 && majority(7) == 4);

}  // namespace zkverify
