// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The shared "buffer too short" error of every decoder.
#include "mad/result.h"

namespace ibat::mad {

DecodeError too_short(std::string_view what, std::size_t need, std::size_t got) {
  return DecodeError{std::string(what) + ": need " + std::to_string(need) + " bytes, got " +
                     std::to_string(got)};
}

}  // namespace ibat::mad
