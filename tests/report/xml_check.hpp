#pragma once
// A small XML well-formedness checker for the SVG tests: matched tags, quoted unique attributes,
// valid entity references, one root element. Not a validator; enough to catch broken output.
#include <string>
#include <string_view>

namespace k3lab::report::testing {

// Empty when `xml` is well-formed, otherwise what is wrong and at which byte offset.
std::string xml_error(std::string_view xml);

}  // namespace k3lab::report::testing
