// What the process tests of `flexjit run` share: running the command line in the source tree with
// its output captured, .npy inputs written from vectors, and normal(0, 1) data. Header only: the
// binaries that include it are built with FLEXJIT_CLI (the flexjit executable) and
// FLEXJIT_SOURCE_DIR defined.
#pragma once

#include <sys/wait.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "tests/tools/npy_files.hpp"

namespace flexjit::test {

struct CliRun {
  int status = -1;
  std::string output;  // stdout and stderr
};

// `flexjit run ARGS` from the source tree (so example paths resolve), its output through a file
// of this process's temporary names.
inline CliRun flexjit_run(const std::string& args) {
  const std::string log = tools::test::temp_path("run.log");
  const std::string command = std::string("cd '") + FLEXJIT_SOURCE_DIR + "' && '" + FLEXJIT_CLI + "' run " + args +
                              " > '" + log + "' 2>&1";
  const int raw = std::system(command.c_str());
  CliRun r;
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  std::ifstream in(log);
  std::stringstream text;
  text << in.rdbuf();
  r.output = text.str();
  return r;
}

// A version 1.0 .npy file of `values` ("<f4", "<i4", "<i8", ...), C order; returns its path.
template <class T>
std::string write_npy(const std::string& name, const char* descr, const std::vector<std::int64_t>& shape,
                      const std::vector<T>& values) {
  std::string dims;
  for (std::int64_t s : shape) dims += std::to_string(s) + ",";
  return tools::test::write_raw(name, std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': (" +
                                          dims + "), }",
                                std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T)));
}

// A float32 .npy file of `values` (write_npy with "<f4").
inline std::string f32_npy(const std::string& name, const std::vector<std::int64_t>& shape,
                           const std::vector<float>& values) {
  return write_npy(name, "<f4", shape, values);
}

inline std::vector<float> normal(std::size_t n, std::mt19937& rng) {
  std::normal_distribution<float> dist(0.f, 1.f);
  std::vector<float> x(n);
  for (float& e : x) e = dist(rng);
  return x;
}

}  // namespace flexjit::test
