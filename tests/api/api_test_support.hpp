// Shared by the API tests: one engine with a build-tree cache, programs from examples/, and
// well-formed (fake) device views that individual tests then break one way at a time. The fake
// pointers are never dereferenced: every test that uses them expects an error raised on the host.
#pragma once

#include <cstdint>
#include <string>

#include "flexjit/flexjit.hpp"

namespace flexjit::test {

Engine& engine();
Program example(const std::string& name);  // examples/<name>.py

// alibi_softcap_window.py, head dim 64, bf16, compiled for sm_90a (no driver needed).
const Kernel& alibi_kernel();

// A device address for checks that never dereference it: distinct per slot, 1 MiB apart, aligned.
void* fake(std::uintptr_t slot);

// Consistent arguments for alibi_kernel(): q/out [2, 8, 128, 64], k/v [2, 4, 128, 64], lse
// [2, 8, 128], slopes f32 [8], window 64. Pointers are fake, 256-byte aligned, distinct.
struct Args {
  TensorView q, k, v, out, lse, slopes;
  ForwardOptions options() const;  // .lse = lse, .bind = {alibi_slopes, window}
};
Args good_args();

// The message of the flexjit::Error (of kind E) that fn throws ("" when it throws nothing).
template <class E = Error, class Fn>
std::string error_of(Fn&& fn) {
  try {
    fn();
  } catch (const E& e) {
    return e.what();
  }
  return "";
}

}  // namespace flexjit::test
