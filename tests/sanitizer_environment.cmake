# Read by ctest before it starts any test of a sanitizer or fuzz build (TEST_INCLUDE_FILES of each
# test folder, tests/CMakeLists.txt): the environment every test process inherits.
#
# intercept_tls_get_addr=0: clang 14's sanitizer runtime takes a dynamic TLS block that starts 16
# bytes into a page for a glibc 2.19 one and reads a header that is not there; at exit
# LeakSanitizer scans the garbage range it read and dies ("Tracer caught signal 11"), after the
# test passed. Where the block lands follows from the process's allocations before it (one
# allocator slot in 256 for libnvrtc's), so any change moves the crash to another test
# (Examples/DecodeKernel.CompilesWithoutSpills/sink_window_d128_bf16_sm_90a_fast and
# CpuAttention.LearnedSinkJoinsTheDenominatorAndLse had it, every run). Leak checking stays on:
# without the interceptor LeakSanitizer still takes what the dynamic linker allocates, TLS blocks
# among it, for reachable.
# A test's own ENVIRONMENT ASAN_OPTIONS replaces this; intercept_tls_get_addr given in ctest's
# ASAN_OPTIONS is left as it is.
if(NOT "$ENV{ASAN_OPTIONS}" MATCHES "intercept_tls_get_addr")
  set(ENV{ASAN_OPTIONS} "intercept_tls_get_addr=0:$ENV{ASAN_OPTIONS}")
endif()
