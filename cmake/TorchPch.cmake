# Precompiled <torch/torch.h>: torch/torch.h dominates compile time on a 2-core machine, and per-target
# copies rebuilt it 13 times. One header, built once and reused by every library that includes LibTorch,
# and one for test code when it compiles at another level (below). Targets that reuse a header must
# compile with its owner's flags (k3lab_target_defaults or k3lab_test_target_defaults give them those);
# -Winvalid-pch makes a silently rejected header visible.

# k3lab_add_torch_pch(<owner>): a library whose only job is to own a precompiled <torch/torch.h>; the
# caller gives it the flags of the targets that will reuse it.
function(k3lab_add_torch_pch owner)
  set(source ${CMAKE_CURRENT_BINARY_DIR}/${owner}.cpp)
  file(WRITE ${source} "// The translation unit that owns the precompiled <torch/torch.h> of ${owner}.\n")
  add_library(${owner} STATIC ${source})
  target_link_libraries(${owner} PRIVATE ${TORCH_LIBRARIES})
  target_precompile_headers(${owner} PRIVATE <torch/torch.h>)
endfunction()

# k3lab_reuse_torch_pch(<target> <owner>): compile <target> against <owner>'s precompiled header.
function(k3lab_reuse_torch_pch target owner)
  target_precompile_headers(${target} REUSE_FROM ${owner})
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Winvalid-pch>)
endfunction()

k3lab_add_torch_pch(k3lab_torch_pch)
k3lab_target_defaults(k3lab_torch_pch)

# k3lab_use_torch_pch(<target>): compile a library against the shared precompiled <torch/torch.h>.
function(k3lab_use_torch_pch target)
  k3lab_reuse_torch_pch(${target} k3lab_torch_pch)
endfunction()

# Test code compiles at K3LAB_TEST_LEVEL (-Og unless K3LAB_OPTIMIZE_TESTS; cmake/Options.cmake). When that
# differs from the libraries' level, test code gets a header precompiled with its own flags: GCC does not
# support a header built at another level (it refuses -O0 against -O1 and crashed on -O1 against -O2),
# and a -O3 header in a -O1 unit was slower (one test unit, situ_qat_tests: -O3 with the shared header
# 28.9 s; -O1 with its own 20.4 s, without any 32.5 s).
set(k3lab_test_torch_pch k3lab_torch_pch)
if(K3LAB_BUILD_TESTS AND NOT K3LAB_TEST_LEVEL STREQUAL K3LAB_CODE_LEVEL)
  set(k3lab_test_torch_pch k3lab_torch_test_pch)
  k3lab_add_torch_pch(k3lab_torch_test_pch)
  k3lab_test_target_defaults(k3lab_torch_test_pch)
endif()

# k3lab_test_use_torch_pch(<target>): compile test code that includes LibTorch against the precompiled
# <torch/torch.h> made with the test code's flags.
function(k3lab_test_use_torch_pch target)
  k3lab_reuse_torch_pch(${target} ${k3lab_test_torch_pch})
endfunction()
