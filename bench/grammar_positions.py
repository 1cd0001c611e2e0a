"""Where a step of a JSON-schema walk is (bench/grammar_mask_diff.py): the JSON position after a prefix
of a compact instance, and the part of the schema that applies there, for naming why two token masks
differ."""
import json


# ---------------------------------------------------------------- where a step is in the instance

class Position:
    """The JSON position after a prefix of a (valid-so-far) compact instance: the path of keys and
    indices to the value being written (`path`, `containers`: "obj" / "arr" each), what is being
    written there (`state`: value, key, key_string, colon, string, number, literal, after_value) and
    the text of the scalar or key begun (`partial`, as written). feed() goes on by more text."""

    def __init__(self, text=""):
        self.stack, self.state, self.partial = [], "value", ""
        self.feed(text)

    def copy(self):
        p = Position.__new__(Position)
        p.stack, p.state, p.partial = [list(e) for e in self.stack], self.state, self.partial
        return p

    @property
    def path(self):
        return [e[1] for e in self.stack]

    @property
    def containers(self):
        return [e[0] for e in self.stack]

    def feed(self, text):
        """Consumes `text`; returns the offsets after which the position changed from one JSON
        element to another (a structural character, or the quote that opens or closes a string)."""
        cuts = []
        stack, state, buf = self.stack, self.state, self.partial
        i, n = 0, len(text)
        while i < n:
            c = text[i]
            if state in ("string", "key_string"):
                if c == "\\":
                    buf += text[i:i + 2]
                    i += 2
                    continue
                if c == '"':
                    if state == "key_string":
                        stack[-1][1] = _unescape(buf)
                        state = "colon"
                    else:
                        state = "after_value"
                    buf = ""
                    cuts.append(i + 1)
                else:
                    buf += c
                i += 1
                continue
            if state in ("number", "literal"):
                if c.isalnum() or c in "+-.":
                    buf += c
                    i += 1
                    continue
                state, buf = "after_value", ""
            if c in " \t\r\n":
                i += 1
                continue
            if state == "value":
                if c == "{":
                    stack.append(["obj", None])
                    state = "key"
                elif c == "[":
                    stack.append(["arr", 0])
                    state = "value"
                elif c == '"':
                    state, buf = "string", ""
                elif c == "]" and stack and stack[-1][0] == "arr":
                    stack.pop()
                    state = "after_value"
                elif c.isdigit() or c == "-":
                    state, buf = "number", c
                else:
                    state, buf = "literal", c
            elif state == "key":
                if c == '"':
                    state, buf = "key_string", ""
                elif c == "}":
                    stack.pop()
                    state = "after_value"
            elif state == "colon":
                if c == ":":
                    state = "value"
            elif state == "after_value":
                if c == ",":
                    if stack and stack[-1][0] == "obj":
                        stack[-1][1] = None
                        state = "key"
                    elif stack:
                        stack[-1][1] += 1
                        state = "value"
                elif c in "}]":
                    if stack:
                        stack.pop()
            cuts.append(i + 1)
            i += 1
        self.state, self.partial = state, buf
        return cuts


def _unescape(s):
    try:
        return json.loads('"' + s + '"')
    except ValueError:
        return s


class SchemaView:
    """Subschemas at a path (following local $refs, and every branch of anyOf/oneOf/allOf)."""

    def __init__(self, schema):
        self.root = schema

    def resolve(self, node, depth=0):
        if isinstance(node, dict) and "$ref" in node and depth < 20:
            ref = node["$ref"]
            if ref.startswith("#"):
                target = self.root
                for part in ref[1:].split("/")[1:]:
                    part = part.replace("~1", "/").replace("~0", "~")
                    target = target.get(part, {}) if isinstance(target, dict) else {}
                rest = {k: v for k, v in node.items() if k != "$ref"}
                return [rest] + self.resolve(target, depth + 1) if rest else self.resolve(target, depth + 1)
        if isinstance(node, dict):
            out = [node]
            for k in ("anyOf", "oneOf", "allOf"):
                for sub in node.get(k, []):
                    out += self.resolve(sub, depth + 1)
            return out
        return [node] if node is not None else []

    def at(self, path, containers):
        nodes = self.resolve(self.root)
        for step, kind in zip(path, containers):
            nxt = []
            for n in nodes:
                if not isinstance(n, dict):
                    continue
                if kind == "obj":
                    if step is None:
                        continue
                    props = n.get("properties", {})
                    if step in props:
                        nxt += self.resolve(props[step])
                    elif isinstance(n.get("additionalProperties"), dict):
                        nxt += self.resolve(n["additionalProperties"])
                    elif n.get("additionalProperties", True) is True and n.get("type") in (None, "object"):
                        nxt.append({})
                else:
                    pi = n.get("prefixItems", [])
                    if step < len(pi):
                        nxt += self.resolve(pi[step])
                    elif isinstance(n.get("items"), dict):
                        nxt += self.resolve(n["items"])
                    elif n.get("items", True) is True and n.get("type") in (None, "array"):
                        nxt.append({})
            nodes = nxt
        return [n for n in nodes if isinstance(n, dict)]

    def object_nodes(self, path, containers):
        """The object schemas of the innermost object (for key positions)."""
        return [n for n in self.at(path[:-1], containers[:-1])
                if n.get("type") == "object" or "properties" in n or "additionalProperties" in n]


def keywords_of(nodes):
    out = set()
    for n in nodes:
        for k, v in n.items():
            if k in ("description", "title", "examples", "default", "$comment"):
                continue
            out.add(f"format={v}" if k == "format" else k)
        t = n.get("type")
        for x in (t if isinstance(t, list) else [t] if t else []):
            out.add("type=" + x)
    return out
