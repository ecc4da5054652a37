#include "probes/c_requests.hpp"

#include <algorithm>

namespace zkverify::probes::c_client {

void on_created_path(int rc, const char* path, const void* context) {
  auto result = with_error<CreateResult>(rc);
  if (rc == ZOK && path) result.path = path;
  take_back<Request<CreateResult>>(context)->deliver(std::move(result));
}

void on_read(int rc, const char* value, int length, const Stat* stat, const void* context) {
  auto result = with_error<GetResult>(rc);
  if (rc == ZOK) {
    if (value && length > 0) result.data.assign(value, static_cast<std::size_t>(length));
    result.stat = node_stat(stat);
  }
  take_back<Request<GetResult>>(context)->deliver(std::move(result));
}

void on_stat(int rc, const Stat* stat, const void* context) {
  auto result = with_error<StatResult>(rc);
  if (rc == ZOK) result.stat = node_stat(stat);
  take_back<Request<StatResult>>(context)->deliver(result);  // trivially copyable
}

void on_children(int rc, const String_vector* names, const void* context) {
  auto result = with_error<ChildrenResult>(rc);
  if (rc == ZOK && names) {
    for (std::int32_t i = 0; i < names->count; ++i) result.children.emplace_back(names->data[i]);
    std::ranges::sort(result.children);  // the server's order is arbitrary
  }
  take_back<Request<ChildrenResult>>(context)->deliver(std::move(result));
}

// Only the schemes are kept: a digest entry's id is USER:base64(sha1(USER:PASSWORD)).
void on_acl(int rc, ACL_vector* acl, Stat* /*stat*/, const void* context) {
  auto result = with_error<AclResult>(rc);
  if (rc == ZOK && acl) {
    for (std::int32_t i = 0; i < acl->count; ++i)
      if (acl->data[i].id.scheme) result.schemes.emplace_back(acl->data[i].id.scheme);
    std::ranges::sort(result.schemes);
    result.schemes.erase(std::unique(result.schemes.begin(), result.schemes.end()), result.schemes.end());
  }
  take_back<Request<AclResult>>(context)->deliver(std::move(result));
}

void on_done(int rc, const void* context) {
  take_back<Request<DoneResult>>(context)->deliver(with_error<DoneResult>(rc));
}

void on_synced(int rc, const char* /*path*/, const void* context) { on_done(rc, context); }

void on_multi_done(int rc, const void* context) {
  auto request = take_back<MultiRequest>(context);
  auto result = with_error<MultiResult>(rc);
  for (const auto& answer : request->answers)
    result.each.push_back(answer.err == MultiRequest::kUnanswered ? result.error : zk_error_from_code(answer.err));
  request->deliver(std::move(result));
}

namespace {

int length_of(const std::string& data) { return static_cast<int>(data.size()); }

}  // namespace

void describe(const MultiOp& request, zoo_op_t& op, ACL_vector* acl) {
  switch (request.kind) {
    case MultiOp::Kind::create:
      zoo_create_op_init(&op, request.path.c_str(), request.data.data(), length_of(request.data), acl,
                         create_flags(request.mode), nullptr, 0);
      return;
    case MultiOp::Kind::remove: zoo_delete_op_init(&op, request.path.c_str(), request.version); return;
    case MultiOp::Kind::set:
      zoo_set_op_init(&op, request.path.c_str(), request.data.data(), length_of(request.data), request.version,
                      nullptr);
      return;
    case MultiOp::Kind::check: zoo_check_op_init(&op, request.path.c_str(), request.version); return;
  }
}

}  // namespace zkverify::probes::c_client
