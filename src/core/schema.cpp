#include "k3lab/core/schema.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <sstream>

namespace k3lab::core {
namespace {

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t substitute = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, substitute});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string describe_value(const nlohmann::json& v) {
  std::string text = v.dump();
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  return text;
}

std::string join_path(const std::string& path, const std::string& name) {
  return path.empty() ? name : path + "." + name;
}

// An integral number; 2.0 and 1e3 count (JSON does not distinguish), 2.5 does not.
bool is_integral(const nlohmann::json& v) {
  return v.is_number_integer() || (v.is_number_float() && std::floor(v.get<double>()) == v.get<double>());
}

// Within int64, the type every module reads integers as. 2^63 is exact as a double, so the upper
// comparison is exact too.
bool fits_int64(const nlohmann::json& v) {
  if (v.is_number_unsigned()) return v.get<std::uint64_t>() <= static_cast<std::uint64_t>(INT64_MAX);
  if (v.is_number_integer()) return true;
  const double x = v.get<double>();
  return x >= -0x1p63 && x < 0x1p63;
}

bool type_matches(FieldType type, const nlohmann::json& v) {
  switch (type) {
    case FieldType::String: return v.is_string();
    case FieldType::Integer: return is_integral(v);
    case FieldType::Number: return v.is_number();
    case FieldType::Boolean: return v.is_boolean();
    case FieldType::Object: return v.is_object();
    case FieldType::Array: return v.is_array();
    case FieldType::Any: return true;
  }
  return false;
}

std::string bounds_text(const Field& f) {
  std::ostringstream out;
  if (f.min) out << (f.exclusive_min ? "> " : ">= ") << *f.min;
  if (f.min && f.max) out << " and ";
  if (f.max) out << "<= " << *f.max;
  return out.str();
}

void check_scalar(const Field& f, FieldType type, const nlohmann::json& v, const std::string& path,
                  std::vector<SchemaIssue>& issues) {
  if (!type_matches(type, v)) {
    issues.push_back({path, "expected " + field_type_name(type) + ", got " + describe_value(v)});
    return;
  }
  if (type == FieldType::Integer && !fits_int64(v)) {
    issues.push_back({path, "expected an integer between -9223372036854775808 and 9223372036854775807, got " +
                                describe_value(v)});
    return;
  }
  if (v.is_number()) {
    const double x = v.get<double>();
    const bool below = f.min && (f.exclusive_min ? x <= *f.min : x < *f.min);
    const bool above = f.max && x > *f.max;
    if (below || above) {
      issues.push_back({path, "expected a value " + bounds_text(f) + ", got " + describe_value(v)});
    }
  }
  if (v.is_string() && !f.choices.empty() &&
      std::find(f.choices.begin(), f.choices.end(), v.get<std::string>()) == f.choices.end()) {
    std::string allowed;
    for (const auto& c : f.choices) allowed += (allowed.empty() ? "" : ", ") + c;
    std::string message = "expected one of {" + allowed + "}, got " + describe_value(v);
    if (auto guess = did_you_mean(v.get<std::string>(), f.choices)) message += "; did you mean \"" + *guess + "\"?";
    issues.push_back({path, message});
  }
}

}  // namespace

std::string field_type_name(FieldType type) {
  switch (type) {
    case FieldType::String: return "a string";
    case FieldType::Integer: return "an integer";
    case FieldType::Number: return "a number";
    case FieldType::Boolean: return "true or false";
    case FieldType::Object: return "an object";
    case FieldType::Array: return "an array";
    case FieldType::Any: return "any value";
  }
  return "?";
}

std::optional<std::string> did_you_mean(const std::string& word, const std::vector<std::string>& candidates) {
  std::optional<std::string> best;
  std::size_t best_distance = std::max<std::size_t>(2, word.size() / 3) + 1;
  for (const auto& c : candidates) {
    const std::size_t d = edit_distance(word, c);
    if (d < best_distance) {
      best_distance = d;
      best = c;
    }
  }
  return best;
}

Field& Schema::add(std::string name, FieldType type, std::string doc) {
  Field f;
  f.name = std::move(name);
  f.type = type;
  f.doc = std::move(doc);
  fields_.push_back(std::move(f));
  return fields_.back();
}

Field& Schema::string(std::string name, std::string doc) { return add(std::move(name), FieldType::String, std::move(doc)); }
Field& Schema::integer(std::string name, std::string doc) { return add(std::move(name), FieldType::Integer, std::move(doc)); }
Field& Schema::number(std::string name, std::string doc) { return add(std::move(name), FieldType::Number, std::move(doc)); }
Field& Schema::boolean(std::string name, std::string doc) { return add(std::move(name), FieldType::Boolean, std::move(doc)); }
Field& Schema::object(std::string name, std::shared_ptr<Schema> schema, std::string doc) {
  Field& f = add(std::move(name), FieldType::Object, std::move(doc));
  f.object = std::move(schema);
  return f;
}
Field& Schema::any_object(std::string name, std::string doc) { return add(std::move(name), FieldType::Object, std::move(doc)); }
Field& Schema::array_of(std::string name, FieldType element, std::string doc) {
  Field& f = add(std::move(name), FieldType::Array, std::move(doc));
  f.element = element;
  return f;
}
Field& Schema::array_of_objects(std::string name, std::shared_ptr<Schema> schema, std::string doc) {
  Field& f = add(std::move(name), FieldType::Array, std::move(doc));
  f.element = FieldType::Object;
  f.object = std::move(schema);
  return f;
}

const Field* Schema::find(const std::string& name) const {
  for (const auto& f : fields_) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

std::vector<SchemaIssue> Schema::validate(const nlohmann::json& value, const std::string& path) const {
  std::vector<SchemaIssue> issues;
  if (!value.is_object()) {
    issues.push_back({path.empty() ? "(top level)" : path, "expected an object, got " + describe_value(value)});
    return issues;
  }
  std::vector<std::string> known;
  for (const auto& f : fields_) known.push_back(f.name);
  for (auto it = value.begin(); it != value.end(); ++it) {
    if (find(it.key())) continue;
    std::string message = "unknown key \"" + it.key() + "\"";
    if (auto guess = did_you_mean(it.key(), known)) message += "; did you mean \"" + *guess + "\"?";
    else message += "; allowed keys here: " + [&] {
      std::string all;
      for (const auto& k : known) all += (all.empty() ? "" : ", ") + k;
      return all;
    }();
    issues.push_back({join_path(path, it.key()), message});
  }
  for (const auto& f : fields_) {
    const std::string here = join_path(path, f.name);
    auto it = value.find(f.name);
    if (it == value.end()) {
      if (f.required) issues.push_back({here, "missing required field: " + field_type_name(f.type) + " (" + f.doc + ")"});
      continue;
    }
    const auto& v = *it;
    if (f.type == FieldType::Object) {
      if (!v.is_object()) {
        issues.push_back({here, "expected an object, got " + describe_value(v)});
      } else if (f.object) {
        auto nested = f.object->validate(v, here);
        issues.insert(issues.end(), nested.begin(), nested.end());
      }
      continue;
    }
    if (f.type == FieldType::Array) {
      if (!v.is_array()) {
        issues.push_back({here, "expected an array, got " + describe_value(v)});
        continue;
      }
      if (v.size() < f.min_items) {
        issues.push_back({here, "expected at least " + std::to_string(f.min_items) + " item(s), got none"});
      }
      for (std::size_t i = 0; i < v.size(); ++i) {
        const std::string item_path = here + "[" + std::to_string(i) + "]";
        if (f.element == FieldType::Object && f.object) {
          auto nested = f.object->validate(v[i], item_path);
          issues.insert(issues.end(), nested.begin(), nested.end());
        } else if (f.element != FieldType::Any) {
          check_scalar(f, f.element, v[i], item_path, issues);
        }
      }
      continue;
    }
    check_scalar(f, f.type, v, here, issues);
  }
  return issues;
}

std::string Schema::describe(const std::string& prefix) const {
  std::ostringstream out;
  for (const auto& f : fields_) {
    const std::string name = prefix.empty() ? f.name : prefix + "." + f.name;
    std::string type = field_type_name(f.type);
    if (f.type == FieldType::Array && f.element != FieldType::Any) type = "array of " + field_type_name(f.element);
    std::string constraint = bounds_text(f);
    if (!f.choices.empty()) {
      for (const auto& c : f.choices) constraint += (constraint.empty() ? "" : "|") + c;
    }
    out << "| `" << name << "` | " << type << " | " << (f.required ? "yes" : "no") << " | " << constraint
        << " | " << f.doc << " |\n";
    if (f.object) out << f.object->describe(f.type == FieldType::Array ? name + "[]" : name);
  }
  return out.str();
}

std::string schema_issues_message(const std::string& heading, const std::vector<SchemaIssue>& issues) {
  std::string message = heading;
  for (const auto& issue : issues) message += "\n  " + issue.path + ": " + issue.message;
  return message;
}

void throw_schema_issues(const std::string& heading, const std::vector<SchemaIssue>& issues) {
  if (!issues.empty()) throw std::invalid_argument(schema_issues_message(heading, issues));
}

}  // namespace k3lab::core
