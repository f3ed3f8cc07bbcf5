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

}  // namespace

TrapSubscriber::TrapSubscriber(MadRequester& requester, MadSender& sender, const RetryPolicy& policy,
                               Events events)
    : requester_(requester), sender_(sender), policy_(policy), events_(std::move(events)) {}

void TrapSubscriber::subscribe(std::uint16_t sm_lid, std::uint8_t sm_sl) {
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

bool TrapSubscriber::on_unsolicited(const ReceivedMad& mad) {
  auto report = mad::decode_report(mad.bytes);
  if (!report.ok()) return false;
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
