// The error hierarchy (flexjit/error.hpp): each type is thrown where the API documents it, is
// caught as flexjit::Error, and carries its data; internal failures leave the API only as
// flexjit::Error subclasses.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <new>
#include <optional>
#include <typeinfo>
#include <stdexcept>
#include <type_traits>

#include "api/boundary.hpp"
#include "tests/api/api_test_support.hpp"

namespace flexjit::test {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

static_assert(std::is_base_of_v<std::runtime_error, Error>);
static_assert(std::is_base_of_v<Error, CompileError> && std::is_base_of_v<Error, ArgumentError> &&
              std::is_base_of_v<Error, UnsupportedError> && std::is_base_of_v<Error, NvrtcError> &&
              std::is_base_of_v<Error, CudaError> && std::is_base_of_v<Error, InternalError>);
// Throwing and catching copies them: copies must not throw.
static_assert(std::is_nothrow_copy_constructible_v<CompileError> && std::is_nothrow_copy_constructible_v<NvrtcError> &&
              std::is_nothrow_copy_constructible_v<CudaError>);

const char* const kTypo = "window: int\ndef mask_mod(b, h, q, k):\n    return q - k < windw\n";

// Runs fn, expecting it to throw an E (caught as such); returns a copy, or nullopt after
// reporting what happened instead.
template <class E, class Fn>
std::optional<E> caught(Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    if constexpr (std::is_same_v<E, Error>) {
      return e;
    } else {
      if (const auto* typed = dynamic_cast<const E*>(&e)) return *typed;
      ADD_FAILURE() << "not a " << typeid(E).name() << ": " << e.what();
      return std::nullopt;
    }
  }
  ADD_FAILURE() << "nothing thrown";
  return std::nullopt;
}

// The message of the E that fn throws ("" after reporting anything else).
template <class E, class Fn>
std::string what_of(Fn&& fn) {
  const std::optional<E> e = caught<E>(std::forward<Fn>(fn));
  return e ? e->what() : "";
}

TEST(Errors, CompileErrorCarriesTheDiagnostics) {
  const CompileError e = caught<CompileError>([] { Program::from_source(kTypo, "typo.py"); }).value();
  EXPECT_EQ(std::string(e.what()),
            "typo.py:3:20: error: name 'windw' is not defined; did you mean 'window'?\n"
            "        return q - k < windw\n"
            "                       ^~~~~\n");
  ASSERT_EQ(e.diagnostics().size(), 1u);
  const Diagnostic& d = e.diagnostics()[0];
  EXPECT_EQ(d.severity, Diagnostic::Severity::error);
  EXPECT_EQ(d.file, "typo.py");
  EXPECT_EQ(d.line, 3);
  EXPECT_EQ(d.col, 20);
  EXPECT_EQ(d.message, "name 'windw' is not defined; did you mean 'window'?");
}

TEST(Errors, UnreadableFileIsAPlainError) {
  try {
    Program::from_file("/nonexistent/mask.py");
    FAIL() << "no error";
  } catch (const CompileError&) {
    FAIL() << "a missing file is not a compile error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "cannot open '/nonexistent/mask.py': No such file or directory");
  }
}

TEST(Errors, BadForwardArgumentsAreArgumentErrors) {
  Args a = good_args();
  a.q.dtype = fp16;
  EXPECT_EQ(what_of<ArgumentError>([&] { alibi_kernel().forward(a.q, a.k, a.v, a.out, a.options()); }),
            "flexjit_fwd_alibi_softcap_window_d64_bf16: q: dtype fp16 does not match the kernel's bf16");
}

TEST(Errors, UnsupportedConfigurations) {
  const Program p = Program::from_source("def mask_mod(b, h, q, k):\n    return q >= k\n", "p.py");
  EXPECT_EQ(what_of<UnsupportedError>([&] { engine().compile(p, {.head_dim = 72, .arch = "sm_90a"}); }),
            "p.py: no kernel for the forward pass at head dim 72, bf16, sm_90a:\n"
            "  sm90_fwd: head dim 72 is not 64, 128 or 256\n"
            "  sm80_fwd: head dim 72 is not supported: it must be a multiple of 16 between 16 and 256");
  EXPECT_EQ(what_of<UnsupportedError>([&] { engine().compile(p, {.arch = "sm_75"}); }),
            "p.py: no kernel for the forward pass at head dim 128, bf16, sm_75:\n"
            "  sm90_fwd: architecture 'sm_75' is not sm_90a (wgmma, TMA)\n"
            "  sm80_fwd: architecture 'sm_75' is not supported: flexjit kernels need sm_80 or newer (cp.async, bf16 "
            "tensor cores)");
  // User text stays on the message's line: control characters are escaped where it is quoted.
  EXPECT_EQ(what_of<ArgumentError>([&] { engine().compile(p, {.arch = "sm_90a", .family = "sm90\r\nfwd"}); }),
            "unknown kernel family 'sm90\\x0d\\nfwd' (the families are sm90_fwd, sm80_fwd, decode, sm90_mla, decode_mla, sm90_chunk, sm80_chunk, sm90_bwd, sm80_bwd)");
  EXPECT_EQ(what_of<UnsupportedError>([&] { engine().compile(p, {.arch = "sm_90a\n#error X"}); }),
            "p.py: no kernel for the forward pass at head dim 128, bf16, 'sm_90a\\n#error X':\n"
            "  sm90_fwd: architecture 'sm_90a\\n#error X' is not sm_90a (wgmma, TMA)\n"
            "  sm80_fwd: architecture 'sm_90a\\n#error X' is not of the form sm_XY (e.g. sm_80, sm_90a)");
  EXPECT_EQ(what_of<UnsupportedError>([&] { engine().compile(p, {.dtype = f32, .arch = "sm_90a"}); }),
            "dtype f32 is not supported for q, k, v and out: CUDA kernels take bf16, fp16 or fp8_e4m3");
  EXPECT_EQ(what_of<UnsupportedError>([&] {
              engine().compile(p, {.arch = "sm_90a", .tile = TileShape{.warps = 3}});
            }),
            "p.py: tile 128x64 with 3 warps and 2 stages: warps must be 1, 2, 4 or 8");
  EXPECT_EQ(what_of<UnsupportedError>([&] {
              engine().compile(p, {.dtype = i32, .device = Device::cpu()});
            }),
            "dtype i32 is not supported for q, k, v and out: cpu kernels take f32, bf16, fp16 or fp8_e4m3");
  // generate_cuda_source refuses what compile refuses, the same way.
  EXPECT_EQ(what_of<UnsupportedError>([&] { generate_cuda_source(p, {.head_dim = 72, .arch = "sm_90a"}); }),
            "p.py: no kernel for the forward pass at head dim 72, bf16, sm_90a:\n"
            "  sm90_fwd: head dim 72 is not 64, 128 or 256\n"
            "  sm80_fwd: head dim 72 is not supported: it must be a multiple of 16 between 16 and 256");
  // A family named by the caller: its own reason, or the list of families for an unknown name.
  EXPECT_EQ(what_of<UnsupportedError>([&] { engine().compile(p, {.head_dim = 96, .arch = "sm_90a", .family = "sm90_fwd"}); }),
            "p.py: kernel family sm90_fwd cannot run the forward pass at head dim 96, bf16, sm_90a: head dim 96 is not "
            "64, 128 or 256");
  EXPECT_EQ(what_of<ArgumentError>([&] { engine().compile(p, {.arch = "sm_90a", .family = "sm100_fwd"}); }),
            "unknown kernel family 'sm100_fwd' (the families are sm90_fwd, sm80_fwd, decode, sm90_mla, decode_mla, sm90_chunk, sm80_chunk, sm90_bwd, sm80_bwd)");
  // The decode family runs the calls with a KV cache; it is not a forward kernel to name.
  EXPECT_EQ(what_of<UnsupportedError>([&] { engine().compile(p, {.arch = "sm_90a", .family = "decode"}); }),
            "p.py: kernel family decode runs the decode pass, not the forward pass at head dim 128, bf16, sm_90a");
}

TEST(Errors, NvrtcFailuresAreNvrtcErrors) {
  // sm_99 passes the generator's checks (sm_80 or newer) but no NVRTC targets it.
  const Program p = Program::from_source("def mask_mod(b, h, q, k):\n    return q >= k\n", "p.py");
  const NvrtcError e =
      caught<NvrtcError>([&] { Engine(EngineOptions{.disk_cache = false}).compile(p, {.arch = "sm_99"}); }).value();
  EXPECT_THAT(e.what(), StartsWith("p.py: NVRTC could not compile flexjit_fwd_p_d128_bf16:\n"));
  EXPECT_THAT(e.what(), HasSubstr("cannot compile for sm_99"));
  EXPECT_EQ(e.log(), "");  // refused before compiling: NVRTC wrote no log
}

TEST(Errors, CudaErrorCarriesTheCode) {
  const CudaError e("cuMemAlloc failed: CUDA_ERROR_OUT_OF_MEMORY (out of memory)", 2, "CUDA_ERROR_OUT_OF_MEMORY");
  const CudaError copy = e;
  EXPECT_EQ(copy.code(), 2);
  EXPECT_EQ(copy.code_name(), "CUDA_ERROR_OUT_OF_MEMORY");
  EXPECT_STREQ(copy.what(), e.what());
}

TEST(Errors, WithoutADriverLaunchesFailWithAnError) {
  if (cuda_availability().devices > 0) GTEST_SKIP() << "a GPU is present";
  Args a = good_args();
  EXPECT_THAT(what_of<Error>([&] { alibi_kernel().forward(a.q, a.k, a.v, a.out, a.options()); }),
              StartsWith("flexjit_fwd_alibi_softcap_window_d64_bf16: cannot launch: "));
  EXPECT_THAT(what_of<Error>([] { alibi_kernel().resources(); }),
              StartsWith("flexjit_fwd_alibi_softcap_window_d64_bf16: cannot load the kernel: "));
  EXPECT_FALSE(cuda_availability().reason.empty());
  EXPECT_THROW(DeviceBuffer(64), Error);
  EXPECT_THROW(cuda_device_info(0), Error);
}

TEST(Errors, TheBoundaryTranslatesWhatInnerLayersThrow) {
  // A broken invariant: InternalError, named as one.
  EXPECT_EQ(what_of<InternalError>([] {
              api::at_api_boundary("k", [] { throw std::logic_error("pack_params: scalar 'w' is not in the env"); });
            }),
            "k: internal error: pack_params: scalar 'w' is not in the env (this is a bug in flexjit; please report it)");
  // Other failures (I/O, third-party libraries): Error with the context.
  EXPECT_EQ(what_of<Error>([] { api::at_api_boundary("k", [] { throw std::runtime_error("disk"); }); }),
            "k: disk");
  // flexjit errors pass unchanged, type and message.
  EXPECT_EQ(what_of<ArgumentError>([] {
              api::at_api_boundary("k", [] { throw ArgumentError("q: bad"); });
            }),
            "q: bad");
  EXPECT_THROW(api::at_api_boundary("k", [] { throw std::bad_alloc(); }), std::bad_alloc);
  EXPECT_EQ(api::at_api_boundary("k", [] { return 7; }), 7);
}

}  // namespace
}  // namespace flexjit::test
