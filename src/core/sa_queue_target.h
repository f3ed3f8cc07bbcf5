// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The one delay target of a port's SA admission (docs/design.md, "Admission"): the queueing at the
// SA that every part of the admission aims to stay below. The SaPacer steers its GETs' window by
// it, and the table gate lets a GetTable go only when a probe found less: both see the same queue.
#pragma once

#include "core/clock.h"

namespace ibat::core {

// Long enough to tell a standing queue from one slow answer or a fabric's hop delays, and far
// inside the seconds after which an SA drops what it queued (OpenSM: a FIFO that drops silently),
// so that a queue held at the target never costs a loss.
inline constexpr Duration kSaQueueTarget = std::chrono::milliseconds(25);

}  // namespace ibat::core
