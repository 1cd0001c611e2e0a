// ridge tokenize: text -> token ids and pieces, for inspection and for conformance tests
// (--jsonl-in runs a whole corpus through one process).
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/commands.h"
#include "core/error.h"
#include "model/gguf/gguf_file.h"
#include "model/model_store.h"
#include "tokenizer/tokenizer.h"

namespace ridge::cli {

namespace {

struct TokenizeOptions {
  std::string model = "default";
  std::string prompt;
  std::string file;
  std::string jsonl_in;
  bool no_special = false;
  bool no_parse_special = false;
  bool ids_only = false;
  bool json = false;
};

constexpr char kBase64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

std::string base64_encode(std::string_view in) {
  std::string out;
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    const uint32_t v = (uint8_t(in[i]) << 16) | (uint8_t(in[i + 1]) << 8) | uint8_t(in[i + 2]);
    for (int s = 18; s >= 0; s -= 6) out += kBase64[(v >> s) & 63];
  }
  if (i < in.size()) {
    uint32_t v = uint8_t(in[i]) << 16;
    if (i + 1 < in.size()) v |= uint8_t(in[i + 1]) << 8;
    out += kBase64[(v >> 18) & 63];
    out += kBase64[(v >> 12) & 63];
    out += i + 1 < in.size() ? kBase64[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

std::string base64_decode(std::string_view in) {
  std::string out;
  uint32_t acc = 0;
  int bits = 0;
  for (char c : in) {
    const char* p = std::strchr(kBase64, c);
    if (c == '=' || c == '\0') break;
    if (!p) fail("invalid base64 character '{}'", c);
    acc = (acc << 6) | uint32_t(p - kBase64);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += char((acc >> bits) & 0xFF);
    }
  }
  return out;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("cannot open '{}'", path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// A piece made printable for the table: control bytes and invalid UTF-8 as escapes.
std::string printable(const std::string& piece) {
  std::string out;
  for (unsigned char c : piece) {
    if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (c == '\r') out += "\\r";
    else if (c < 0x20 || c == 0x7F) out += fmt::format("\\x{:02x}", c);
    else out += char(c);
  }
  // Bytes >= 0x80 that do not form valid UTF-8 would garble the terminal.
  const auto json_safe = nlohmann::json(out).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return nlohmann::json::parse(json_safe).get<std::string>();
}

std::string dump(const nlohmann::json& j) { return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace); }

// One JSON line per input line: {"text": ...} or {"text_b64": ...}, optional "add_special" and
// "parse_special" overriding the flags. Output: {"ids": [...], "decoded_b64": ...}.
// A line {"ids": [...]} decodes instead: {"decoded_b64": ..., "pieces_b64": [...]}.
void run_jsonl(const Tokenizer& tok, const TokenizeOptions& opt) {
  std::istringstream lines(read_file(opt.jsonl_in));
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty()) continue;
    const auto in = nlohmann::json::parse(line);
    if (in.contains("ids")) {
      const auto ids = in.at("ids").get<std::vector<int32_t>>();
      nlohmann::json pieces = nlohmann::json::array();
      for (int32_t id : ids) pieces.push_back(base64_encode(tok.token_to_piece(id)));
      std::printf("%s\n", dump({{"decoded_b64", base64_encode(tok.decode(ids))}, {"pieces_b64", pieces}}).c_str());
      continue;
    }
    const std::string text = in.contains("text_b64") ? base64_decode(in.at("text_b64").get<std::string>())
                                                     : in.at("text").get<std::string>();
    const bool add_special = in.value("add_special", !opt.no_special);
    const bool parse_special = in.value("parse_special", !opt.no_parse_special);
    const auto ids = tok.encode(text, add_special, parse_special);
    nlohmann::json out = {{"ids", ids}, {"decoded_b64", base64_encode(tok.decode(ids))}};
    std::printf("%s\n", dump(out).c_str());
  }
}

void run_one(const Tokenizer& tok, const TokenizeOptions& opt) {
  const std::string text = opt.file.empty() ? opt.prompt : read_file(opt.file);
  const auto ids = tok.encode(text, !opt.no_special, !opt.no_parse_special);
  if (opt.json) {
    nlohmann::json pieces = nlohmann::json::array();
    for (int32_t id : ids) pieces.push_back(tok.token_to_piece(id));
    std::printf("%s\n", dump({{"ids", ids}, {"pieces", pieces}}).c_str());
  } else if (opt.ids_only) {
    std::string line;
    for (size_t i = 0; i < ids.size(); ++i) line += (i ? " " : "") + std::to_string(ids[i]);
    std::printf("%s\n", line.c_str());
  } else {
    std::printf("%8s  %s\n", "id", "piece");
    for (int32_t id : ids) std::printf("%8d  '%s'\n", id, printable(tok.token_to_piece(id)).c_str());
    std::printf("%zu tokens\n", ids.size());
  }
}

}  // namespace

void add_tokenize_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("tokenize", "Print the token ids and pieces of a text");
  auto opt = std::make_shared<TokenizeOptions>();
  cmd->add_option("-m,--model", opt->model, "GGUF file, 'default', or a directory with a tokenizer.json");
  auto* prompt = cmd->add_option("-p,--prompt", opt->prompt, "Text to tokenize");
  auto* file = cmd->add_option("-f,--file", opt->file, "Read the text from a file (bytes as they are)");
  auto* jsonl = cmd->add_option("--jsonl-in", opt->jsonl_in, "Tokenize each JSON line {\"text\"|\"text_b64\"} of a file");
  prompt->excludes(file)->excludes(jsonl);
  file->excludes(jsonl);
  cmd->add_flag("--no-special", opt->no_special, "Do not add BOS/EOS");
  cmd->add_flag("--no-parse-special", opt->no_parse_special, "Treat special-token text like <|im_start|> as plain text");
  cmd->add_flag("--ids-only", opt->ids_only, "Print only the ids, space separated");
  cmd->add_flag("--json", opt->json, "Print {\"ids\": [...], \"pieces\": [...]}");
  cmd->callback([opt, prompt, file, jsonl] {
    if (!*prompt && !*file && !*jsonl) fail("tokenize: give the text with -p, -f or --jsonl-in");
    const Tokenizer tok = std::filesystem::is_directory(opt->model)
                              ? Tokenizer::from_hf_dir(opt->model)
                              : Tokenizer::from_gguf(gguf::GgufFile::open(resolve_model_path(opt->model)));
    if (*jsonl) {
      run_jsonl(tok, *opt);
    } else {
      run_one(tok, *opt);
    }
  });
}

}  // namespace ridge::cli
