#pragma once
// Every fuzz target defines the libFuzzer entry point. Built with clang and -fsanitize=fuzzer it is a
// libFuzzer binary (scripts/fuzz.sh); built with the project's compiler it links fuzz/replay_main.cpp,
// which runs the seed corpus and a fixed number of deterministic mutations of it (the short CI run).
// A target returns 0 for every input; a bug is a crash, a sanitizer report, a hang or an exception
// that is not the documented error of the code under test (those escape and abort the run).
#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);
