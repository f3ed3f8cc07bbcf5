// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Result<T>: what every mad/ decoder returns — either the decoded value or a DecodeError that says
// what was wrong with the bytes. Decoders never throw and never read past the end of their input.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace ibat::mad {

struct DecodeError {
  std::string message;
};

// "<what>: need <need> bytes, got <got>" — the error for every short buffer.
DecodeError too_short(std::string_view what, std::size_t need, std::size_t got);

template <class T>
class Result {
 public:
  Result(T value) : state_(std::move(value)) {}           // NOLINT: implicit by design
  Result(DecodeError error) : state_(std::move(error)) {}  // NOLINT: implicit by design

  bool ok() const { return std::holds_alternative<T>(state_); }
  explicit operator bool() const { return ok(); }

  // value() and error() throw std::bad_variant_access when called on the wrong alternative.
  const T& value() const& { return std::get<T>(state_); }
  T&& value() && { return std::get<T>(std::move(state_)); }
  const DecodeError& error() const { return std::get<DecodeError>(state_); }
  const T& operator*() const& { return value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<T, DecodeError> state_;
};

}  // namespace ibat::mad
