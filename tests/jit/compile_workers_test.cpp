#include "jit/compile_workers.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <atomic>
#include <future>
#include <thread>

#include "flexjit/error.hpp"
#include "tests/jit/test_support.hpp"

namespace flexjit::jit {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

CompileRequest saxpy() {
  CompileRequest r;
  r.source = test::kSaxpySource;
  r.source_name = "saxpy.cu";
  r.arch = "sm_80";
  r.options = {"--ptxas-options=-v"};
  return r;
}

// About a second of ptxas on this kernel's 4,000 unrolled steps.
CompileRequest slow_kernel() {
  CompileRequest r;
  r.source_name = "slow.cu";
  r.source =
      "extern \"C\" __global__ void slow(float* o) {\n"
      "  float x = o[threadIdx.x];\n"
      "#pragma unroll\n"
      "  for (int i = 0; i < 4000; ++i) x = x * 1.0001f + __sinf(x * (i + 1));\n"
      "  o[threadIdx.x] = x;\n"
      "}\n";
  r.arch = "sm_90a";
  return r;
}

std::string error_of(const CompileRequest& request, const CompileLimits& limits = {}) {
  try {
    compile_bounded(request, limits);
  } catch (const NvrtcError& e) {
    return e.what();
  }
  return "";
}

// A stand-in worker: a shell script with the given body.
std::string fake_worker(const test::TempDir& dir, const std::string& name, const std::string& body) {
  std::filesystem::path file = dir / name;
  std::ofstream(file) << "#!/bin/sh\n" << body << "\n";
  ::chmod(file.c_str(), 0755);
  return file.string();
}

class CompileWorkers : public ::testing::Test {
 protected:
  void SetUp() override {
    if (compile_worker_file().empty()) GTEST_SKIP() << "no compile worker was built";
    stop_idle_compile_workers();  // each test starts its own
  }
  void TearDown() override { stop_idle_compile_workers(); }
};

TEST_F(CompileWorkers, CompileWhatTheProcessItselfWould) {
  CompileResult in_worker = compile_bounded(saxpy(), {});
  CompileResult here = compile(saxpy());
  EXPECT_EQ(in_worker.image, here.image);
  // The logs differ only in ptxas's own timing line.
  EXPECT_THAT(in_worker.log, HasSubstr("ptxas info    : Used 10 registers"));
  EXPECT_THAT(here.log, HasSubstr("ptxas info    : Used 10 registers"));
}

TEST_F(CompileWorkers, CarryNvrtcErrorsWithTheirLog) {
  CompileRequest bad = saxpy();
  bad.source = "extern \"C\" __global__ void k() { nope; }\n";
  try {
    compile_bounded(bad, {});
    FAIL() << "no error";
  } catch (const NvrtcError& e) {
    EXPECT_THAT(e.what(), HasSubstr("identifier \"nope\" is undefined"));
    EXPECT_THAT(e.what(), HasSubstr("Generated source:"));
    EXPECT_THAT(e.log(), HasSubstr("saxpy.cu(1): error"));
  }
  EXPECT_FALSE(compile_bounded(saxpy(), {}).image.empty()) << "the worker survives a failed compile";
}

TEST_F(CompileWorkers, StopACompilePastTheTimeBound) {
  CompileLimits limits;
  limits.seconds = 0.25;
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(error_of(slow_kernel(), limits),
            "flexjit: compiling 'slow.cu' for 'sm_90a' took longer than 0.25 s, the bound on one compile "
            "(FLEXJIT_COMPILE_TIMEOUT); it was stopped");
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 5.0);
  EXPECT_FALSE(compile_bounded(saxpy(), {}).image.empty()) << "a new worker takes the next compile";
}

TEST_F(CompileWorkers, StopACompilePastTheMemoryBound) {
  CompileLimits limits;
  limits.memory_bytes = std::uint64_t{24} << 20;  // NVRTC alone takes more once loaded
  std::string what = error_of(slow_kernel(), limits);
  EXPECT_THAT(what, StartsWith("flexjit: compiling 'slow.cu' for 'sm_90a' used "));
  EXPECT_THAT(what, HasSubstr(" of memory, past 24 MiB, the bound on one compile (FLEXJIT_COMPILE_MEMORY_MB); it was stopped"));
}

TEST_F(CompileWorkers, StopACancelledCompile) {
  std::atomic<bool> cancel{false};
  auto start = std::chrono::steady_clock::now();
  std::thread canceller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    cancel = true;
  });
  EXPECT_THROW(compile_bounded(slow_kernel(), {}, &cancel), CompileCancelled);
  canceller.join();
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 1.0);
  EXPECT_EQ(compiles_running(), 0);
  EXPECT_FALSE(compile_bounded(saxpy(), {}).image.empty()) << "a new worker takes the next compile";
}

TEST_F(CompileWorkers, RunConcurrentCompilesInParallelWorkers) {
  std::vector<std::future<CompileResult>> results;
  for (int i = 0; i < 4; ++i) results.push_back(std::async(std::launch::async, [] { return compile_bounded(saxpy(), {}); }));
  std::vector<char> first = results[0].get().image;
  for (int i = 1; i < 4; ++i) EXPECT_EQ(results[i].get().image, first);
}

// A forked child (Python's multiprocessing) starts workers of its own, leaving the parent's alone:
// were they shared, the two processes' replies would cross on one socket.
TEST_F(CompileWorkers, LeaveTheParentsWorkersToAForkedChild) {
  auto compiles_own = [](const char* name) {
    CompileRequest r = saxpy();
    r.source = std::string("extern \"C\" __global__ void ") + name + "(float* o) { o[0] = 1; }\n";
    return compile_bounded(r, {}).log.find(std::string("entry function '") + name + "'") != std::string::npos;
  };
  ASSERT_TRUE(compiles_own("warm_up"));  // leaves an idle worker
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    bool ok = false;
    try {
      ok = compiles_own("in_child") && compiles_own("in_child_again");
    } catch (...) {
    }
    ::_exit(ok ? 0 : 1);
  }
  bool parent_ok = compiles_own("in_parent") && compiles_own("in_parent_again");
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the child's compiles";
  EXPECT_TRUE(parent_ok) << "the parent's compiles";
}

TEST_F(CompileWorkers, ReportAWorkerThatDies) {
  test::TempDir dir;
  test::ScopedEnv env("FLEXJIT_COMPILE_WORKER", fake_worker(dir, "crash", "head -c 100 >/dev/null; kill -SEGV $$"));
  EXPECT_THAT(error_of(saxpy()), StartsWith("flexjit: the compile worker stopped while compiling 'saxpy.cu' for 'sm_80' (signal 11"));
}

TEST_F(CompileWorkers, ReportAWorkerThatDiesBeforeTakingTheRequest) {
  test::TempDir dir;
  const std::string worker = fake_worker(dir, "crash", "head -c 100 >/dev/null; kill -SEGV $$");
  test::ScopedEnv env("FLEXJIT_COMPILE_WORKER", worker);
  CompileRequest big = saxpy();
  big.headers.push_back({"big.cuh", std::string(8 << 20, ' ')});  // far more than a socket buffers
  EXPECT_EQ(error_of(big), "flexjit: the compile worker '" + worker +
                               "' ended (signal 11 (Segmentation fault)) before taking the request for 'saxpy.cu' for 'sm_80'");
}

TEST_F(CompileWorkers, RefuseAMalformedReply) {
  test::TempDir dir;
  test::ScopedEnv env("FLEXJIT_COMPILE_WORKER", fake_worker(dir, "echo", "exec cat"));  // the request comes back
  EXPECT_THAT(error_of(saxpy()), HasSubstr("answered 'saxpy.cu' for 'sm_80' with a malformed reply"));
}

TEST_F(CompileWorkers, StopAWorkerThatNeverAnswers) {
  test::TempDir dir;
  test::ScopedEnv env("FLEXJIT_COMPILE_WORKER", fake_worker(dir, "silent", "exec sleep 60"));
  CompileLimits limits;
  limits.seconds = 0.2;
  EXPECT_THAT(error_of(saxpy(), limits), HasSubstr("took longer than 0.2 s"));
}

TEST_F(CompileWorkers, NameAWorkerSettingThatIsNoFile) {
  test::ScopedEnv env("FLEXJIT_COMPILE_WORKER", "/nonexistent/flexjit-compile-worker\nX");
  EXPECT_EQ(error_of(saxpy()), "flexjit: FLEXJIT_COMPILE_WORKER='/nonexistent/flexjit-compile-worker\\nX' is not a file");
}

TEST_F(CompileWorkers, NameAWorkerThatCannotStart) {
  test::TempDir dir;
  const std::string worker = fake_worker(dir, "not_executable", "exec cat");
  ::chmod(worker.c_str(), 0644);
  test::ScopedEnv env("FLEXJIT_COMPILE_WORKER", worker);
  EXPECT_EQ(error_of(saxpy()), "flexjit: cannot start the compile worker '" + worker + "': Permission denied");
}

TEST_F(CompileWorkers, CompileInProcessWhenTurnedOff) {
  test::ScopedEnv env("FLEXJIT_COMPILE_WORKER", "0");
  EXPECT_TRUE(compile_worker_file().empty());
  CompileLimits limits;
  limits.seconds = 1e-9;  // no worker, so no bound to pass
  EXPECT_FALSE(compile_bounded(saxpy(), limits).image.empty());
}

TEST(CompileLimitsFromEnvironment, ReadTheVariablesAndNameABadOne) {
  {
    test::ScopedEnv t("FLEXJIT_COMPILE_TIMEOUT", "2.5"), m("FLEXJIT_COMPILE_MEMORY_MB", "512");
    CompileLimits limits = compile_limits_from_environment();
    EXPECT_EQ(limits.seconds, 2.5);
    EXPECT_EQ(limits.memory_bytes, std::uint64_t{512} << 20);
  }
  for (const char* bad : {"abc", "-1", "0", "inf", "3s"}) {
    test::ScopedEnv t("FLEXJIT_COMPILE_TIMEOUT", bad);
    try {
      compile_limits_from_environment();
      ADD_FAILURE() << bad;
    } catch (const NvrtcError& e) {
      EXPECT_EQ(std::string(e.what()),
                std::string("flexjit: FLEXJIT_COMPILE_TIMEOUT='") + bad + "' is not a positive number of seconds");
    }
  }
}

}  // namespace
}  // namespace flexjit::jit
