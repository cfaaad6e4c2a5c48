#include "k3lab/validate/context_reader.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "detail/repository_reading.hpp"
#include "detail/text.hpp"
#include "k3lab/core/rng.hpp"
#include "k3lab/validate/evidence_ids.hpp"
#include "k3lab/validate/prompt_format.hpp"

namespace k3lab::validate {
namespace {

using detail::trim;

struct DocumentSection {
  std::string id;
  std::string_view text;
  std::size_t offset = 0;
};

struct Document {
  std::vector<DocumentSection> sections;
  std::string_view question;
  std::size_t question_offset = 0;
};

// "[E01234] " at the start of a line opens a section.
std::optional<std::string> section_id_at(std::string_view line) {
  if (line.size() < 4 || line[0] != '[' || line[1] != 'E') return std::nullopt;
  const std::size_t close = line.find("] ");
  if (close == std::string_view::npos) return std::nullopt;
  return canonical_evidence_id(line.substr(0, close + 1));
}

std::optional<Document> parse_document(std::string_view prompt) {
  const std::size_t start = prompt.find(kDocumentStartMarker);
  if (start == std::string_view::npos) return std::nullopt;
  const std::size_t end = prompt.find(kDocumentEndMarker, start);
  if (end == std::string_view::npos) return std::nullopt;
  const std::size_t question = prompt.find(kQuestionMarker, end);
  if (question == std::string_view::npos) return std::nullopt;
  Document doc;
  const std::size_t question_text = question + kQuestionMarker.size();
  std::size_t question_end = prompt.find('\n', question_text);
  if (question_end == std::string_view::npos) question_end = prompt.size();
  doc.question = trim(prompt.substr(question_text, question_end - question_text));
  doc.question_offset = question;

  std::size_t pos = prompt.find('\n', start);
  pos = pos == std::string_view::npos ? end : pos + 1;
  std::size_t open_text = 0;
  auto close_section = [&](std::size_t at) {
    if (!doc.sections.empty()) doc.sections.back().text = trim(prompt.substr(open_text, at - open_text));
  };
  while (pos < end) {
    std::size_t line_end = prompt.find('\n', pos);
    if (line_end == std::string_view::npos || line_end > end) line_end = end;
    const std::string_view line = prompt.substr(pos, line_end - pos);
    if (auto id = section_id_at(line)) {
      close_section(pos);
      doc.sections.push_back({*id, {}, pos});
      open_text = pos + line.find("] ") + 2;
    }
    pos = line_end + 1;
  }
  close_section(end);
  return doc;
}

// Splits "<prefix>X<infix>Y<suffix>" with the first infix after the prefix.
bool split_around(std::string_view text, std::string_view prefix, std::string_view infix, std::string_view suffix,
                  std::string_view& x, std::string_view& y) {
  if (text.substr(0, prefix.size()) != prefix) return false;
  if (text.size() < prefix.size() + suffix.size() || text.substr(text.size() - suffix.size()) != suffix) return false;
  const std::string_view middle = text.substr(prefix.size(), text.size() - prefix.size() - suffix.size());
  const std::size_t at = middle.find(infix);
  if (at == std::string_view::npos) return false;
  x = middle.substr(0, at);
  y = middle.substr(at + infix.size());
  return true;
}

struct Resolution {
  bool understood = false;
  std::string family;
  std::string answer;
  std::vector<std::size_t> used;        // section indices of the correct resolution
  std::string confused_answer = "not found";
  std::vector<std::size_t> confused_used;
};

// Among candidate section indices, the one nearest to the question (the latest in the document).
std::optional<std::size_t> nearest_to_question(const std::vector<std::size_t>& candidates) {
  if (candidates.empty()) return std::nullopt;
  return *std::max_element(candidates.begin(), candidates.end());
}

std::size_t earliest(const std::vector<std::size_t>& used) { return *std::min_element(used.begin(), used.end()); }

// --- single and distractor retrieval -------------------------------------------------------------

struct Fact {
  std::string_view attribute, subject, value;
  std::size_t section;
};

std::optional<Resolution> resolve_retrieval(const Document& doc) {
  std::string_view attribute, subject;
  if (!split_around(doc.question, "What is the ", " of ", "? Give the number only.", attribute, subject)) return std::nullopt;
  Resolution r;
  r.understood = true;
  r.family = "retrieval";
  std::vector<Fact> facts;
  for (std::size_t i = 0; i < doc.sections.size(); ++i) {
    std::string_view a, rest;
    if (!split_around(doc.sections[i].text, "Records show that the ", " of ", ".", a, rest)) continue;
    const std::size_t is = rest.rfind(" is ");
    if (is == std::string_view::npos) continue;
    facts.push_back({a, rest.substr(0, is), rest.substr(is + 4), i});
  }
  std::vector<std::size_t> competitors;
  for (const Fact& fact : facts) {
    if (fact.attribute == attribute && fact.subject == subject) {
      if (r.used.empty()) {
        r.answer = std::string(fact.value);
        r.used = {fact.section};
      }
    } else if (fact.attribute == attribute || fact.subject == subject) {
      competitors.push_back(fact.section);
    }
  }
  if (r.used.empty()) r.answer = "not found";
  if (auto wrong = nearest_to_question(competitors)) {
    for (const Fact& fact : facts) {
      if (fact.section == *wrong) r.confused_answer = std::string(fact.value);
    }
    r.confused_used = {*wrong};
  }
  return r;
}

// --- multi-hop ---------------------------------------------------------------------------------

std::optional<Resolution> resolve_multi_hop(const Document& doc) {
  std::string_view person, ignored;
  if (!split_around(doc.question, "What is the dialing prefix for the city in which the office of ", " is located",
                    "? Give the number only.", person, ignored)) {
    return std::nullopt;
  }
  if (!ignored.empty()) return std::nullopt;
  struct Link {
    std::string_view from, to;
    std::size_t section;
  };
  std::vector<Link> works, located, prefix;
  for (std::size_t i = 0; i < doc.sections.size(); ++i) {
    const std::string_view text = doc.sections[i].text;
    std::string_view x, y;
    if (split_around(text, "Staff directory: ", " works in the ", " office.", x, y)) works.push_back({x, y, i});
    if (split_around(text, "Facilities register: the ", " office is located in the city of ", ".", x, y))
      located.push_back({x, y, i});
    if (split_around(text, "Telephone guide: the dialing prefix for the city of ", " is ", ".", x, y))
      prefix.push_back({x, y, i});
  }
  auto find = [](const std::vector<Link>& links, std::string_view from) -> const Link* {
    for (const Link& link : links) {
      if (link.from == from) return &link;
    }
    return nullptr;
  };
  // Follows the chain; `replace` (0..2) swaps that hop for the competitor nearest to the question.
  auto follow = [&](int replace, std::string& answer, std::vector<std::size_t>& used) {
    const std::vector<Link>* tables[3] = {&works, &located, &prefix};
    std::string_view key = person;
    for (int hop = 0; hop < 3; ++hop) {
      const Link* link = find(*tables[hop], key);
      if (hop == replace) {
        const Link* alternative = nullptr;
        for (const Link& candidate : *tables[hop]) {
          if (&candidate != link && (alternative == nullptr || candidate.section > alternative->section)) {
            alternative = &candidate;
          }
        }
        link = alternative;
      }
      if (link == nullptr) {
        answer = "not found";
        return;
      }
      used.push_back(link->section);
      key = link->to;
    }
    answer = std::string(key);
  };
  Resolution r;
  r.understood = true;
  r.family = "multi-hop";
  follow(-1, r.answer, r.used);
  if (r.used.size() == 3) {
    const int farthest = static_cast<int>(std::min_element(r.used.begin(), r.used.end()) - r.used.begin());
    follow(farthest, r.confused_answer, r.confused_used);
  }
  return r;
}

// --- order-sensitive state -----------------------------------------------------------------------

std::optional<Resolution> resolve_order_state(const Document& doc) {
  std::string_view account, rest;
  if (!split_around(doc.question, "Apply the ledger events for account ", " in the order in which they appear",
                    "? Give the number only.", account, rest)) {
    return std::nullopt;
  }
  struct Event {
    char op;  // 'o' open, 'r' reset, '+', '-', '*'
    long long value;
    std::size_t section;
  };
  std::vector<Event> events;
  for (std::size_t i = 0; i < doc.sections.size(); ++i) {
    const std::string_view text = doc.sections[i].text;
    std::string_view x, y;
    long long v = 0;
    if (split_around(text, "Ledger event: account ", " was opened with a balance of ", " credits.", x, y) &&
        x == account && detail::parse_int64(y, v)) {
      events.push_back({'o', v, i});
    } else if (split_around(text, "Ledger event: ", " credits were deposited into account ", ".", x, y) && y == account &&
               detail::parse_int64(x, v)) {
      events.push_back({'+', v, i});
    } else if (split_around(text, "Ledger event: ", " credits were withdrawn from account ", ".", x, y) && y == account &&
               detail::parse_int64(x, v)) {
      events.push_back({'-', v, i});
    } else if (split_around(text, "Ledger event: the balance of account ", " was multiplied by ", ".", x, y) &&
               x == account && detail::parse_int64(y, v)) {
      events.push_back({'*', v, i});
    } else if (split_around(text, "Ledger event: the balance of account ", " was reset to ", " credits.", x, y) &&
               x == account && detail::parse_int64(y, v)) {
      events.push_back({'r', v, i});
    }
  }
  auto run = [](const std::vector<Event>& list, std::size_t skip) {
    long long balance = 0;
    for (std::size_t k = 0; k < list.size(); ++k) {
      if (k == skip) continue;
      const Event& e = list[k];
      if (e.op == 'o' || e.op == 'r') balance = e.value;
      if (e.op == '+') balance += e.value;
      if (e.op == '-') balance -= e.value;
      if (e.op == '*') balance *= e.value;
    }
    return balance;
  };
  Resolution r;
  r.understood = true;
  r.family = "order-state";
  if (events.empty()) {
    r.answer = "not found";
    return r;
  }
  r.answer = std::to_string(run(events, events.size()));
  for (const Event& e : events) r.used.push_back(e.section);
  // A confused reader forgets the earliest event (the farthest from the question); when that does not
  // change the result (a later reset), it applies the later events in the wrong order instead.
  r.confused_answer = std::to_string(run(events, 0));
  r.confused_used.assign(r.used.begin() + 1, r.used.end());
  if (r.confused_answer == r.answer && events.size() > 2) {
    std::vector<Event> reordered{events.front()};
    reordered.insert(reordered.end(), events.rbegin(), events.rend() - 1);
    r.confused_answer = std::to_string(run(reordered, reordered.size()));
    r.confused_used = r.used;
  }
  return r;
}

// --- repository ------------------------------------------------------------------------------------

struct Module {
  std::size_t section = 0;
  std::map<std::string, std::string> imports;  // name -> module
  std::map<std::string, long long> constants;
  struct Expression {
    std::string name;  // called function or referenced constant
    char op = '+';
    long long operand = 0;
  };
  std::map<std::string, Expression> assignments;  // NAME = f() op k
  std::map<std::string, Expression> functions;    // def f(): return NAME op k
};

bool parse_expression(std::string_view text, bool call, Module::Expression& out) {
  // "<name>() + 4" (call) or "<NAME> * 3"
  text = trim(text);
  const std::size_t space = text.find(' ');
  if (space == std::string_view::npos || space + 3 > text.size()) return false;
  std::string_view name = text.substr(0, space);
  if (call) {
    if (name.size() < 3 || name.substr(name.size() - 2) != "()") return false;
    name.remove_suffix(2);
  }
  const char op = text[space + 1];
  if (op != '+' && op != '-' && op != '*') return false;
  long long operand = 0;
  if (!detail::parse_int64(text.substr(space + 2), operand)) return false;
  out = {std::string(name), op, operand};
  return true;
}

long long apply_op(long long value, char op, long long operand) {
  if (op == '+') return value + operand;
  if (op == '-') return value - operand;
  return value * operand;
}

std::map<std::string, Module> parse_modules(const Document& doc) {
  std::map<std::string, Module> modules;
  for (std::size_t i = 0; i < doc.sections.size(); ++i) {
    const std::string_view text = doc.sections[i].text;
    if (text.substr(0, 6) != "FILE: ") continue;
    const std::vector<std::string_view> lines = detail::split_lines(text);
    std::string path(trim(lines[0].substr(6)));
    if (path.size() < 7 || path.substr(0, 4) != "src/" || path.substr(path.size() - 3) != ".py") continue;
    std::string name = path.substr(4, path.size() - 7);
    std::replace(name.begin(), name.end(), '/', '.');
    Module module;
    module.section = i;
    std::string current_function;
    for (std::size_t l = 1; l < lines.size(); ++l) {
      const std::string_view line = lines[l];
      std::string_view a, b;
      if (!line.empty() && line[0] != ' ') current_function.clear();  // a new top-level statement
      if (split_around(line, "from ", " import ", "", a, b)) {
        module.imports[std::string(trim(b))] = std::string(trim(a));
      } else if (split_around(line, "def ", "(", "):", a, b) && b.empty()) {
        current_function = std::string(a);
      } else if (!current_function.empty() && split_around(line, "    return ", "", "", a, b)) {
        Module::Expression e;
        if (parse_expression(b, false, e)) module.functions[current_function] = e;
      } else if (!line.empty() && line[0] != ' ' && split_around(line, "", " = ", "", a, b)) {
        long long value = 0;
        Module::Expression e;
        if (detail::parse_int64(b, value)) {
          module.constants[std::string(a)] = value;
        } else if (parse_expression(b, true, e)) {
          module.assignments[std::string(a)] = e;
        }
      }
    }
    modules[name] = std::move(module);
  }
  return modules;
}

class RepositoryEvaluator {
 public:
  RepositoryEvaluator(const std::map<std::string, Module>& modules, bool confuse_constants)
      : modules_(modules), confuse_(confuse_constants) {}

  std::optional<long long> value(const std::string& module_name, const std::string& name, int depth = 0) {
    if (depth > 16) return std::nullopt;
    const auto it = modules_.find(module_name);
    if (it == modules_.end()) return std::nullopt;
    const Module& module = it->second;
    if (auto c = module.constants.find(name); c != module.constants.end()) {
      used.push_back(module.section);
      return c->second;
    }
    if (auto a = module.assignments.find(name); a != module.assignments.end()) {
      used.push_back(module.section);
      auto inner = value(module_name, a->second.name, depth + 1);
      if (!inner) return std::nullopt;
      return apply_op(*inner, a->second.op, a->second.operand);
    }
    if (auto f = module.functions.find(name); f != module.functions.end()) {
      used.push_back(module.section);
      auto inner = value(module_name, f->second.name, depth + 1);
      if (!inner) return std::nullopt;
      return apply_op(*inner, f->second.op, f->second.operand);
    }
    if (auto i = module.imports.find(name); i != module.imports.end()) {
      std::string source = i->second;
      if (confuse_) source = competing_constant_module(source, name);
      return value(source, name, depth + 1);
    }
    return std::nullopt;
  }

  std::vector<std::size_t> used;

 private:
  // A confused reader takes a constant from another module that defines the same name (the one
  // nearest to the question), instead of following the import.
  std::string competing_constant_module(const std::string& imported, const std::string& name) const {
    std::string best = imported;
    std::size_t best_section = 0;
    bool found = false;
    for (const auto& [module_name, module] : modules_) {
      if (module_name == imported || module.constants.count(name) == 0) continue;
      if (!found || module.section > best_section) {
        best = module_name;
        best_section = module.section;
        found = true;
      }
    }
    return best;
  }

  const std::map<std::string, Module>& modules_;
  bool confuse_;
};

std::optional<Resolution> resolve_repository(const Document& doc) {
  std::string_view target, path;
  if (!split_around(doc.question, "In this repository snapshot, what integer value does the constant ", " defined in ",
                    " evaluate to? Give the integer only.", target, path)) {
    return std::nullopt;
  }
  Resolution r;
  r.understood = true;
  r.family = "repository";
  if (path.size() < 7 || path.substr(0, 4) != "src/" || path.substr(path.size() - 3) != ".py") {
    r.answer = "not found";
    return r;
  }
  std::string module_name(path.substr(4, path.size() - 7));
  std::replace(module_name.begin(), module_name.end(), '/', '.');
  const std::map<std::string, Module> modules = parse_modules(doc);
  RepositoryEvaluator correct(modules, false);
  if (auto value = correct.value(module_name, std::string(target))) {
    r.answer = std::to_string(*value);
    r.used = correct.used;
  } else {
    r.answer = "not found";
  }
  RepositoryEvaluator confused(modules, true);
  if (auto value = confused.value(module_name, std::string(target))) {
    r.confused_answer = std::to_string(*value);
    r.confused_used = confused.used;
  }
  return r;
}

// A pinned real repository's question: the file sections go to the repository reading.
std::optional<Resolution> resolve_pinned_repository(const Document& doc) {
  std::vector<detail::FileSection> files;
  for (std::size_t i = 0; i < doc.sections.size(); ++i) {
    const std::string_view text = doc.sections[i].text;
    if (text.substr(0, 6) != "FILE: ") continue;
    const std::size_t newline = text.find('\n');
    if (newline == std::string_view::npos) continue;
    files.push_back({std::string(trim(text.substr(6, newline - 6))), text.substr(newline + 1), i});
  }
  std::optional<detail::RepositoryReading> reading = detail::read_repository_question(doc.question, files);
  if (!reading) return std::nullopt;
  Resolution r;
  r.understood = true;
  r.family = "repository";
  r.answer = std::move(reading->answer);
  r.used = std::move(reading->used);
  r.confused_answer = std::move(reading->confused_answer);
  r.confused_used = std::move(reading->confused_used);
  return r;
}

std::string format_reply(const std::string& answer, const std::vector<std::size_t>& used, const Document& doc) {
  std::vector<std::size_t> ordered = used;
  std::sort(ordered.begin(), ordered.end());
  ordered.erase(std::unique(ordered.begin(), ordered.end()), ordered.end());
  std::string evidence;
  for (std::size_t i : ordered) {
    if (!evidence.empty()) evidence += ", ";
    evidence += doc.sections[i].id;
  }
  return "ANSWER: " + answer + "\nEVIDENCE: " + (evidence.empty() ? std::string("none") : evidence);
}

}  // namespace

double reader_failure_probability(const ReaderConfig& config, std::size_t distance_tokens) {
  if (!(config.base_failure >= 0.0 && config.base_failure <= config.max_failure && config.max_failure <= 1.0)) {
    std::ostringstream msg;
    msg << "ReaderConfig: need 0 <= base_failure (" << config.base_failure << ") <= max_failure (" << config.max_failure
        << ") <= 1; fix the reader settings";
    throw std::invalid_argument(msg.str());
  }
  if (!(config.distance_scale_tokens > 0.0)) {
    throw std::invalid_argument("ReaderConfig.distance_scale_tokens must be > 0 (tokens over which recall decays)");
  }
  const double growth = 1.0 - std::exp(-static_cast<double>(distance_tokens) / config.distance_scale_tokens);
  return config.base_failure + (config.max_failure - config.base_failure) * growth;
}

ReaderReply read_fixture_prompt(std::string_view prompt, const ReaderConfig& config) {
  reader_failure_probability(config, 0);  // validates the configuration
  if (!config.estimator.count) {
    throw std::invalid_argument("ReaderConfig.estimator has no counting function; use conservative_byte_estimator()");
  }
  ReaderReply reply;
  const std::optional<Document> doc = parse_document(prompt);
  if (!doc) {
    reply.text = "ANSWER: I could not find a document and a question in the prompt.\nEVIDENCE: none";
    return reply;
  }
  // Most specific question forms first: the multi-hop question also fits "What is the X of Y?".
  std::optional<Resolution> resolution = resolve_multi_hop(*doc);
  if (!resolution) resolution = resolve_order_state(*doc);
  if (!resolution) resolution = resolve_repository(*doc);
  if (!resolution) resolution = resolve_pinned_repository(*doc);
  if (!resolution) resolution = resolve_retrieval(*doc);
  if (!resolution) {
    reply.text = "ANSWER: I do not recognise this question.\nEVIDENCE: none";
    return reply;
  }
  reply.understood = true;
  reply.family = resolution->family;
  if (!resolution->used.empty()) {
    const std::size_t first = doc->sections[earliest(resolution->used)].offset;
    reply.distance_tokens = config.estimator(prompt.substr(first, doc->question_offset - first));
  }
  reply.failure_probability = reader_failure_probability(config, reply.distance_tokens);
  core::Rng rng(core::stream_seed(config.seed, {core::fnv1a64(prompt)}));
  reply.recall_failed = rng.uniform() < reply.failure_probability;
  reply.text = reply.recall_failed ? format_reply(resolution->confused_answer, resolution->confused_used, *doc)
                                   : format_reply(resolution->answer, resolution->used, *doc);
  return reply;
}

}  // namespace k3lab::validate
