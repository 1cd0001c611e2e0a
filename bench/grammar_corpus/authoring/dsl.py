"""A small shorthand for writing JSON Schemas by hand: each helper returns a plain dict.

The corpus files under ../schemas/ are produced from the group modules beside this one by build.py;
the shorthand only saves typing ("type": "string" a few thousand times), it adds nothing a person
would not write in the JSON itself.
"""

SCHEMA_URI = "https://json-schema.org/draft/2020-12/schema"

REGISTRY = []  # (name, document) in the order written


def _ann(s, d=None, title=None, default=None, examples=None):
    # Annotations come first in the output so the files read like hand-written ones.
    out = {}
    if title is not None:
        out["title"] = title
    if d is not None:
        out["description"] = d
    out.update(s)
    if default is not None:
        out["default"] = default
    if examples is not None:
        out["examples"] = examples
    return out


def S(d=None, *, fmt=None, min=None, max=None, pat=None, title=None, default=None, examples=None):
    s = {"type": "string"}
    if fmt is not None:
        s["format"] = fmt
    if min is not None:
        s["minLength"] = min
    if max is not None:
        s["maxLength"] = max
    if pat is not None:
        s["pattern"] = pat
    return _ann(s, d, title, default, examples)


def I(d=None, *, min=None, max=None, xmin=None, xmax=None, title=None, default=None, examples=None):
    s = {"type": "integer"}
    if min is not None:
        s["minimum"] = min
    if max is not None:
        s["maximum"] = max
    if xmin is not None:
        s["exclusiveMinimum"] = xmin
    if xmax is not None:
        s["exclusiveMaximum"] = xmax
    return _ann(s, d, title, default, examples)


def N(d=None, *, min=None, max=None, title=None, default=None, examples=None):
    s = {"type": "number"}
    if min is not None:
        s["minimum"] = min
    if max is not None:
        s["maximum"] = max
    return _ann(s, d, title, default, examples)


def B(d=None, *, default=None, title=None):
    return _ann({"type": "boolean"}, d, title, default)


def NULL(d=None):
    return _ann({"type": "null"}, d)


def E(*values, d=None, default=None, title=None):
    # An enum of strings keeps its "type"; mixed enums go bare.
    if all(isinstance(v, str) for v in values):
        s = {"type": "string", "enum": list(values)}
    elif all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        s = {"type": "integer", "enum": list(values)}
    else:
        s = {"enum": list(values)}
    return _ann(s, d, title, default)


def C(value, d=None):
    return _ann({"const": value}, d)


def A(items, d=None, *, min=None, max=None, title=None, default=None, examples=None):
    s = {"type": "array", "items": items}
    if min is not None:
        s["minItems"] = min
    if max is not None:
        s["maxItems"] = max
    return _ann(s, d, title, default, examples)


def T(*prefix, d=None, rest=False, min=None, max=None):
    # A tuple: prefixItems, and items false unless rest gives the schema of the tail.
    s = {"type": "array", "prefixItems": list(prefix), "items": rest}
    if min is not None:
        s["minItems"] = min
    if max is not None:
        s["maxItems"] = max
    return _ann(s, d)


def O(req="", props=None, *, d=None, addl=False, _title=None, _default=None, _examples=None, **kw):
    """An object. req: space-separated required names (a list where names hold spaces), or "*" for all.
    props: a dict (for names that are not Python identifiers), merged with the keyword ones.
    addl: False (the default, as most API request bodies are closed), True, or a schema.
    Keyword names other than d and addl are properties (title=, default= included: the object's
    own annotations are _title, _default, _examples)."""
    p = dict(props or {})
    p.update({k.rstrip("_"): v for k, v in kw.items()})  # from_ -> from
    s = {"type": "object", "properties": p}
    names = list(p) if req == "*" else req.split() if isinstance(req, str) else list(req)  # a list for names with spaces
    for n in names:
        if n not in p:
            raise ValueError(f"required {n!r} is not a property")
    if names:
        s["required"] = names
    if addl is not True:
        s["additionalProperties"] = addl
    return _ann(s, d, _title, _default, _examples)


def MAP(values, d=None, *, title=None):
    # A string-keyed dictionary (labels, metadata, headers).
    return _ann({"type": "object", "additionalProperties": values}, d, title)


def R(name, d=None):
    return _ann({"$ref": f"#/$defs/{name}"}, d)


def ANY(*branches, d=None, default=None):
    return _ann({"anyOf": list(branches)}, d, None, default)


def ONE(*branches, d=None):
    return _ann({"oneOf": list(branches)}, d)


def ALL(*branches, d=None):
    return _ann({"allOf": list(branches)}, d)


def OPT(s):
    """Nullable: the same schema with null also allowed, written as a type array."""
    s = dict(s)
    t = s.get("type")
    if isinstance(t, str):
        s["type"] = [t, "null"]
    elif isinstance(t, list) and "null" not in t:
        s["type"] = t + ["null"]
    elif t is None:
        return {"anyOf": [s, {"type": "null"}]}
    if "enum" in s and None not in s["enum"]:
        s["enum"] = s["enum"] + [None]
    return s


def TYPES(*types, d=None, **extra):
    # A bare type array, e.g. TYPES("string", "number").
    return _ann(dict({"type": list(types)}, **extra), d)


def schema(name, root, *, title=None, d=None, defs=None):
    doc = {"$schema": SCHEMA_URI}
    if title is not None:
        doc["title"] = title
    if d is not None:
        doc["description"] = d
    for k, v in root.items():
        if k in ("title", "description") and k in doc:
            continue
        doc[k] = v
    if defs:
        doc["$defs"] = defs
    REGISTRY.append((name, doc))
    return doc


# Fields that recur across many APIs.
def ID(d=None):
    return S(d)


def UUID(d="UUID of the record."):
    return S(d, fmt="uuid")


def TS(d="Timestamp (RFC 3339)."):
    return S(d, fmt="date-time")


def DATE(d="Calendar date (YYYY-MM-DD)."):
    return S(d, fmt="date")


def EMAIL(d=None):
    return S(d, fmt="email")


def URL(d=None):
    return S(d, fmt="uri")


def CURRENCY(d="Three-letter ISO 4217 currency code, upper case."):
    return S(d, pat="^[A-Z]{3}$")


def COUNTRY(d="Two-letter ISO 3166-1 alpha-2 country code."):
    return S(d, pat="^[A-Z]{2}$")


def ADDRESS(d="Postal address."):
    return O("line1 city country", d=d,
             line1=S("Street address, line 1.", max=200),
             line2=S("Apartment, suite, unit.", max=200),
             city=S("City or locality.", max=100),
             state=S("State, province or region.", max=100),
             postal_code=S("ZIP or postal code.", max=20),
             country=COUNTRY())
