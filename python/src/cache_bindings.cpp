// flexjit.cache: the disk kernel cache, listed and emptied (flexjit/cache.hpp).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <chrono>
#include <optional>
#include <string>

#include "flexjit/cache.hpp"
#include "python/src/python_module.hpp"

namespace py = pybind11;

namespace flexjit::python {
namespace {

KernelCacheDirectory directory(const std::optional<std::string>& path) {
  return path ? KernelCacheDirectory(*path) : KernelCacheDirectory();
}

}  // namespace

void register_cache(py::module_& m) {
  m.def("default_cache_directory", &default_cache_directory);
  // [(name, bytes, modified as seconds since the epoch)]
  m.def(
      "cache_list",
      [](const std::optional<std::string>& path) {
        py::list out;
        for (const CacheEntry& e : directory(path).list()) {
          const double seconds = std::chrono::duration<double>(e.modified.time_since_epoch()).count();
          out.append(py::make_tuple(e.name, e.bytes, seconds));
        }
        return out;
      },
      py::arg("path") = py::none());
  m.def(
      "cache_clear", [](const std::optional<std::string>& path) { return directory(path).clear(); },
      py::arg("path") = py::none());
  m.def(
      "cache_stats",
      [](const std::optional<std::string>& path) {
        const CacheStats s = directory(path).stats();
        py::dict out;
        out["directory"] = s.directory;
        out["usable"] = s.usable;
        out["unusable_reason"] = s.unusable_reason;
        out["entries"] = s.entries;
        out["bytes"] = s.bytes;
        return out;
      },
      py::arg("path") = py::none());
}

}  // namespace flexjit::python
