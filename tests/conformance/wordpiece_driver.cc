// Drives WordPieceTokenizer for test_wordpiece.py until `ridge tokenize` can: one JSON request per
// stdin line, one JSON answer per stdout line.
//   wordpiece_driver json|vocab|gguf PATH
//   "text"                                  -> [ids]   encode(text) with [CLS]/[SEP]
//   {"encode": "text", "special": false, "max": 8}  -> [ids]
//   {"pair": ["a", "b"], "max": 16}         -> {"ids": [...], "type_ids": [...]}
//   {"decode": [ids], "skip": true}         -> "text"
// A request that fails answers {"error": "..."}.
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "core/error.h"
#include "model/gguf/gguf_file.h"
#include "tokenizer/wordpiece.h"

namespace {

using nlohmann::json;

ridge::WordPieceTokenizer load(const std::string& kind, const std::string& path) {
  if (kind == "json") return ridge::WordPieceTokenizer::from_tokenizer_json(path);
  if (kind == "vocab") return ridge::WordPieceTokenizer::from_vocab_txt(path);
  if (kind == "gguf") return ridge::WordPieceTokenizer::from_gguf(ridge::gguf::GgufFile::open(path));
  ridge::fail("unknown kind '{}' (json, vocab, gguf)", kind);
}

json answer(const ridge::WordPieceTokenizer& tok, const json& request) {
  if (request.is_string()) return tok.encode(request.get<std::string>());
  if (request.contains("encode")) {
    return tok.encode(request["encode"].get<std::string>(), request.value("special", true), request.value("max", 0));
  }
  if (request.contains("pair")) {
    std::vector<int32_t> ids, type_ids;
    tok.encode_pair(request["pair"].at(0).get<std::string>(), request["pair"].at(1).get<std::string>(),
                    request.value("max", 0), ids, type_ids);
    return {{"ids", ids}, {"type_ids", type_ids}};
  }
  if (request.contains("decode")) {
    const auto ids = request["decode"].get<std::vector<int32_t>>();
    return tok.decode(ids, request.value("skip", true));
  }
  ridge::fail("unknown request {}", request.dump());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: wordpiece_driver json|vocab|gguf PATH\n";
    return 2;
  }
  try {
    const ridge::WordPieceTokenizer tok = load(argv[1], argv[2]);
    std::cout << json{{"n_vocab", tok.n_vocab()}, {"cls", tok.cls_id()}, {"sep", tok.sep_id()},
                      {"pad", tok.pad_id()}, {"unk", tok.unk_id()}}.dump() << std::endl;
    for (std::string line; std::getline(std::cin, line);) {
      json out;
      try {
        out = answer(tok, json::parse(line));
      } catch (const std::exception& e) {
        out = {{"error", e.what()}};
      }
      std::cout << out.dump(-1, ' ', false, json::error_handler_t::replace) << '\n';
    }
  } catch (const std::exception& e) {
    std::cerr << "wordpiece_driver: " << e.what() << '\n';
    return 1;
  }
  return 0;
}
