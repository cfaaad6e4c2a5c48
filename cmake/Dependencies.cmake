# Every dependency comes from Debian packages (scripts/setup.sh installs them); CUDA from the toolkit.
find_package(Threads REQUIRED)
find_package(CURL REQUIRED)
find_package(PkgConfig REQUIRED)

if(K3LAB_HEADER_DEPS_DIR)
  add_library(k3lab_header_deps INTERFACE)
  target_include_directories(k3lab_header_deps SYSTEM INTERFACE ${K3LAB_HEADER_DEPS_DIR})
  target_compile_definitions(k3lab_header_deps INTERFACE SPDLOG_HEADER_ONLY FMT_HEADER_ONLY)
  add_library(CLI11::CLI11 ALIAS k3lab_header_deps)
  add_library(nlohmann_json::nlohmann_json ALIAS k3lab_header_deps)
  add_library(spdlog::spdlog ALIAS k3lab_header_deps)
else()
  find_package(CLI11 REQUIRED)
  find_package(nlohmann_json 3.10 REQUIRED)
  find_package(spdlog REQUIRED)
endif()

pkg_check_modules(PCRE2 IMPORTED_TARGET libpcre2-8)
find_path(HTTPLIB_INCLUDE_DIR httplib.h)
find_library(HTTPLIB_LIBRARY NAMES cpp-httplib)

find_package(Torch REQUIRED)
if(K3LAB_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()
find_package(benchmark QUIET)

# c10d backends for data-parallel training (include/k3lab/train/distributed.hpp). ProcessGroupGloo.hpp
# needs gloo's headers (Debian: libgloo-dev; a pip LibTorch may ship them beside its own); the Gloo
# backend itself is compiled into libtorch_cpu. Without the headers the build still works and a
# data-parallel CPU launch says what to install.
find_path(K3LAB_GLOO_INCLUDE_DIR gloo/context.h HINTS ${TORCH_INCLUDE_DIRS})
find_path(K3LAB_C10D_INCLUDE_DIR torch/csrc/distributed/c10d/ProcessGroupGloo.hpp HINTS ${TORCH_INCLUDE_DIRS})
if(K3LAB_GLOO_INCLUDE_DIR AND K3LAB_C10D_INCLUDE_DIR)
  set(K3LAB_C10D_GLOO ON)
else()
  set(K3LAB_C10D_GLOO OFF)
  message(STATUS "k3lab: gloo headers not found (install libgloo-dev): data-parallel training on CPU disabled")
endif()
# NCCL (CUDA tensors) only from a CUDA LibTorch built with it; Debian's has none. Untested here.
option(K3LAB_C10D_NCCL "Build data-parallel training on CUDA with c10d's NCCL backend (LibTorch must have NCCL)" OFF)
