// $id, $anchor and $ref: base URIs for every subschema, RFC 3986 reference resolution, JSON pointers
// (with ~0 ~1 and percent escapes). Only references into the document itself resolve: a remote one is
// an error, since compiling a grammar never fetches anything.
#include "grammar/json_schema_compiler.h"

namespace ridge::grammar::jsonschema {

namespace {

constexpr const char* kDefaultBase = "ridge:///schema.json";

struct UriParts {
  std::string scheme, authority, path, query, fragment;
  bool has_scheme = false, has_authority = false, has_query = false, has_fragment = false;
};

UriParts split_uri(const std::string& uri) {
  UriParts p;
  std::string rest = uri;
  if (const size_t hash = rest.find('#'); hash != std::string::npos) {
    p.has_fragment = true;
    p.fragment = rest.substr(hash + 1);
    rest.resize(hash);
  }
  if (const size_t q = rest.find('?'); q != std::string::npos) {
    p.has_query = true;
    p.query = rest.substr(q + 1);
    rest.resize(q);
  }
  size_t colon = rest.find(':');
  if (colon != std::string::npos && colon > 0 && std::isalpha(static_cast<unsigned char>(rest[0]))) {
    bool scheme_chars = true;
    for (size_t i = 0; i < colon; ++i) {
      const char c = rest[i];
      scheme_chars = scheme_chars && (std::isalnum(static_cast<unsigned char>(c)) || c == '+' || c == '-' || c == '.');
    }
    if (scheme_chars && rest.find('/') > colon) {
      p.has_scheme = true;
      p.scheme = rest.substr(0, colon);
      rest = rest.substr(colon + 1);
    }
  }
  if (rest.rfind("//", 0) == 0) {
    p.has_authority = true;
    const size_t slash = rest.find('/', 2);
    p.authority = rest.substr(2, slash == std::string::npos ? std::string::npos : slash - 2);
    rest = slash == std::string::npos ? "" : rest.substr(slash);
  }
  p.path = rest;
  return p;
}

std::string remove_dot_segments(const std::string& path) {
  std::string in = path, out;
  while (!in.empty()) {
    if (in.rfind("../", 0) == 0)
      in.erase(0, 3);
    else if (in.rfind("./", 0) == 0)
      in.erase(0, 2);
    else if (in.rfind("/./", 0) == 0)
      in.erase(0, 2);
    else if (in == "/.")
      in = "/";
    else if (in.rfind("/../", 0) == 0 || in == "/..") {
      in = in == "/.." ? "/" : in.substr(3);
      const size_t last = out.rfind('/');
      out.resize(last == std::string::npos ? 0 : last);
    } else if (in == "." || in == "..") {
      in.clear();
    } else {
      const size_t next = in.find('/', in[0] == '/' ? 1 : 0);
      out += in.substr(0, next);
      in = next == std::string::npos ? "" : in.substr(next);
    }
  }
  return out;
}

std::string join(const UriParts& p) {
  std::string out;
  if (p.has_scheme) out += p.scheme + ":";
  if (p.has_authority) out += "//" + p.authority;
  out += p.path;
  if (p.has_query) out += "?" + p.query;
  if (p.has_fragment) out += "#" + p.fragment;
  return out;
}

std::string without_fragment(const std::string& uri) {
  const size_t hash = uri.find('#');
  return hash == std::string::npos ? uri : uri.substr(0, hash);
}

std::string percent_decode(const std::string& text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size() && std::isxdigit(static_cast<unsigned char>(text[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(text[i + 2]))) {
      out += static_cast<char>(std::stoi(text.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

std::string pointer_token(const std::string& key) {
  std::string out;
  for (char c : key) {
    if (c == '~')
      out += "~0";
    else if (c == '/')
      out += "~1";
    else
      out += c;
  }
  return out;
}

// Keywords whose value is a schema, an array of schemas, or an object of schemas.
const char* const kSchemaKeywords[] = {
    "additionalProperties", "unevaluatedProperties", "unevaluatedItems", "contains", "not", "if", "then", "else",
    "propertyNames",        "additionalItems",       "contentSchema",    "items"};
const char* const kSchemaArrayKeywords[] = {"allOf", "anyOf", "oneOf", "prefixItems", "items"};
const char* const kSchemaMapKeywords[] = {
    "$defs", "definitions", "properties", "patternProperties", "dependentSchemas", "dependencies"};

}  // namespace

std::string resolve_uri(const std::string& base, const std::string& ref) {
  const UriParts r = split_uri(ref);
  const UriParts b = split_uri(base);
  UriParts t;
  if (r.has_scheme) {
    t = r;
    t.path = remove_dot_segments(r.path);
  } else {
    if (r.has_authority) {
      t.has_authority = true, t.authority = r.authority, t.path = remove_dot_segments(r.path);
      t.has_query = r.has_query, t.query = r.query;
    } else {
      if (r.path.empty()) {
        t.path = b.path;
        t.has_query = r.has_query || b.has_query;
        t.query = r.has_query ? r.query : b.query;
      } else {
        if (r.path[0] == '/') {
          t.path = remove_dot_segments(r.path);
        } else {
          std::string merged;
          if (b.has_authority && b.path.empty()) {
            merged = "/" + r.path;
          } else {
            const size_t slash = b.path.rfind('/');
            merged = (slash == std::string::npos ? "" : b.path.substr(0, slash + 1)) + r.path;
          }
          t.path = remove_dot_segments(merged);
        }
        t.has_query = r.has_query, t.query = r.query;
      }
      t.has_authority = b.has_authority, t.authority = b.authority;
    }
    t.has_scheme = b.has_scheme, t.scheme = b.scheme;
  }
  t.has_fragment = r.has_fragment, t.fragment = r.fragment;
  return join(t);
}

SchemaIndex::SchemaIndex(const Json& root) {
  root_base_ = kDefaultBase;
  if (root.is_object() && root.contains("$id") && root["$id"].is_string())
    root_base_ = without_fragment(resolve_uri(kDefaultBase, root["$id"].get<std::string>()));
  resources_[kDefaultBase] = &root;
  walk(root, kDefaultBase, "", 0);
}

void SchemaIndex::walk(const Json& node, const std::string& parent_base, const std::string& where, int depth) {
  if (depth > DepthGuard::kMaxDepth)
    fail("schema is nested too deeply (more than " + std::to_string(DepthGuard::kMaxDepth) + " levels)");
  if (!node.is_object()) {
    if (node.is_boolean()) info_.emplace(&node, std::make_pair(parent_base, where));
    return;
  }
  if (info_.count(&node)) return;
  std::string base = parent_base;
  if (const auto id = node.find("$id"); id != node.end() && id->is_string()) {
    const std::string text = id->get<std::string>();
    if (!text.empty() && text[0] == '#') {
      anchors_[without_fragment(base) + text] = &node;  // draft 6/7: "$id": "#name" is an anchor
    } else {
      base = without_fragment(resolve_uri(parent_base, text));
      resources_[base] = &node;
    }
  }
  for (const char* key : {"$anchor", "$dynamicAnchor"}) {
    if (const auto a = node.find(key); a != node.end() && a->is_string())
      anchors_[base + "#" + a->get<std::string>()] = &node;
  }
  info_.emplace(&node, std::make_pair(base, where));
  for (const char* key : kSchemaKeywords) {
    if (const auto it = node.find(key); it != node.end() && (it->is_object() || it->is_boolean()))
      walk(*it, base, where + "/" + key, depth + 1);
  }
  for (const char* key : kSchemaArrayKeywords) {
    if (const auto it = node.find(key); it != node.end() && it->is_array())
      for (size_t i = 0; i < it->size(); ++i)
        walk((*it)[i], base, where + "/" + key + "/" + std::to_string(i), depth + 1);
  }
  for (const char* key : kSchemaMapKeywords) {
    if (const auto it = node.find(key); it != node.end() && it->is_object())
      for (const auto& [name, sub] : it->items())
        walk(sub, base, where + "/" + key + "/" + pointer_token(name), depth + 1);
  }
}

std::string SchemaIndex::base_of(const Json* node, const std::string& parent_base) const {
  const auto it = info_.find(node);
  return it == info_.end() ? parent_base : it->second.first;
}

SchemaIndex::Target SchemaIndex::resolve(const std::string& ref, const std::string& base) const {
  const std::string absolute = resolve_uri(base, ref);
  const std::string uri = without_fragment(absolute);
  const size_t hash = absolute.find('#');
  const std::string fragment = hash == std::string::npos ? "" : percent_decode(absolute.substr(hash + 1));
  const auto res = resources_.find(uri);
  if (res == resources_.end()) {
    fail("remote $ref '" + ref + "' is not supported (only references into the schema itself resolve)");
  }
  const Json* node = res->second;
  std::string where = "#";
  if (!fragment.empty() && fragment[0] == '/') {
    size_t at = 1;
    for (;;) {
      const size_t next = fragment.find('/', at);
      std::string token = fragment.substr(at, next == std::string::npos ? std::string::npos : next - at);
      std::string key;
      for (size_t i = 0; i < token.size(); ++i) {
        if (token[i] == '~' && i + 1 < token.size() && (token[i + 1] == '0' || token[i + 1] == '1')) {
          key += token[i + 1] == '0' ? '~' : '/';
          ++i;
        } else {
          key += token[i];
        }
      }
      if (node->is_object() && node->contains(key)) {
        node = &(*node)[key];
      } else if (node->is_array() && !key.empty() && key.find_first_not_of("0123456789") == std::string::npos &&
                 std::stoull(key) < node->size()) {
        node = &(*node)[std::stoull(key)];
      } else {
        fail("$ref '" + ref + "' points to nothing");
      }
      if (next == std::string::npos) break;
      at = next + 1;
    }
  } else if (!fragment.empty()) {
    const auto a = anchors_.find(uri + "#" + fragment);
    if (a == anchors_.end()) fail("$ref '" + ref + "': no $anchor '" + fragment + "'");
    node = a->second;
  }
  const auto info = info_.find(node);
  if (info != info_.end()) return Target{node, info->second.first, info->second.second};
  return Target{node, uri, ref};
}

}  // namespace ridge::grammar::jsonschema
