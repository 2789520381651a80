#include "api/boundary.hpp"

#include <fmt/format.h>

#include <new>
#include <stdexcept>

#include "flexjit/error.hpp"

namespace flexjit::api {

void rethrow_as_flexjit_error(std::string_view context) {
  try {
    throw;
  } catch (const Error&) {
    throw;
  } catch (const std::bad_alloc&) {
    throw;
  } catch (const std::logic_error& e) {
    throw InternalError(fmt::format("{}: internal error: {} (this is a bug in flexjit; please report it)", context,
                                    e.what()));
  } catch (const std::exception& e) {
    throw Error(fmt::format("{}: {}", context, e.what()));
  }
}

}  // namespace flexjit::api
