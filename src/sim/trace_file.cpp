#include "k3lab/sim/trace_file.hpp"

#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "k3lab/core/atomic_file.hpp"
#include "k3lab/core/sha256.hpp"

namespace k3lab::sim {
namespace {

void put_u32(std::string& out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}
void put_u64(std::string& out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}
void put_varint(std::string& out, std::uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

class Reader {
 public:
  Reader(std::string_view bytes, const std::string& name) : bytes_(bytes), name_(name) {}

  std::uint64_t fixed(int width, const char* what) {
    need(static_cast<std::size_t>(width), what);
    std::uint64_t v = 0;
    for (int i = 0; i < width; ++i) v |= std::uint64_t{static_cast<unsigned char>(bytes_[pos_ + i])} << (8 * i);
    pos_ += static_cast<std::size_t>(width);
    return v;
  }
  std::uint64_t varint(const char* what, std::uint64_t record) {
    std::uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ >= bytes_.size()) {
        fail("truncated in record " + std::to_string(record) + " (" + what +
             "); the file is incomplete -- regenerate or re-copy it");
      }
      const auto byte = static_cast<unsigned char>(bytes_[pos_++]);
      v |= std::uint64_t{byte & 0x7Fu} << shift;
      if (!(byte & 0x80)) return v;
    }
    fail(std::string("malformed varint (") + what + ") in record " + std::to_string(record));
  }
  std::string_view take(std::size_t n, const char* what) {
    need(n, what);
    std::string_view s = bytes_.substr(pos_, n);
    pos_ += n;
    return s;
  }
  bool at_end() const { return pos_ == bytes_.size(); }
  std::size_t remaining() const { return bytes_.size() - pos_; }
  [[noreturn]] void fail(const std::string& message) const {
    throw std::runtime_error("trace file " + name_ + ": " + message);
  }

 private:
  void need(std::size_t n, const char* what) {
    if (bytes_.size() - pos_ < n) fail(std::string("truncated while reading the ") + what);
  }
  std::string_view bytes_;
  std::string name_;
  std::size_t pos_ = 0;
};

}  // namespace

std::string encode_trace(const Trace& trace) {
  validate_trace(trace);
  std::string out;
  out.reserve(40 + trace.source.size() + trace.records.size() * 6);
  out.append(kTraceMagic, sizeof(kTraceMagic));
  put_u32(out, kTraceVersion);
  put_u32(out, 0);
  put_u64(out, trace.records.size());
  put_u64(out, trace.generator_seed);
  put_u32(out, static_cast<std::uint32_t>(trace.source.size()));
  out += trace.source;
  std::int64_t previous = 0;
  for (const TraceRecord& r : trace.records) {
    put_varint(out, static_cast<std::uint64_t>(r.arrival_us - previous));
    put_varint(out, r.prompt_tokens);
    put_varint(out, r.output_tokens);
    previous = r.arrival_us;
  }
  return out;
}

Trace decode_trace(std::string_view bytes, const std::string& name) {
  Reader in(bytes, name);
  const std::string_view magic = in.take(sizeof(kTraceMagic), "magic");
  if (std::memcmp(magic.data(), kTraceMagic, sizeof(kTraceMagic)) != 0) {
    in.fail("bad magic: not a k3lab trace (.k3tr) file");
  }
  const auto version = static_cast<std::uint32_t>(in.fixed(4, "version"));
  if (version != kTraceVersion) {
    in.fail("format version " + std::to_string(version) + " is not supported; this build reads version " +
            std::to_string(kTraceVersion) + " -- regenerate the file with this build");
  }
  in.fixed(4, "reserved field");
  const std::uint64_t count = in.fixed(8, "record count");
  Trace trace;
  trace.generator_seed = in.fixed(8, "generator seed");
  const auto source_length = static_cast<std::uint32_t>(in.fixed(4, "source length"));
  trace.source = std::string(in.take(source_length, "source text"));
  // Every record takes at least 3 bytes: reject absurd counts before reserving memory.
  if (count > in.remaining() / 3) {
    in.fail("header claims " + std::to_string(count) + " records but only " + std::to_string(in.remaining()) +
            " bytes follow; the file is truncated or corrupt");
  }
  trace.records.resize(count);
  std::int64_t t = 0;
  for (std::uint64_t i = 0; i < count; ++i) {
    const std::uint64_t delta = in.varint("arrival delta", i);
    const std::uint64_t prompt = in.varint("prompt tokens", i);
    const std::uint64_t output = in.varint("output tokens", i);
    if (delta > (std::uint64_t{1} << 62) || prompt > 0xFFFFFFFFu || output > 0xFFFFFFFFu) {
      in.fail("record " + std::to_string(i) + " holds an out-of-range value");
    }
    t += static_cast<std::int64_t>(delta);
    trace.records[i] = {t, static_cast<std::uint32_t>(prompt), static_cast<std::uint32_t>(output)};
  }
  if (!in.at_end()) in.fail(std::to_string(in.remaining()) + " unexpected bytes after the last record");
  try {
    validate_trace(trace);
  } catch (const std::invalid_argument& e) {
    in.fail(e.what());
  }
  return trace;
}

std::string trace_sha256(const Trace& trace) { return core::sha256_hex(encode_trace(trace)); }

void write_trace_file(const std::filesystem::path& path, const Trace& trace) {
  core::write_file_atomically(path, encode_trace(trace));
}

Trace read_trace_file(const std::filesystem::path& path, std::string* sha256_out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw std::runtime_error("cannot open trace file " + path.string() +
                             ": check the path (relative paths are taken from the source tree)");
  }
  std::ostringstream buffer;
  buffer << in.rdbuf();
  const std::string bytes = buffer.str();
  if (sha256_out) *sha256_out = core::sha256_hex(bytes);
  return decode_trace(bytes, path.string());
}

}  // namespace k3lab::sim
