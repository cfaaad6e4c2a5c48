#pragma once
// The compact, self-describing binary trace format (.k3tr), little-endian:
//   0  char[8]  magic "K3LABTRC"
//   8  u32      version (1)
//  12  u32      reserved (0)
//  16  u64      record count
//  24  u64      generator seed (0 for imported traces)
//  32  u32      source text length L, then L bytes of UTF-8 source text
//  then per record: LEB128 varints of (arrival delta in microseconds, prompt tokens, output tokens).
// A trace's hash is the SHA-256 of these bytes, so a regenerated trace and a loaded file compare
// by hash.
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "k3lab/sim/trace.hpp"

namespace k3lab::sim {

inline constexpr char kTraceMagic[8] = {'K', '3', 'L', 'A', 'B', 'T', 'R', 'C'};
inline constexpr std::uint32_t kTraceVersion = 1;

std::string encode_trace(const Trace& trace);
// `name` appears in error messages (a file path or "<memory>").
Trace decode_trace(std::string_view bytes, const std::string& name);

std::string trace_sha256(const Trace& trace);

void write_trace_file(const std::filesystem::path& path, const Trace& trace);
// Reads and decodes; if `sha256_out` is given, stores the SHA-256 of the file's bytes.
Trace read_trace_file(const std::filesystem::path& path, std::string* sha256_out = nullptr);

}  // namespace k3lab::sim
