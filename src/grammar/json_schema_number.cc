// Number automata over the bytes of a number's text: the syntax, integer values, comparison with a
// decimal bound (minimum, exclusiveMaximum, const 2.5, ...) and multipleOf, each exact on values
// (an automaton that takes "2" also takes "2.0" and "2.000"), so they combine by set operations.
#include <fmt/format.h>

#include <map>

#include "grammar/json_schema_compiler.h"

namespace ridge::grammar::jsonschema {

namespace {

void digits(Dfa& d, int32_t from, char lo, char hi, int32_t to) { d.add_edge(from, uint8_t(lo), uint8_t(hi), to); }

int cmp_digit(char a, char b) { return a < b ? kLess : a == b ? kEqual : kGreater; }

// Adds the automaton of a magnitude (0|[1-9][0-9]*)(\.[0-9]+)? starting at `start`, comparing it with
// `c` (sign ignored); a state accepts when `accept(result)`.
template <typename Accept>
void add_magnitude(Dfa& d, int32_t start, const Decimal& c, Accept accept) {
  const std::string& ci = c.int_digits;
  const std::string& cf = c.frac_digits;
  const int32_t len = int32_t(ci.size());
  // Result of a text ending right after its integer part, given the integer parts' comparison.
  const auto end_int = [&](int r) { return r != kEqual ? r : (cf.empty() ? kEqual : kLess); };

  // Fraction states for a decided result, and for an integer part equal to c's.
  std::map<int, int32_t> frac_start, frac_any;
  const auto decided_frac = [&](int r) {
    if (!frac_start.count(r)) {
      frac_start[r] = d.add_state(false);
      frac_any[r] = d.add_state(accept(r));
      digits(d, frac_start[r], '0', '9', frac_any[r]);
      digits(d, frac_any[r], '0', '9', frac_any[r]);
    }
    return frac_start[r];
  };
  const auto decided_any = [&](int r) {
    decided_frac(r);
    return frac_any[r];
  };
  int32_t eq_frac_start = -1;
  const auto equal_frac = [&]() {
    if (eq_frac_start >= 0) return eq_frac_start;
    // feq[j]: the first j fraction digits equal c's (j = 0: right after the point, not accepting).
    std::vector<int32_t> feq(cf.size() + 1);
    for (size_t j = 0; j <= cf.size(); ++j) feq[j] = d.add_state(j > 0 && accept(j < cf.size() ? kLess : kEqual));
    const int32_t tail = d.add_state(accept(kEqual));  // all of c's digits matched, zeros since
    for (size_t j = 0; j <= cf.size(); ++j) {
      if (j < cf.size()) {
        const char cd = cf[j];
        if (cd > '0') digits(d, feq[j], '0', char(cd - 1), decided_any(kLess));
        d.add_edge(feq[j], uint8_t(cd), uint8_t(cd), feq[j + 1]);
        if (cd < '9') digits(d, feq[j], char(cd + 1), '9', decided_any(kGreater));
      } else {
        digits(d, feq[j], '0', '0', tail);
        digits(d, feq[j], '1', '9', decided_any(kGreater));
      }
    }
    digits(d, tail, '0', '0', tail);
    digits(d, tail, '1', '9', decided_any(kGreater));
    eq_frac_start = feq[0];
    return eq_frac_start;
  };
  const auto int_complete = [&](int32_t s, int r) {
    d.set_accept(s, accept(end_int(r)));
    d.add_edge(s, '.', '.', r == kEqual ? equal_frac() : decided_frac(r));
  };

  // "0": an integer part of one digit.
  const int32_t zero = d.add_state(false);
  digits(d, start, '0', '0', zero);
  int_complete(zero, len == 1 ? cmp_digit('0', ci[0]) : kLess);
  // [1-9][0-9]*: states (digits read i = 1..len, comparison so far), then longer than c (greater).
  std::map<std::pair<int32_t, int>, int32_t> ints;
  const int32_t longer = d.add_state(false);
  int_complete(longer, kGreater);
  digits(d, longer, '0', '9', longer);
  std::vector<std::pair<int32_t, int>> todo;
  const auto int_state = [&](int32_t i, int r) {
    auto [it, fresh] = ints.emplace(std::make_pair(i, r), -1);
    if (fresh) {
      it->second = d.add_state(false);
      todo.emplace_back(i, r);
    }
    return it->second;
  };
  for (char x = '1'; x <= '9'; ++x) d.add_edge(start, uint8_t(x), uint8_t(x), int_state(1, cmp_digit(x, ci[0])));
  while (!todo.empty()) {
    const auto [i, r] = todo.back();
    todo.pop_back();
    const int32_t s = ints.at({i, r});
    int_complete(s, i < len ? kLess : r);
    if (i == len) {
      digits(d, s, '0', '9', longer);
      continue;
    }
    for (char x = '0'; x <= '9'; ++x) {
      const int next = r != kEqual ? r : cmp_digit(x, ci[i]);
      d.add_edge(s, uint8_t(x), uint8_t(x), int_state(i + 1, next));
    }
  }
}

int reverse(int r) { return r == kLess ? kGreater : r == kGreater ? kLess : kEqual; }

Dfa build_compare(const Decimal& bound, int allowed);
Dfa build_multiple_of(const Decimal& factor);

}  // namespace

Decimal decimal_of(const Json& number) {
  std::string text;
  if (number.is_number_unsigned()) {
    text = std::to_string(number.get<uint64_t>());
  } else if (number.is_number_integer()) {
    text = std::to_string(number.get<int64_t>());
  } else if (number.is_number_float()) {
    text = fmt::format("{}", number.get<double>());  // shortest text that reads back the same double
  } else {
    fail("expected a number, got " + number.dump());
  }
  Decimal out;
  size_t i = 0;
  if (text[i] == '-') out.negative = true, ++i;
  std::string mantissa;
  int64_t point = -1;
  for (; i < text.size() && text[i] != 'e' && text[i] != 'E'; ++i) {
    if (text[i] == '.')
      point = int64_t(mantissa.size());
    else
      mantissa += text[i];
  }
  if (point < 0) point = int64_t(mantissa.size());
  if (i < text.size()) point += std::stoll(text.substr(i + 1));
  if (point > 400 || point < -400) fail("number " + text + " is out of range");
  while (point <= 0) mantissa.insert(mantissa.begin(), '0'), ++point;
  while (int64_t(mantissa.size()) < point) mantissa += '0';
  out.int_digits = mantissa.substr(0, size_t(point));
  out.frac_digits = mantissa.substr(size_t(point));
  const size_t nz = out.int_digits.find_first_not_of('0');
  out.int_digits = nz == std::string::npos ? "0" : out.int_digits.substr(nz);
  while (!out.frac_digits.empty() && out.frac_digits.back() == '0') out.frac_digits.pop_back();
  if (out.is_zero()) out.negative = false;
  return out;
}

const Dfa& number_universe() {
  static const Dfa dfa = [] {
    Dfa d;
    const int32_t start = d.add_state(false), minus = d.add_state(false), zero = d.add_state(true),
                  whole = d.add_state(true), point = d.add_state(false), frac = d.add_state(true);
    d.add_edge(start, '-', '-', minus);
    for (int32_t s : {start, minus}) {
      digits(d, s, '0', '0', zero);
      digits(d, s, '1', '9', whole);
    }
    digits(d, whole, '0', '9', whole);
    for (int32_t s : {zero, whole}) d.add_edge(s, '.', '.', point);
    digits(d, point, '0', '9', frac);
    digits(d, frac, '0', '9', frac);
    return std::move(d.normalize());
  }();
  return dfa;
}

const Dfa& number_full_syntax() {
  static const Dfa dfa = [] {
    Dfa d;
    const int32_t start = d.add_state(false), minus = d.add_state(false), zero = d.add_state(true),
                  whole = d.add_state(true), point = d.add_state(false), frac = d.add_state(true),
                  e = d.add_state(false), sign = d.add_state(false), exp = d.add_state(true);
    d.add_edge(start, '-', '-', minus);
    for (int32_t s : {start, minus}) {
      digits(d, s, '0', '0', zero);
      digits(d, s, '1', '9', whole);
    }
    digits(d, whole, '0', '9', whole);
    for (int32_t s : {zero, whole}) d.add_edge(s, '.', '.', point);
    digits(d, point, '0', '9', frac);
    digits(d, frac, '0', '9', frac);
    for (int32_t s : {zero, whole, frac}) {
      d.add_edge(s, 'E', 'E', e);
      d.add_edge(s, 'e', 'e', e);
    }
    d.add_edge(e, '+', '+', sign);
    d.add_edge(e, '-', '-', sign);
    digits(d, e, '0', '9', exp);
    digits(d, sign, '0', '9', exp);
    digits(d, exp, '0', '9', exp);
    return std::move(d.normalize());
  }();
  return dfa;
}

const Dfa& canonical_numbers() {
  static const Dfa dfa = [] {
    Dfa d;
    const int32_t start = d.add_state(false), minus = d.add_state(false), zero = d.add_state(true),
                  minus_zero = d.add_state(false), whole = d.add_state(true), point = d.add_state(false),
                  frac_zero = d.add_state(false), frac = d.add_state(true), e = d.add_state(false),
                  sign = d.add_state(false), exp = d.add_state(true);
    d.add_edge(start, '-', '-', minus);
    digits(d, start, '0', '0', zero);
    digits(d, minus, '0', '0', minus_zero);
    for (int32_t s : {start, minus}) digits(d, s, '1', '9', whole);
    digits(d, whole, '0', '9', whole);
    for (int32_t s : {zero, minus_zero, whole}) d.add_edge(s, '.', '.', point);
    for (int32_t s : {point, frac_zero, frac}) {
      digits(d, s, '0', '0', frac_zero);
      digits(d, s, '1', '9', frac);
    }
    for (int32_t s : {whole, frac}) {
      d.add_edge(s, 'e', 'e', e);
      d.add_edge(s, 'E', 'E', e);
    }
    d.add_edge(e, '+', '+', sign);
    d.add_edge(e, '-', '-', sign);
    digits(d, e, '1', '9', exp);
    digits(d, sign, '1', '9', exp);
    digits(d, exp, '0', '9', exp);
    return std::move(d.normalize());
  }();
  return dfa;
}

const Dfa& integer_numbers() {
  static const Dfa dfa = [] {
    Dfa d;
    const int32_t start = d.add_state(false), minus = d.add_state(false), zero = d.add_state(true),
                  whole = d.add_state(true), point = d.add_state(false), zeros = d.add_state(true);
    d.add_edge(start, '-', '-', minus);
    for (int32_t s : {start, minus}) {
      digits(d, s, '0', '0', zero);
      digits(d, s, '1', '9', whole);
    }
    digits(d, whole, '0', '9', whole);
    for (int32_t s : {zero, whole}) d.add_edge(s, '.', '.', point);
    digits(d, point, '0', '0', zeros);
    digits(d, zeros, '0', '0', zeros);
    return std::move(d.normalize());
  }();
  return dfa;
}

Dfa number_compare(const Decimal& bound, int allowed) {
  const std::string key =
      (bound.negative ? "-" : "") + bound.int_digits + "." + bound.frac_digits + "/" + std::to_string(allowed);
  return memo_dfa(key, [&] { return build_compare(bound, allowed); });
}

Dfa number_multiple_of(const Decimal& factor) {
  return memo_dfa(factor.int_digits + "." + factor.frac_digits, [&] { return build_multiple_of(factor); });
}

namespace {

Dfa build_compare(const Decimal& bound, int allowed) {
  Dfa d;
  const int32_t start = d.add_state(false);
  const int32_t minus = d.add_state(false);
  d.add_edge(start, '-', '-', minus);
  const Decimal zero;
  // Non-negative texts: the value is the magnitude.
  if (bound.negative) {
    add_magnitude(d, start, zero, [&](int) { return (allowed & kGreater) != 0; });
  } else {
    add_magnitude(d, start, bound, [&](int r) { return (allowed & r) != 0; });
  }
  // "-M": the value is -M (and -0 is 0).
  if (bound.negative) {
    add_magnitude(d, minus, bound, [&](int r) { return (allowed & reverse(r)) != 0; });
  } else if (bound.is_zero()) {
    add_magnitude(d, minus, zero, [&](int r) { return (allowed & (r == kEqual ? kEqual : kLess)) != 0; });
  } else {
    add_magnitude(d, minus, zero, [&](int) { return (allowed & kLess) != 0; });
  }
  return std::move(d.normalize());
}

Dfa build_multiple_of(const Decimal& factor) {
  if (factor.is_zero() || factor.negative) fail("'multipleOf' must be greater than 0");
  // factor = p / 10^e with p an integer: v is a multiple when v * 10^e is an integer multiple of p,
  // that is when the digits past e fraction places are zeros and the rest, read as an integer, is 0 mod p.
  const std::string all = factor.int_digits + factor.frac_digits;
  const int64_t e = int64_t(factor.frac_digits.size());
  uint64_t p = 0;
  for (char c : all) {
    p = p * 10 + uint64_t(c - '0');
    if (p > uint64_t(kMaxDfaStates)) break;
  }
  if (p * uint64_t(e + 3) > uint64_t(kMaxDfaStates)) {
    fail("keyword 'multipleOf' with value " + factor.int_digits + (e ? "." + factor.frac_digits : "") +
         " is not supported (its digit automaton would be too large)");
  }
  const uint64_t m = p;
  Dfa d;
  const int32_t start = d.add_state(false);
  // int_s[r], frac_s[k][r] (k fraction digits read, 1..e), tail_s[r] (more than e fraction digits).
  std::vector<int32_t> int_s(m), tail_s(m);
  std::vector<std::vector<int32_t>> frac_s(size_t(e) + 1, std::vector<int32_t>(m));
  std::vector<uint64_t> pow10(size_t(e) + 1, 1 % m);
  for (int64_t k = 1; k <= e; ++k) pow10[k] = pow10[k - 1] * 10 % m;
  const auto ok = [&](uint64_t r, int64_t k) { return r * pow10[size_t(e - k)] % m == 0; };
  for (uint64_t r = 0; r < m; ++r) int_s[r] = d.add_state(ok(r, 0));
  std::vector<int32_t> point_s(m);
  for (uint64_t r = 0; r < m; ++r) point_s[r] = d.add_state(false);
  for (int64_t k = 1; k <= e; ++k)
    for (uint64_t r = 0; r < m; ++r) frac_s[k][r] = d.add_state(ok(r, k));
  for (uint64_t r = 0; r < m; ++r) tail_s[r] = d.add_state(r == 0);
  const int32_t minus = d.add_state(false);
  d.add_edge(start, '-', '-', minus);
  for (int32_t s : {start, minus})
    for (uint64_t x = 0; x < 10; ++x) d.add_edge(s, uint32_t('0' + x), uint32_t('0' + x), int_s[x % m]);
  for (uint64_t r = 0; r < m; ++r) {
    for (uint64_t x = 0; x < 10; ++x)
      d.add_edge(int_s[r], uint32_t('0' + x), uint32_t('0' + x), int_s[(r * 10 + x) % m]);
    d.add_edge(int_s[r], '.', '.', point_s[r]);
    for (uint64_t x = 0; x < 10; ++x) {
      const int32_t to = e >= 1 ? frac_s[1][(r * 10 + x) % m] : (x == 0 ? tail_s[r] : -1);
      if (to >= 0) d.add_edge(point_s[r], uint32_t('0' + x), uint32_t('0' + x), to);
    }
    for (int64_t k = 1; k <= e; ++k) {
      for (uint64_t x = 0; x < 10; ++x) {
        const int32_t to = k < e ? frac_s[k + 1][(r * 10 + x) % m] : (x == 0 ? tail_s[r] : -1);
        if (to >= 0) d.add_edge(frac_s[k][r], uint32_t('0' + x), uint32_t('0' + x), to);
      }
    }
    d.add_edge(tail_s[r], '0', '0', tail_s[r]);
  }
  d.normalize();
  return number_universe().intersect(d);
}

}  // namespace

}  // namespace ridge::grammar::jsonschema
