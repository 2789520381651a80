// The public API's edge: whatever an inner layer throws leaves as a flexjit::Error. Errors that
// already are flexjit::Error pass unchanged; a std::logic_error (ir::InternalError, a broken
// precondition) becomes flexjit::InternalError; any other std::exception becomes flexjit::Error.
// std::bad_alloc passes through: there is nothing useful to add to it.
#pragma once

#include <string_view>
#include <utility>

namespace flexjit::api {

// Call from inside a catch block only: rethrows the exception in flight, translated. `context`
// (an entry name, a program name) prefixes translated messages.
[[noreturn]] void rethrow_as_flexjit_error(std::string_view context);

// Runs `body`, translating what it throws.
template <class Body>
decltype(auto) at_api_boundary(std::string_view context, Body&& body) {
  try {
    return std::forward<Body>(body)();
  } catch (...) {
    rethrow_as_flexjit_error(context);
  }
}

}  // namespace flexjit::api
