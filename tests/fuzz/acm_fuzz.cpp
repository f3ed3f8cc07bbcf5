// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Fuzzes the ACM v1 codec as a server sees it: frame a byte stream, decode each message, and answer
// every decoded request (success or status response), checking each answer fits an acm_msg.
#include <cstdlib>

#include "server/acm/acm_messages.h"

namespace {

using namespace ibat::acm;

std::vector<std::uint8_t> answer(const Request& request) {
  if (const auto* r = std::get_if<ResolvePathRequest>(&request)) return encode(ResolveResponse{r->tid, Status::success, r->path, {}});
  if (const auto* r = std::get_if<ResolveAddressRequest>(&request))
    return encode(ResolveResponse{r->tid, Status::success, {}, r->source});
  if (const auto* r = std::get_if<PerfQueryRequest>(&request))
    return encode(PerfQueryResponse{r->tid, Status::success, std::vector<std::uint64_t>(kCounterCount, 1)});
  const auto& r = std::get<EpQueryRequest>(request);
  return encode(EpQueryResponse{r.tid, Status::success, EpConfig{1, r.port, 1, {}, "ibat", {"10.0.0.1"}}});
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::span<const std::uint8_t> rest(data, size);
  while (!rest.empty()) {
    const Framing f = frame(rest);
    if (f.kind != Framing::Kind::complete) break;
    if (f.length < kHeaderLength || f.length > rest.size()) std::abort();
    auto decoded = decode_request(rest.first(f.length));
    std::vector<std::uint8_t> reply;
    if (const auto* e = std::get_if<RequestError>(&decoded)) {
      if (e->fatal) break;
      reply = encode_status_response(e->opcode, e->tid, e->status);
    } else {
      reply = answer(std::get<Request>(decoded));
    }
    if (reply.size() < kHeaderLength || reply.size() > kMaxMessageLength) std::abort();
    rest = rest.subspan(f.length);
  }
  return 0;
}
