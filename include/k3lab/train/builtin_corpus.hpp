#pragma once
// The corpus compiled into the binary (fixtures/corpus/jargon-4.4.7-excerpt.txt, public domain), so
// the smoke profile trains on real English text with nothing installed. Its provenance is
// fixtures/corpus/MANIFEST.json; docs/data.md explains the choice.
#include <string_view>

namespace k3lab::train {

std::string_view builtin_tiny_text();
// The sha256 recorded in fixtures/corpus/MANIFEST.json (a unit test checks the embedded bytes match).
inline constexpr std::string_view kBuiltinTinySha256 = "b8ec39e54aeb9c50bf278134cbbedf32426f290ddbfaa6cd8eee4bb088477e37";

}  // namespace k3lab::train
