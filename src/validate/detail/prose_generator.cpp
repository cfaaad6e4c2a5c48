#include "detail/prose_generator.hpp"

#include <array>

#include "detail/text.hpp"

namespace k3lab::validate::detail {
namespace {

const std::vector<std::string_view> kNouns = {
    "lantern", "meadow",  "river",   "window",   "garden",  "harbor",   "bridge",  "valley",  "orchard",
    "pebble",  "kettle",  "blanket", "ribbon",   "ladder",  "basket",   "candle",  "feather", "cloud",
    "hill",    "path",    "fence",   "barn",     "cottage", "field",    "forest",  "pond",    "stone",
    "shell",   "tower",   "wagon",   "sail",     "anchor",  "canvas",   "compass", "drawer",  "curtain",
    "shelf",   "table",   "chair",   "carpet",   "mirror",  "clock",    "bell",    "quilt",   "jar",
    "bottle",  "teapot",  "spoon",   "bowl",     "loaf",    "apple",    "pear",    "plum",    "acorn",
    "maple",   "willow",  "pine",    "fern",     "moss",    "reed",     "tide",    "shore",   "dune",
    "cliff",   "cave",    "creek",   "breeze",   "sparrow", "heron",    "otter",   "badger",  "fox",
    "rabbit",  "pony",    "goat",    "lamb",     "owl",     "moth",     "beetle",  "snail",   "stair",
    "porch",   "chimney", "attic",   "cellar",   "gate",    "lane",     "square",  "fountain", "statue",
    "market",  "bakery",  "mill",    "workshop", "kiln",    "loom",     "needle",  "thread",  "button",
    "pocket",  "scarf",   "boot",    "umbrella", "postcard", "pencil",  "map",     "globe",   "paddle",
    "oar",     "rope",    "net",     "kite",     "drum",    "flute",    "fiddle",  "bench",   "hedge",
    "gravel",  "puddle",  "sunbeam", "shadow",   "horizon", "island",   "meadowlark", "cabin"};

const std::vector<std::string_view> kAdjectives = {
    "quiet",   "gentle",  "amber",    "narrow",  "wide",     "pale",     "bright",  "dusty",   "silver",
    "golden",  "crooked", "tidy",     "hollow",  "sturdy",   "faded",    "velvet",  "polished", "modest",
    "patient", "distant", "ordinary", "humble",  "woolen",   "wooden",   "copper",  "tall",    "small",
    "round",   "soft",    "brisk",    "calm",    "mellow",   "rustic",   "sunny",   "misty",   "windy",
    "grassy",  "sandy",   "rocky",    "shallow", "broad",    "slender",  "weathered", "familiar", "plain",
    "careful", "curious", "sleepy",   "steady",  "warm",     "cool",     "early",   "late",    "northern",
    "southern", "eastern", "western", "little",  "old",      "young",    "green",   "blue",    "gray",
    "brown",   "crimson", "ivory",    "olive",   "lavender"};

const std::vector<std::string_view> kIntransitivePast = {
    "rested",  "drifted",  "settled",  "waited",  "wandered", "glowed",   "lingered", "paused",
    "turned",  "swayed",   "rustled",  "creaked", "shimmered", "faded",   "hummed",   "dozed",
    "leaned",  "floated",  "trembled", "brightened", "cooled", "dried",   "softened", "echoed",
    "rolled",  "sparkled", "stirred",  "tilted",  "wobbled",  "flickered"};

const std::vector<std::string_view> kTransitivePast = {
    "carried", "followed", "covered", "watched", "crossed",  "gathered", "painted", "folded",
    "lifted",  "measured", "polished", "visited", "mended",  "arranged", "sorted",  "sketched",
    "admired", "circled",  "passed",   "touched", "framed",  "shaded",   "balanced", "traced",
    "cleaned", "opened",   "closed",   "filled",  "emptied", "noticed"};

const std::vector<std::string_view> kTransitivePresent = {
    "carries", "follows", "covers",  "watches", "crosses",  "gathers", "paints",  "folds",
    "lifts",   "measures", "polishes", "visits", "mends",   "arranges", "sorts",  "sketches",
    "admires", "circles", "passes",  "touches", "frames",   "shades",  "balances", "cleans",
    "opens",   "fills",   "notices"};

const std::vector<std::string_view> kAdverbs = {
    "quietly", "slowly",  "gently",    "softly",  "calmly",  "briefly", "lightly", "patiently",
    "steadily", "warmly", "lazily",    "neatly",  "carefully", "idly",  "gradually", "evenly",
    "loosely", "plainly", "easily",    "kindly"};

const std::vector<std::string_view> kPrepositions = {
    "beside", "behind", "beneath", "above", "across", "along", "around", "near",
    "past",   "toward", "under",   "over",  "beyond", "inside", "outside"};

const std::vector<std::string_view> kBaseVerbs = {
    "gather", "sort",  "measure", "arrange", "collect", "filter", "merge", "trim",  "label", "group",
    "rank",   "pack",  "scan",    "load",    "store",   "clean",  "render", "shape", "fold",  "mend"};

const std::vector<std::string_view> kOnsets = {"b", "br", "d",  "f",  "g",  "h",  "k",  "l",  "m",  "n", "p",
                                               "r", "s",  "t",  "v",  "th", "sh", "z",  "c",  "dr", "st", "gr",
                                               "tr", "w", "j"};
const std::vector<std::string_view> kVowels = {"a", "e", "i", "o", "u", "ae", "ia", "ou", "ei", "y"};
const std::vector<std::string_view> kCodas = {"", "", "n", "r", "l", "s", "m", "k", "rd", "nd", "lt"};

}  // namespace

std::string_view pick(core::Rng& rng, const std::vector<std::string_view>& words) {
  return words[rng.below(words.size())];
}

const std::vector<std::string_view>& prose_nouns() { return kNouns; }
const std::vector<std::string_view>& prose_adjectives() { return kAdjectives; }
const std::vector<std::string_view>& prose_base_verbs() { return kBaseVerbs; }

void ProseGenerator::append_sentence(std::string& out) {
  auto noun = [&] { out += pick(rng_, kNouns); };
  auto adj = [&] { out += pick(rng_, kAdjectives); };
  auto vi = [&] { out += pick(rng_, kIntransitivePast); };
  auto vt = [&] { out += pick(rng_, kTransitivePast); };
  auto vp = [&] { out += pick(rng_, kTransitivePresent); };
  auto adv = [&] { out += pick(rng_, kAdverbs); };
  auto prep = [&] { out += pick(rng_, kPrepositions); };
  auto cap_adv = [&] {
    const std::string_view word = pick(rng_, kAdverbs);
    out += upper(word[0]);
    out += word.substr(1);
  };
  auto s = [&](std::string_view text) { out += text; };
  // "a" or "an" followed by a word drawn from `words` (capitalised article at a sentence start).
  auto article = [&](const std::vector<std::string_view>& words, bool capital) {
    const std::string_view word = pick(rng_, words);
    const bool vowel = std::string_view("aeiou").find(word[0]) != std::string_view::npos;
    out += capital ? (vowel ? "An " : "A ") : (vowel ? "an " : "a ");
    out += word;
  };
  switch (rng_.below(10)) {
    case 0: s("The "); adj(); s(" "); noun(); s(" "); vi(); s(" "); prep(); s(" the "); noun(); s("."); break;
    case 1: cap_adv(); s(", the "); noun(); s(" "); vt(); s(" the "); adj(); s(" "); noun(); s("."); break;
    case 2:
      article(kAdjectives, true); s(" "); noun(); s(" "); vi(); s(" near the "); noun(); s(" while the "); noun(); s(" ");
      vi(); s(" "); adv(); s(".");
      break;
    case 3: s("Every "); noun(); s(" "); vp(); s(" "); article(kAdjectives, false); s(" "); noun(); s(" "); prep(); s(" the "); noun(); s("."); break;
    case 4: s("The "); noun(); s(" and the "); noun(); s(" "); vi(); s(" together "); prep(); s(" the "); adj(); s(" "); noun(); s("."); break;
    case 5: s("In the "); adj(); s(" "); noun(); s(", "); article(kNouns, false); s(" "); vi(); s(" "); adv(); s("."); break;
    case 6: s("Someone "); vt(); s(" the "); noun(); s(" before the "); adj(); s(" "); noun(); s(" "); vi(); s("."); break;
    case 7:
      s("Beyond the "); noun(); s(", the "); adj(); s(" "); noun(); s(" "); vi(); s(" and the "); noun(); s(" "); vi(); s(".");
      break;
    case 8: s("The "); noun(); s(" "); vt(); s(" the "); noun(); s(", and the "); noun(); s(" "); vi(); s(" "); adv(); s("."); break;
    default: cap_adv(); s(", "); article(kAdjectives, false); s(" "); noun(); s(" "); vt(); s(" the "); noun(); s(" "); prep(); s(" the "); noun(); s("."); break;
  }
}

void ProseGenerator::append_paragraph(std::string& out, int sentences) {
  for (int i = 0; i < sentences; ++i) {
    if (i > 0) out += ' ';
    append_sentence(out);
  }
}

std::string ProseGenerator::sentence() {
  std::string out;
  append_sentence(out);
  return out;
}

std::string InventedName::text() const {
  std::string out;
  for (const auto& syllable : syllables) out += syllable;
  return capitalize(out);
}

InventedName invent_name(core::Rng& rng, int min_syllables, int max_syllables) {
  const int count = min_syllables + static_cast<int>(rng.below(static_cast<std::uint64_t>(max_syllables - min_syllables + 1)));
  InventedName name;
  for (int i = 0; i < count; ++i) {
    std::string syllable(pick(rng, kOnsets));
    syllable += pick(rng, kVowels);
    if (i == count - 1 || rng.below(3) == 0) syllable += pick(rng, kCodas);
    name.syllables.push_back(std::move(syllable));
  }
  return name;
}

InventedName near_miss(const InventedName& name, core::Rng& rng) {
  InventedName variant = name;
  const std::string original = name.text();
  for (;;) {
    const std::size_t which = rng.below(variant.syllables.size());
    std::string& syllable = variant.syllables[which];
    // Replace the first vowel run of the syllable with a different vowel.
    std::size_t start = 0;
    while (start < syllable.size() && std::string_view("aeiouy").find(syllable[start]) == std::string_view::npos) ++start;
    std::size_t end = start;
    while (end < syllable.size() && std::string_view("aeiouy").find(syllable[end]) != std::string_view::npos) ++end;
    syllable.replace(start, end - start, pick(rng, kVowels));
    if (variant.text() != original) return variant;
    variant = name;
  }
}

}  // namespace k3lab::validate::detail
