// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// TrapSubscriber: InformInfo subscriptions, Report handling and ReportResp.
#include "fabric/trap_subscriber.h"

#include <algorithm>

#include "mad/inform_info.h"
#include "mad/notice.h"
#include "mad/sa_mad.h"

namespace ibat::fabric {
namespace {

const MadExpectation kInformInfoAnswer{mad::mgmt_class::kSubnAdm, mad::method::kGetResp, mad::attr::kInformInfo,
                                       true};

const MadExpectation kInformInfoRecordAnswer{mad::mgmt_class::kSubnAdm, mad::method::kGetResp,
                                             mad::attr::kInformInfoRecord, true};
constexpr std::size_t kInformInfoRecordSize = 64;  // SubscriberGID, Enum, InformInfo, padding
constexpr std::uint64_t kIirMaskSubscriberGid = 1;

}  // namespace

void TrapSubscriber::check_subscribed(core::Lid sm_lid, std::uint8_t sm_sl, const core::Gid& subscriber,
                                      std::function<void(std::optional<bool>)> done) {
  std::array<std::uint8_t, kInformInfoRecordSize> record{};
  std::copy(subscriber.raw.begin(), subscriber.raw.end(), record.begin());
  mad::SaHeader sa;
  sa.component_mask = kIirMaskSubscriberGid;
  const mad::MadBuffer bytes =
      mad::build_sa_mad(mad::sa_request_header(mad::method::kGet, 0, mad::attr::kInformInfoRecord), sa, record);
  OutgoingMad out;
  out.route = MadRoute::sa;
  out.dlid = sm_lid;
  out.sl = sm_sl;
  out.bytes.assign(bytes.begin(), bytes.end());
  requester_.submit(std::move(out), kInformInfoRecordAnswer, policy_,
                    [done = std::move(done)](const MadAnswer* answer) {
                      if (!answer) return done(std::nullopt);
                      switch (answer->header.sa_status()) {
                        case mad::SaStatus::success:
                        case mad::SaStatus::too_many_records:  // a GET matching both of ours
                          return done(true);
                        case mad::SaStatus::no_records:
                          return done(false);
                        default:
                          return done(std::nullopt);
                      }
                    });
}

TrapSubscriber::TrapSubscriber(MadRequester& requester, MadSender& sender, const RetryPolicy& policy,
                               Events events)
    : requester_(requester), sender_(sender), policy_(policy), events_(std::move(events)) {}

void TrapSubscriber::subscribe(core::Lid sm_lid, std::uint8_t sm_sl) {
  for (std::uint16_t trap : {mad::kTrapGidInService, mad::kTrapGidOutOfService}) {
    const mad::MadBuffer bytes = mad::build_inform_info_set(0, mad::trap_subscription(trap));
    OutgoingMad out;
    out.route = MadRoute::sa;
    out.dlid = sm_lid;
    out.sl = sm_sl;
    out.bytes.assign(bytes.begin(), bytes.end());
    requester_.submit(std::move(out), kInformInfoAnswer, policy_, [this, trap](const MadAnswer* answer) {
      const bool ok = answer && answer->header.status == 0;
      if (events_.on_subscribed) events_.on_subscribed(trap, ok);
    });
  }
}

bool TrapSubscriber::seen_recently(std::uint64_t tid) {
  if (std::find(recent_tids_.begin(), recent_tids_.end(), tid) != recent_tids_.end()) return true;
  recent_tids_[next_recent_] = tid;
  next_recent_ = (next_recent_ + 1) % recent_tids_.size();
  return false;
}

bool TrapSubscriber::on_unsolicited(const ReceivedMad& mad, core::Lid sm_lid) {
  auto report = mad::decode_report(mad.bytes);
  if (!report.ok()) return false;
  if (sm_lid.value == 0 || mad.slid != sm_lid) {
    ++rejected_reports_;
    return true;
  }
  ++reports_;
  const mad::MadBuffer resp = mad::build_report_resp(*report);
  OutgoingMad out;
  out.route = MadRoute::sa;
  out.dlid = mad.slid;
  out.remote_qpn = mad.source_qpn;
  out.bytes.assign(resp.begin(), resp.end());
  sender_.send(out);  // a lost ReportResp only makes OpenSM resend the Report
  if (seen_recently(report->header.tid)) return true;
  const auto gid = report->notice.gid_in_out_of_service();
  if (!gid) return true;
  if (report->notice.trap_number == mad::kTrapGidInService && events_.on_gid_in_service) {
    events_.on_gid_in_service(*gid);
  } else if (report->notice.trap_number == mad::kTrapGidOutOfService && events_.on_gid_out_of_service) {
    events_.on_gid_out_of_service(*gid);
  }
  return true;
}

}  // namespace ibat::fabric
