set(K3LAB_CUDA "AUTO" CACHE STRING "Build the CUDA kernels: AUTO (when nvcc is found), ON (required) or OFF")
set_property(CACHE K3LAB_CUDA PROPERTY STRINGS AUTO ON OFF)
option(K3LAB_BUILD_TESTS "Build the GoogleTest suites" ON)
option(K3LAB_SLOW_TESTS "Also register tests labelled slow (not in CI)" OFF)
option(K3LAB_WARNINGS_AS_ERRORS "Treat compiler warnings as errors" OFF)
# Compiles each target's sources in a few large translation units: LibTorch's headers and inline code are
# compiled once per 16 files instead of once per file, which cuts a clean build on 2 cores by about a
# third (docs/benchmarks.md, "Build time"; one unit per target instead measured no faster). On by default
# because a clean build is what CI and a new user run; the "dev" preset turns it off for incremental work
# (one edited file recompiles alone). Errors still name the original file and line.
option(K3LAB_UNITY_BUILD "Unity (jumbo) build of every target" ON)
if(K3LAB_UNITY_BUILD)
  set(CMAKE_UNITY_BUILD ON)
  set(CMAKE_UNITY_BUILD_BATCH_SIZE 16)
endif()
# Release's level is -O2, the level Debian builds its packages with, instead of CMake's -O3: the same
# IEEE arithmetic (no -ffast-math either way, so every recorded number is unchanged; the smoke ledgers
# are compared with the committed ones), the heavy arithmetic is LibTorch's own, and -O3 cost 4-20% more
# compile time per unit (measured on single units; docs/benchmarks.md, "Build and CI time").
string(REPLACE "-O3" "-O2" CMAKE_CXX_FLAGS_RELEASE "${CMAKE_CXX_FLAGS_RELEASE}")
# The build type's optimisation flag (the last -O in its flags; empty when it has none).
string(TOUPPER "${CMAKE_BUILD_TYPE}" k3lab_build_type)
string(REGEX MATCHALL "-O[0-9a-z]*" k3lab_build_type_levels
       "${CMAKE_CXX_FLAGS} ${CMAKE_CXX_FLAGS_${k3lab_build_type}}")
set(K3LAB_BUILD_LEVEL "")
if(k3lab_build_type_levels)
  list(POP_BACK k3lab_build_type_levels K3LAB_BUILD_LEVEL)
endif()
# When the build type optimises at -O2 or -O3, k3lab's own code compiles at -O1 (code that includes
# LibTorch at K3LAB_TORCH_LEVEL, below) except the targets whose own loops are their run time
# (k3lab_numeric_target: the kernels' host paths, the simulator, the tokeniser), which keep the build
# type's level. Elsewhere the time goes to LibTorch, the network and the disk: -O1 changed no smoke run's
# or report's wall time beyond noise and takes 25-30% less time to compile (docs/benchmarks.md, "Session
# 17"). -O1, like -O2, never reorders floating-point arithmetic.
set(K3LAB_CODE_LEVEL "${K3LAB_BUILD_LEVEL}")
if(K3LAB_BUILD_LEVEL MATCHES "^-O[23]$")
  set(K3LAB_CODE_LEVEL "-O1")
endif()
# Test code (test binaries, their helpers, the distributed-training worker) compiles at -Og by default:
# it compiles 20% faster than -O1 (test objects 381 CPU-s against 475) and, unlike -O0, it keeps the
# template code a test binary shares with the libraries fast (the linker keeps one copy of each inline
# function, often the test's; at -O0 the unit tests ran six times slower, at -Og as fast as at -O1).
# Measured in docs/benchmarks.md, "Build and CI time".
option(K3LAB_OPTIMIZE_TESTS "Compile test code and LibTorch code at the other libraries' level, not -Og" OFF)
set(K3LAB_TEST_LEVEL "-Og")
if(K3LAB_OPTIMIZE_TESTS)
  set(K3LAB_TEST_LEVEL "${K3LAB_CODE_LEVEL}")
endif()
# Code that includes LibTorch (cmake/TorchPch.cmake) compiles at the test code's level, libraries and tests
# alike: its run time is LibTorch's own, and one precompiled <torch/torch.h> then serves both (GCC needs
# the header built at the level of the units that load it). The torch-free libraries, where the ledger,
# the report and the API client spend their time, keep K3LAB_CODE_LEVEL: at -Og they ran 10-15% slower
# (docs/benchmarks.md, "Session 18").
set(K3LAB_TORCH_LEVEL "${K3LAB_TEST_LEVEL}")
set(K3LAB_SANITIZE "" CACHE STRING "Sanitizers to enable, e.g. address,undefined (empty: none)")
# libFuzzer builds of fuzz/targets (scripts/fuzz.sh); needs clang. Every library is instrumented for
# coverage so the fuzzer can steer into the parsers.
option(K3LAB_FUZZ "Build the fuzz targets as libFuzzer binaries (clang only; scripts/fuzz.sh)" OFF)
if(K3LAB_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "K3LAB_FUZZ needs clang (libFuzzer): configure with -DCMAKE_CXX_COMPILER=clang++ "
                        "or run scripts/fuzz.sh, which does")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()
# For machines without CLI11/nlohmann/spdlog/fmt packages (the GPU machine): a folder holding
# copies of those headers, used header-only. See scripts/gpu-check.sh.
set(K3LAB_HEADER_DEPS_DIR "" CACHE PATH "Folder with CLI/, nlohmann/, spdlog/, fmt/ headers (empty: use installed packages)")

# k3lab_default_level(<target> <level>): <target>'s optimisation level (property K3LAB_LEVEL) unless a
# call that names its level for a reason (k3lab_numeric_target, k3lab_use_torch_pch) set it already, so the
# calls work in any order.
function(k3lab_default_level target level)
  get_property(chosen TARGET ${target} PROPERTY K3LAB_LEVEL SET)
  if(NOT chosen)
    set_property(TARGET ${target} PROPERTY K3LAB_LEVEL "${level}")
  endif()
endfunction()

function(k3lab_target_defaults target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wno-unused-parameter>)
  # GCC 12 at -O2/-O3 reports -Wrestrict and -Wmaybe-uninitialized inside libstdc++'s std::string and
  # std::variant for correct code (GCC bugs 105329 and 80635 and their duplicates): every such report
  # in this tree pointed into the standard library, none at our code. Off for GCC 12 only, so that other
  # compilers keep checking them.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_GREATER_EQUAL 12
     AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Wno-restrict -Wno-maybe-uninitialized>)
  endif()
  # The target's optimisation level, after the build type's flags (GCC takes the last -O).
  k3lab_default_level(${target} "${K3LAB_CODE_LEVEL}")
  target_compile_options(${target} PRIVATE
    $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<BOOL:$<TARGET_PROPERTY:K3LAB_LEVEL>>>:$<TARGET_PROPERTY:K3LAB_LEVEL>>)
  if(K3LAB_WARNINGS_AS_ERRORS)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Werror>)
  endif()
  if(K3LAB_SANITIZE)
    target_compile_options(${target} PRIVATE -fsanitize=${K3LAB_SANITIZE} -fno-omit-frame-pointer)
    target_link_options(${target} PRIVATE -fsanitize=${K3LAB_SANITIZE})
  endif()
endfunction()

# k3lab_numeric_target(<target>): <target>'s own loops are its run time, so it keeps the build type's
# optimisation (with k3lab_target_defaults). It must not reuse the precompiled LibTorch header, which is
# built at K3LAB_TORCH_LEVEL: GCC does not support mixing levels and crashed when tried. The check runs
# when the whole tree is configured, so it holds whichever of the two calls comes first.
function(k3lab_numeric_target target)
  set_property(TARGET ${target} PROPERTY K3LAB_LEVEL "${K3LAB_BUILD_LEVEL}")
  # A deferred call expands its arguments when it runs, so the target's name is written into it now.
  cmake_language(EVAL CODE
    "cmake_language(DEFER DIRECTORY [[${CMAKE_SOURCE_DIR}]] CALL k3lab_check_numeric_target [[${target}]])")
endfunction()

function(k3lab_check_numeric_target target)
  get_target_property(reused ${target} PRECOMPILE_HEADERS_REUSE_FROM)
  if(reused)
    message(FATAL_ERROR "${target} is a numeric target (its own optimisation level) but reuses the precompiled "
                        "header of ${reused}, built at ${K3LAB_TORCH_LEVEL}: keep LibTorch code out of numeric "
                        "targets (cmake/Options.cmake, k3lab_numeric_target)")
  endif()
endfunction()

# k3lab_test_target_defaults(<target>): k3lab_target_defaults for test code, at K3LAB_TEST_LEVEL.
function(k3lab_test_target_defaults target)
  k3lab_default_level(${target} "${K3LAB_TEST_LEVEL}")
  k3lab_target_defaults(${target})
endfunction()
