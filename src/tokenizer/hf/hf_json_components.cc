// tokenizer.json's normalizer, pre_tokenizer, post_processor and decoder; anything else is an
// Error naming the component type.
#include "core/error.h"
#include "tokenizer/hf/hf_json.h"
#include "tokenizer/hf/hf_pipeline.h"

namespace ridge::hf {

namespace {

// The Split regexes of real tokenizer.json files that ridge's hand-written splitters reproduce.
constexpr std::string_view kGpt2Regex = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
constexpr std::string_view kLlama3Regex =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr std::string_view kQwen2Regex =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

const json& array_at(const json& j, const char* key) {
  const json& a = j.at(key);
  if (!a.is_array()) fail("'{}' is not a list", key);
  return a;
}

void add_normalizer(const json& j, std::vector<NormalizerStep>& steps) {
  if (j.is_null()) return;
  const std::string type = type_of(j);
  auto codepoints = [&](std::vector<NormalizeStep> s) {
    NormalizerStep step;
    step.codepoints.steps = std::move(s);
    steps.push_back(std::move(step));
  };
  if (type == "Sequence") {
    for (const json& inner : array_at(j, "normalizers")) add_normalizer(inner, steps);
  } else if (type == "NFD") {
    codepoints({NormalizeStep::kNfd});
  } else if (type == "Lowercase") {
    codepoints({NormalizeStep::kLowercase});
  } else if (type == "StripAccents") {
    codepoints({NormalizeStep::kStripCombining});
  } else if (type == "BertNormalizer") {
    const bool lowercase = j.value("lowercase", true);
    const bool strip = j.contains("strip_accents") && !j["strip_accents"].is_null() ? j["strip_accents"].get<bool>() : lowercase;
    NormalizerStep step;
    step.codepoints = TextNormalizer::bert(j.value("clean_text", true), j.value("handle_chinese_chars", true), strip, lowercase);
    steps.push_back(std::move(step));
  } else if (type == "NFC" || type == "NFKC" || type == "NFKD") {
    steps.push_back({.kind = type == "NFC" ? NormalizerStep::kNfc : type == "NFKC" ? NormalizerStep::kNfkc : NormalizerStep::kNfkd});
  } else if (type == "Replace") {
    bool regex = false;
    std::string from = pattern_of(j.at("pattern"), regex);
    if (regex && !regex_is_literal(from, from)) fail("normalizer Replace: regex pattern '{}' is not supported", from);
    steps.push_back({.kind = NormalizerStep::kReplace, .from = from, .to = j.at("content").get<std::string>()});
  } else if (type == "Prepend") {
    steps.push_back({.kind = NormalizerStep::kPrepend, .to = j.at("prepend").get<std::string>()});
  } else if (type == "ByteLevel") {
    steps.push_back({.kind = NormalizerStep::kByteLevel});
  } else if (type == "Strip") {
    steps.push_back({.kind = NormalizerStep::kStrip, .left = j.value("strip_left", true), .right = j.value("strip_right", true)});
  } else {
    fail("normalizer '{}' is not supported (supported: Sequence, NFC, NFD, NFKC, NFKD, Lowercase, Strip, StripAccents, "
         "Replace, Prepend, BertNormalizer, ByteLevel)", type.empty() ? j.dump().substr(0, 80) : type);
  }
}

Behavior behavior_of(const json& j, Behavior fallback) {
  if (!j.contains("behavior")) return fallback;
  const std::string b = j["behavior"].get<std::string>();
  if (b == "Isolated") return Behavior::kIsolated;
  if (b == "Removed") return Behavior::kRemoved;
  if (b == "MergedWithPrevious") return Behavior::kMergedWithPrevious;
  if (b == "MergedWithNext") return Behavior::kMergedWithNext;
  if (b == "Contiguous") return Behavior::kContiguous;
  fail("split behavior '{}' is unknown", b);
}

PreTokenizerStep split_step(const json& j) {
  PreTokenizerStep step{.behavior = behavior_of(j, Behavior::kIsolated), .invert = j.value("invert", false)};
  bool regex = false;
  const std::string pattern = pattern_of(j.at("pattern"), regex);
  if (!regex || regex_is_literal(pattern, step.literal)) {
    if (!regex) step.literal = pattern;
    if (step.literal.empty()) fail("pre_tokenizer Split: an empty pattern");
  } else if (pattern == kGpt2Regex) {
    step.pattern = SplitPattern::kGpt2;
  } else if (pattern == kLlama3Regex) {
    step.pattern = SplitPattern::kLlama3;
  } else if (pattern == kQwen2Regex) {
    step.pattern = SplitPattern::kQwen2;
  } else {
    step.pattern = SplitPattern::kRegex;
    step.regex = std::make_shared<const Regex>(Regex::compile(pattern));
  }
  return step;
}

PreTokenizerStep::Prepend prepend_scheme(const json& j) {
  if (j.contains("prepend_scheme")) {
    const std::string s = j["prepend_scheme"].get<std::string>();
    if (s == "always") return PreTokenizerStep::Prepend::kAlways;
    if (s == "first") return PreTokenizerStep::Prepend::kFirst;
    if (s == "never") return PreTokenizerStep::Prepend::kNever;
    fail("Metaspace prepend_scheme '{}' is unknown", s);
  }
  return j.value("add_prefix_space", true) ? PreTokenizerStep::Prepend::kAlways : PreTokenizerStep::Prepend::kNever;
}

void add_pre_tokenizer(const json& j, std::vector<PreTokenizerStep>& steps) {
  if (j.is_null()) return;
  const std::string type = type_of(j);
  using P = SplitPattern;
  if (type == "Sequence") {
    for (const json& inner : array_at(j, "pretokenizers")) add_pre_tokenizer(inner, steps);
  } else if (type == "ByteLevel") {
    steps.push_back({.kind = PreTokenizerStep::kByteLevel, .add_prefix_space = j.value("add_prefix_space", true),
                     .use_regex = j.value("use_regex", true)});
  } else if (type == "Split") {
    steps.push_back(split_step(j));
  } else if (type == "Metaspace") {
    steps.push_back({.kind = PreTokenizerStep::kMetaspace, .replacement = j.value("replacement", std::string("\xE2\x96\x81")),
                     .prepend = prepend_scheme(j), .split = j.value("split", true)});
  } else if (type == "Whitespace") {
    steps.push_back({.pattern = P::kWordsOrSymbols, .behavior = Behavior::kRemoved, .invert = true});
  } else if (type == "WhitespaceSplit") {
    steps.push_back({.pattern = P::kWhitespace, .behavior = Behavior::kRemoved});
  } else if (type == "BertPreTokenizer") {
    steps.push_back({.pattern = P::kWhitespace, .behavior = Behavior::kRemoved});
    steps.push_back({.pattern = P::kPunctuation, .behavior = Behavior::kIsolated});
  } else if (type == "Punctuation") {
    steps.push_back({.pattern = P::kPunctuation, .behavior = behavior_of(j, Behavior::kIsolated)});
  } else if (type == "Digits") {
    steps.push_back({.pattern = P::kDigit, .behavior = j.value("individual_digits", false) ? Behavior::kIsolated : Behavior::kContiguous});
  } else if (type == "CharDelimiterSplit") {
    steps.push_back({.pattern = P::kChar, .literal = j.at("delimiter").get<std::string>(), .behavior = Behavior::kRemoved});
  } else {
    fail("pre_tokenizer '{}' is not supported (supported: Sequence, ByteLevel, Split, Metaspace, Whitespace, "
         "WhitespaceSplit, BertPreTokenizer, Punctuation, Digits, CharDelimiterSplit)", type.empty() ? j.dump().substr(0, 80) : type);
  }
}

int32_t checked_id(const json& id, int32_t n_tokens) {
  const int64_t v = integer_of(id, "post_processor token id");
  if (v < 0 || v >= n_tokens) fail("post_processor: token id {} is outside the vocabulary of {}", v, n_tokens);
  return static_cast<int32_t>(v);
}

void add_post_processor(const json& j, PostProcessor& post, int32_t n_tokens) {
  if (j.is_null()) return;
  const std::string type = type_of(j);
  PostProcessor wrap;
  if (type == "Sequence") {
    for (const json& inner : array_at(j, "processors")) add_post_processor(inner, post, n_tokens);
    return;
  } else if (type == "ByteLevel") {
    return;  // offsets only
  } else if (type == "TemplateProcessing") {
    const json& specials = j.at("special_tokens");
    bool seen_sequence = false;
    for (const json& item : array_at(j, "single")) {
      if (item.contains("Sequence")) {
        if (seen_sequence) fail("post_processor: the single template holds two sequences");
        seen_sequence = true;
        continue;
      }
      const std::string name = item.at("SpecialToken").at("id").get<std::string>();
      if (!specials.contains(name)) fail("post_processor: template token '{}' is not in its special_tokens", name);
      for (const json& id : array_at(specials[name], "ids"))
        (seen_sequence ? wrap.after : wrap.before).push_back(checked_id(id, n_tokens));
    }
    if (!seen_sequence) fail("post_processor: the single template has no sequence");
  } else if (type == "BertProcessing" || type == "RobertaProcessing") {
    wrap.before = {checked_id(j.at("cls").at(1), n_tokens)};
    wrap.after = {checked_id(j.at("sep").at(1), n_tokens)};
  } else {
    fail("post_processor '{}' is not supported (supported: TemplateProcessing, BertProcessing, RobertaProcessing, "
         "ByteLevel, Sequence)", type);
  }
  wrap.before.insert(wrap.before.end(), post.before.begin(), post.before.end());
  wrap.after.insert(wrap.after.begin(), post.after.begin(), post.after.end());
  post = std::move(wrap);
}

void add_decoder(const json& j, std::vector<DecoderStep>& steps) {
  const std::string type = type_of(j);
  if (type == "Sequence") {
    for (const json& inner : array_at(j, "decoders")) add_decoder(inner, steps);
  } else if (type == "ByteLevel") {
    steps.push_back({.kind = DecoderStep::kByteLevel});
  } else if (type == "Metaspace") {
    steps.push_back({.kind = DecoderStep::kMetaspace, .from = j.value("replacement", std::string("\xE2\x96\x81")),
                     .prepend = prepend_scheme(j) != PreTokenizerStep::Prepend::kNever});
  } else if (type == "ByteFallback") {
    steps.push_back({.kind = DecoderStep::kByteFallback});
  } else if (type == "Fuse") {
    steps.push_back({.kind = DecoderStep::kFuse});
  } else if (type == "Strip") {
    steps.push_back({.kind = DecoderStep::kStrip, .content = j.at("content").get<std::string>(),
                     .start = count_of(j, "start", 0), .stop = count_of(j, "stop", 0)});
  } else if (type == "Replace") {
    bool regex = false;
    std::string from = pattern_of(j.at("pattern"), regex);
    if (regex && !regex_is_literal(from, from)) fail("decoder Replace: regex pattern '{}' is not supported", from);
    steps.push_back({.kind = DecoderStep::kReplace, .from = from, .to = j.at("content").get<std::string>()});
  } else if (type == "WordPiece") {
    steps.push_back({.kind = DecoderStep::kWordPiece, .prefix = j.value("prefix", std::string("##")),
                     .cleanup = j.value("cleanup", true)});
  } else {
    fail("decoder '{}' is not supported (supported: ByteLevel, Metaspace, ByteFallback, Fuse, Strip, Replace, WordPiece, "
         "Sequence)", type.empty() ? j.dump().substr(0, 80) : type);
  }
}

}  // namespace

std::string type_of(const json& j) {
  if (!j.is_object() || !j.contains("type") || !j["type"].is_string()) return "";
  return j["type"].get<std::string>();
}

std::string pattern_of(const json& j, bool& regex) {
  if (j.is_object() && j.contains("String")) {
    regex = false;
    return j["String"].get<std::string>();
  }
  if (j.is_object() && j.contains("Regex")) {
    regex = true;
    return j["Regex"].get<std::string>();
  }
  fail("pattern {} is neither {{\"String\": ...}} nor {{\"Regex\": ...}}", j.dump().substr(0, 80));
}

int64_t integer_of(const json& j, std::string_view what) {
  if (j.is_number_integer()) {
    if (j.is_number_unsigned() && j.get<uint64_t>() > uint64_t(INT64_MAX)) fail("{} {} is out of range", what, j.dump());
    return j.get<int64_t>();
  }
  if (j.is_number_float()) {
    const double v = j.get<double>();
    if (v >= -9e15 && v <= 9e15 && v == double(int64_t(v))) return int64_t(v);
    fail("{} {} is not a whole number in range", what, j.dump());
  }
  fail("{} is {}, not a number", what, j.dump().substr(0, 40));
}

size_t count_of(const json& obj, const char* key, size_t fallback) {
  if (!obj.contains(key)) return fallback;
  const int64_t v = integer_of(obj[key], key);
  if (v < 0) fail("{} is negative", key);
  return size_t(v);
}

bool regex_is_literal(const std::string& regex, std::string& literal) {
  if (regex.find_first_of("\\^$.|?*+()[]{}") != std::string::npos) return false;
  literal = regex;
  return !literal.empty();
}

namespace {
const json& member(const json& root, const char* key) {
  static const json kNull;
  return root.contains(key) ? root[key] : kNull;
}
}  // namespace

void load_text_steps(const json& root, Pipeline& p) {
  add_normalizer(member(root, "normalizer"), p.normalizer);
  add_pre_tokenizer(member(root, "pre_tokenizer"), p.pre_tokenizer);
  const json& decoder = member(root, "decoder");
  p.has_decoder = !decoder.is_null();
  if (p.has_decoder) add_decoder(decoder, p.decoder);
}

void load_post_processor(const json& root, Pipeline& p) { add_post_processor(member(root, "post_processor"), p.post, p.n_tokens()); }

}  // namespace ridge::hf
