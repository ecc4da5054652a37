#include "probes/c_create.hpp"

namespace zkverify::probes::c_client {

namespace {

// The created node's stat, from exists on the same session (it reads its own write).
void stat_created(CSession& session, CreateResult created, Keeper::Callback<CreateResult> done) {
  auto path = created.path;
  auto request = std::make_shared<Request<StatResult>>(
      session.strand(), [created = std::move(created), done = std::move(done)](StatResult stat) mutable {
        if (stat.error == ZkError::ok) created.stat = stat.stat;
        else created.error = stat.error;  // created, but its czxid is unknown: the path says what to remove
        done(std::move(created));
      });
  session.submit(request, [path](zhandle_t* zh, const void* context) {
    return zoo_aexists(zh, path.c_str(), 0, &on_stat, context);
  });
}

}  // namespace

void create_then_stat(const std::shared_ptr<CSession>& session, const PlainCreate& create,
                      Keeper::Callback<CreateResult> done) {
  // The completion runs on the strand: the stat is submitted there, right behind it.
  auto request = std::make_shared<Request<CreateResult>>(
      session->strand(), [session, done = std::move(done)](CreateResult created) mutable {
        if (created.error != ZkError::ok) return done(std::move(created));
        stat_created(*session, std::move(created), std::move(done));
      });
  session->submit(request, [create](zhandle_t* zh, const void* context) {
    return zoo_acreate(zh, create.path.c_str(), create.data.data(), static_cast<int>(create.data.size()), create.acl,
                       create_flags(create.mode), &on_created_path, context);
  });
}

}  // namespace zkverify::probes::c_client
