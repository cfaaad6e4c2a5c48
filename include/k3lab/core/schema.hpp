#pragma once
// A small declarative schema for protocol JSON: every key is declared with its type, bounds and
// meaning; unknown keys are errors with a "did you mean"; every error names the field and what is
// expected. No silent defaults: a missing required field is an error.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace k3lab::core {

class Schema;

enum class FieldType { String, Integer, Number, Boolean, Object, Array, Any };

struct Field {
  std::string name;
  FieldType type = FieldType::String;
  bool required = true;
  std::string doc;
  std::optional<double> min;          // inclusive, numbers and integers
  std::optional<double> max;          // inclusive
  bool exclusive_min = false;         // min is a strict bound
  std::vector<std::string> choices;   // allowed strings (strings, or array elements)
  std::shared_ptr<Schema> object;     // Object: its schema; Array: the schema of object elements
  FieldType element = FieldType::Any; // Array: element type
  std::size_t min_items = 0;

  Field& optional() { required = false; return *this; }
  Field& at_least(double v) { min = v; return *this; }
  Field& above(double v) { min = v; exclusive_min = true; return *this; }
  Field& at_most(double v) { max = v; return *this; }
  Field& one_of(std::vector<std::string> values) { choices = std::move(values); return *this; }
  Field& non_empty() { min_items = 1; return *this; }
};

struct SchemaIssue {
  std::string path;     // e.g. parameters.mixes[1].arrival.rate
  std::string message;  // what is wrong and what is expected
};

// `heading`, then one line "  <path>: <message>" per issue.
std::string schema_issues_message(const std::string& heading, const std::vector<SchemaIssue>& issues);

// Throws std::invalid_argument with schema_issues_message; nothing when there is no issue.
void throw_schema_issues(const std::string& heading, const std::vector<SchemaIssue>& issues);

class Schema {
 public:
  Field& string(std::string name, std::string doc);
  Field& integer(std::string name, std::string doc);
  Field& number(std::string name, std::string doc);
  Field& boolean(std::string name, std::string doc);
  Field& object(std::string name, std::shared_ptr<Schema> schema, std::string doc);
  // An object whose keys are free-form (e.g. profile overrides checked later).
  Field& any_object(std::string name, std::string doc);
  Field& array_of(std::string name, FieldType element, std::string doc);
  Field& array_of_objects(std::string name, std::shared_ptr<Schema> schema, std::string doc);

  const std::vector<Field>& fields() const { return fields_; }
  const Field* find(const std::string& name) const;

  // All problems found, in document order; empty when valid.
  std::vector<SchemaIssue> validate(const nlohmann::json& value, const std::string& path = "") const;

  // The schema as Markdown rows (name, type, required, bounds, doc), for docs and `validate --schema`.
  std::string describe(const std::string& prefix = "") const;

 private:
  Field& add(std::string name, FieldType type, std::string doc);
  std::vector<Field> fields_;
};

std::string field_type_name(FieldType type);

// Closest candidate by edit distance, if close enough to be a plausible typo.
std::optional<std::string> did_you_mean(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace k3lab::core
