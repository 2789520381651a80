# The command line on hostile input: each case exits with the documented status and message, in
# bounded time and memory (expect_exit.sh runs it under a timeout and an address-space limit).
set(hostile_dir ${CMAKE_CURRENT_BINARY_DIR}/hostile)
set(expect ${CMAKE_CURRENT_SOURCE_DIR}/expect_exit.sh)
# 2 GiB: of address space, or of resident memory under AddressSanitizer (expect_exit.sh).
set(hostile_memory 2048)
if(FLEXJIT_SANITIZE)
  set(hostile_memory rss:2048)
endif()

add_test(NAME cli_hostile_setup COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/write_hostile_programs.sh ${hostile_dir})
set_tests_properties(cli_hostile_setup PROPERTIES FIXTURES_SETUP cli_hostile)

# cli_hostile(NAME STATUS TEXT [SECONDS S] [CHECKS --absent PATH | --same A B] ARGS ...): flexjit
# ARGS must exit with STATUS and print TEXT (no ';': CMake would split it), within S seconds
# (default 60) and 2 GiB.
function(cli_hostile name status text)
  cmake_parse_arguments(PARSE_ARGV 3 case "" "SECONDS" "CHECKS;ARGS")
  if(NOT case_SECONDS)
    set(case_SECONDS 60)
  endif()
  add_test(NAME cli_hostile_${name}
           COMMAND ${expect} ${case_CHECKS} ${status} ${text} ${case_SECONDS} ${hostile_memory} $<TARGET_FILE:flexjit> ${case_ARGS}
           WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  set_tests_properties(cli_hostile_${name} PROPERTIES FIXTURES_REQUIRED cli_hostile TIMEOUT 120 LABELS cli)
endfunction()

# The shared cache directory.
cli_hostile(cache_clear_on_a_file 2 "cannot clear the kernel cache directory '${PROJECT_SOURCE_DIR}/README.md': Not a directory (0 files removed)"
  ARGS cache clear)
set_tests_properties(cli_hostile_cache_clear_on_a_file PROPERTIES ENVIRONMENT FLEXJIT_CACHE_DIR=${PROJECT_SOURCE_DIR}/README.md)

# Source text.
cli_hostile(invalid_utf8_in_a_comment 1 "latin1_comment.py:2:10: error: invalid byte 0xe9: source files must be UTF-8"
  ARGS check ${hostile_dir}/latin1_comment.py)
cli_hostile(lone_carriage_returns 0 "cr_line_ends.py: ok (mask_mod)" ARGS check ${hostile_dir}/cr_line_ends.py)
cli_hostile(program_is_a_directory 2 "flexjit: error: cannot read 'examples': it is a directory" ARGS check examples)
cli_hostile(hundred_thousand_character_name 1 "did you mean" ARGS check -q ${hostile_dir}/long_name.py)
# A program whose IR unfolds to an exponential tree: simplification, CSE and the emitter walk the
# shared graph, so this takes milliseconds (the 60 s limit is the runaway guard).
cli_hostile(shared_subexpressions_check 0 "doubling.py: ok (score_mod)" ARGS check ${hostile_dir}/doubling.py)
cli_hostile(flat_and_chain 1 "flat_and.py:1:5: error: program too large: mask_mod nests 30001 operations deep"
  ARGS check ${hostile_dir}/flat_and.py)
cli_hostile(straight_line_statements 1 "error: program too large: score_mod nests 20001 operations deep"
  ARGS check ${hostile_dir}/straight_line.py)
# Linear lowering: 100,000 statements stop at the node budget in about a second (they ran for
# minutes when every statement added a scope that name lookups walked).
cli_hostile(straight_line_100k 1 "straight_line_100k.py:25001:5: error: program too large (100001 nodes, limit 100000)"
  SECONDS 20 ARGS check ${hostile_dir}/straight_line_100k.py)
# Inlining's size budget: calls that would unfold to 2^40 nodes stop at the limit, at a call.
cli_hostile(doubling_calls 1
  "doubling_calls.py:6:20: error: program too large (100001 nodes, limit 100000): every call is inlined, and inlining this one crosses the limit"
  SECONDS 20 ARGS check ${hostile_dir}/doubling_calls.py)
cli_hostile(twice_40_levels 1 "twice_40.py:1:31: error: program too large (100001 nodes, limit 100000)"
  SECONDS 20 ARGS check ${hostile_dir}/twice_40.py)
cli_hostile(recursion_through_new_closures 1
  "closure_recursion.py:2:22: error: recursion is not supported: '<lambda>' calls itself, with a new closure at each level (calls nest more than 64 levels)"
  SECONDS 20 ARGS check ${hostile_dir}/closure_recursion.py)
cli_hostile(shared_subexpressions_emit 0 "extern \"C\" __global__"
  ARGS emit cuda ${hostile_dir}/doubling.py --family sm80_fwd)

# run and emit options.
set(demo run examples/causal.py --demo --device cpu)
cli_hostile(demo_too_large 2
  "--demo: q [B=1, H=8, T=2000000000, D=128] would hold 2048000000000 float32 elements, over the limit of 2^31"
  ARGS ${demo} --T 2000000000)
cli_hostile(demo_zero_length 2 "--T: must be >= 1" ARGS ${demo} --T 0)
cli_hostile(scale_nan 2 "--scale: must be a finite number" ARGS ${demo} --scale nan)
cli_hostile(scale_inf 2 "--scale: must be a finite number" ARGS ${demo} --scale inf)
cli_hostile(demo_with_inputs 2 "--q excludes --demo" ARGS ${demo} --q q.npy)
cli_hostile(bind_twice 2 "--bind 'window=8': 'window' is bound twice"
  ARGS run examples/sliding_window.py --demo --device cpu --B 1 --H 1 --T 16 --D 16 --bind window=4 --bind window=8)
cli_hostile(out_and_lse_same_file 2
  "--lse '${hostile_dir}/same.npy' is the same file as --out '${hostile_dir}/same.npy'"
  CHECKS --absent ${hostile_dir}/same.npy
  ARGS ${demo} --B 1 --H 1 --T 16 --D 16 --out ${hostile_dir}/same.npy --lse ${hostile_dir}/same.npy)
cli_hostile(out_is_an_input 2 "--out 'examples/../q.npy' is the same file as --q 'q.npy'"
  ARGS run examples/causal.py --q q.npy --k k.npy --v v.npy --out examples/../q.npy)
cli_hostile(cubin_over_its_program 2
  "-o '${hostile_dir}/own_output.py' is the same file as the program '${hostile_dir}/own_output.py'"
  CHECKS --same ${hostile_dir}/own_output.py ${hostile_dir}/own_output.py.orig
  ARGS emit cubin ${hostile_dir}/own_output.py -o ${hostile_dir}/own_output.py)

# NVRTC and ptxas run in a worker process bounded in time and memory: past a bound the compile is
# stopped, the command fails naming it, and no output file is left.
cli_hostile(compile_past_its_time_bound 2 "took longer than 0.05 s, the bound on one compile (FLEXJIT_COMPILE_TIMEOUT)"
  CHECKS --absent ${hostile_dir}/bounded.cubin
  ARGS emit cubin examples/causal.py --head-dim 128 --arch sm_90a -o ${hostile_dir}/bounded.cubin)
cli_hostile(compile_past_its_memory_bound 2 "the bound on one compile (FLEXJIT_COMPILE_MEMORY_MB)"
  CHECKS --absent ${hostile_dir}/bounded.cubin
  ARGS emit cubin examples/causal.py --head-dim 128 --arch sm_90a -o ${hostile_dir}/bounded.cubin)
set_tests_properties(cli_hostile_compile_past_its_time_bound PROPERTIES
  ENVIRONMENT "FLEXJIT_DISK_CACHE=0;FLEXJIT_COMPILE_TIMEOUT=0.05")
set_tests_properties(cli_hostile_compile_past_its_memory_bound PROPERTIES
  ENVIRONMENT "FLEXJIT_DISK_CACHE=0;FLEXJIT_COMPILE_MEMORY_MB=24")

# `flexjit cache warm` with a program that has errors: its diagnostics once, the other program's
# kernels warmed, and a failing exit status.
cli_hostile(cache_warm_with_a_bad_program 2 "warmed '${hostile_dir}/warm': 1 compiled, 0 already cached, 1 failed"
  ARGS cache warm ${hostile_dir}/latin1_comment.py examples/causal.py --head-dim 64 --arch sm_80 -j 2
       --cache-dir ${hostile_dir}/warm)
# --grads naming no float tensor of a program: that program refused by name before anything compiles.
cli_hostile(cache_warm_grads_of_no_tensor 2 "'examples/causal.py': --grads 'bias': the program declares no float tensor of that name"
  ARGS cache warm examples/causal.py --head-dim 64 --arch sm_80 --backward --grads bias
       --cache-dir ${hostile_dir}/warm_grads)
cli_hostile(cache_warm_deterministic_without_backward 2 "--deterministic requires --backward"
  ARGS cache warm examples/causal.py --deterministic)
# What a user typed is quoted with control characters escaped, so it cannot start a line of its own.
cli_hostile(bind_value_with_a_newline 2 "--bind 'window=1\\n#x': 'window' is a scalar int, and '1\\n#x' is not one"
  ARGS run examples/sliding_window.py --demo --device cpu --bind "window=1\n#x")
