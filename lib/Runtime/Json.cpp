//===- Json.cpp - Minimal JSON value, reader and writer -------------------===//

#include "spconv/Runtime/Json.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace spconv {
namespace json {

Value::Value(Array a)
    : kind_(Kind::Array), arr_(std::make_shared<Array>(std::move(a))) {}
Value::Value(Object o)
    : kind_(Kind::Object), obj_(std::make_shared<Object>(std::move(o))) {}

static const char *kindName(Value::Kind k) {
  switch (k) {
  case Value::Kind::Null: return "null";
  case Value::Kind::Bool: return "bool";
  case Value::Kind::Number: return "number";
  case Value::Kind::String: return "string";
  case Value::Kind::Array: return "array";
  case Value::Kind::Object: return "object";
  }
  return "?";
}

static void expectKind(const Value &v, Value::Kind k) {
  if (v.kind() != k)
    throw std::runtime_error(std::string("JSON: expected ") + kindName(k) +
                             ", got " + kindName(v.kind()));
}

bool Value::asBool() const { expectKind(*this, Kind::Bool); return bool_; }
double Value::asNumber() const { expectKind(*this, Kind::Number); return num_; }
int64_t Value::asInt() const {
  expectKind(*this, Kind::Number);
  if (num_ != std::floor(num_))
    throw std::runtime_error("JSON: expected an integer, got " + std::to_string(num_));
  // Converting a double outside int64_t's range is undefined behaviour, and past 2^53 a
  // double no longer holds every integer: anything beyond is not a count or a size.
  if (!(std::fabs(num_) <= 9007199254740992.0))
    throw std::runtime_error("JSON: integer out of range, got " + std::to_string(num_));
  return static_cast<int64_t>(num_);
}
const std::string &Value::asString() const { expectKind(*this, Kind::String); return str_; }
const Array &Value::asArray() const { expectKind(*this, Kind::Array); return *arr_; }
const Object &Value::asObject() const { expectKind(*this, Kind::Object); return *obj_; }
Array &Value::asArray() { expectKind(*this, Kind::Array); return *arr_; }
Object &Value::asObject() { expectKind(*this, Kind::Object); return *obj_; }

const Value *Value::find(const std::string &key) const {
  if (kind_ != Kind::Object)
    return nullptr;
  for (const auto &kv : *obj_)
    if (kv.first == key)
      return &kv.second;
  return nullptr;
}

const Value &Value::at(const std::string &key) const {
  expectKind(*this, Kind::Object);
  if (const Value *v = find(key))
    return *v;
  throw std::runtime_error("JSON: missing key \"" + key + "\"");
}

Value &Value::set(const std::string &key, Value v) {
  if (kind_ == Kind::Null)
    *this = Value(Object{});
  expectKind(*this, Kind::Object);
  for (auto &kv : *obj_)
    if (kv.first == key)
      return kv.second = std::move(v);
  obj_->emplace_back(key, std::move(v));
  return obj_->back().second;
}

void Value::push(Value v) {
  if (kind_ == Kind::Null)
    *this = Value(Array{});
  expectKind(*this, Kind::Array);
  arr_->push_back(std::move(v));
}

static void escapeTo(std::string &out, const std::string &s) {
  out += '"';
  for (unsigned char c : s) {
    switch (c) {
    case '"': out += "\\\""; break;
    case '\\': out += "\\\\"; break;
    case '\n': out += "\\n"; break;
    case '\t': out += "\\t"; break;
    case '\r': out += "\\r"; break;
    default:
      if (c < 0x20) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\u%04x", c);
        out += buf;
      } else {
        out += static_cast<char>(c);
      }
    }
  }
  out += '"';
}

void Value::dumpTo(std::string &out, int indent, int depth) const {
  auto newline = [&](int d) {
    if (indent < 0)
      return;
    out += '\n';
    out.append(static_cast<size_t>(indent * d), ' ');
  };
  switch (kind_) {
  case Kind::Null: out += "null"; break;
  case Kind::Bool: out += bool_ ? "true" : "false"; break;
  case Kind::Number: {
    // JSON has no NaN/Inf; null keeps the file loadable by every reader.
    if (!std::isfinite(num_)) { out += "null"; break; }
    char buf[32];
    if (num_ == std::floor(num_) && std::fabs(num_) < 1e15)
      std::snprintf(buf, sizeof buf, "%.0f", num_);
    else
      std::snprintf(buf, sizeof buf, "%.9g", num_);
    out += buf;
    break;
  }
  case Kind::String: escapeTo(out, str_); break;
  case Kind::Array: {
    out += '[';
    bool first = true;
    // Short arrays of scalars (shapes, grids) stay on one line.
    bool flat = arr_->size() <= 8;
    for (const auto &v : *arr_)
      flat = flat && !v.isArray() && !v.isObject();
    for (const auto &v : *arr_) {
      if (!first) out += flat ? ", " : ",";
      if (!flat) newline(depth + 1);
      v.dumpTo(out, indent, depth + 1);
      first = false;
    }
    if (!flat && !arr_->empty()) newline(depth);
    out += ']';
    break;
  }
  case Kind::Object: {
    out += '{';
    bool first = true;
    for (const auto &kv : *obj_) {
      if (!first) out += ',';
      newline(depth + 1);
      escapeTo(out, kv.first);
      out += indent < 0 ? ":" : ": ";
      kv.second.dumpTo(out, indent, depth + 1);
      first = false;
    }
    if (!obj_->empty()) newline(depth);
    out += '}';
    break;
  }
  }
}

std::string Value::dump(int indent) const {
  std::string out;
  dumpTo(out, indent, 0);
  return out;
}

namespace {
class Parser {
public:
  explicit Parser(const std::string &t) : t_(t) {}

  Value document() {
    Value v = value();
    skipWs();
    if (i_ != t_.size())
      fail("trailing characters after the document");
    return v;
  }

private:
  [[noreturn]] void fail(const std::string &msg) const {
    size_t line = 1, col = 1;
    for (size_t k = 0; k < i_ && k < t_.size(); ++k) {
      if (t_[k] == '\n') { ++line; col = 1; } else { ++col; }
    }
    throw std::runtime_error("JSON parse error at " + std::to_string(line) + ":" +
                             std::to_string(col) + ": " + msg);
  }

  void skipWs() {
    while (i_ < t_.size() && (t_[i_] == ' ' || t_[i_] == '\n' || t_[i_] == '\t' || t_[i_] == '\r'))
      ++i_;
  }

  bool consume(const char *lit) {
    size_t n = std::char_traits<char>::length(lit);
    if (t_.compare(i_, n, lit) != 0)
      return false;
    i_ += n;
    return true;
  }

  Value value() {
    if (++depth_ > 256)
      fail("nesting too deep");
    skipWs();
    if (i_ >= t_.size())
      fail("unexpected end of input");
    Value v;
    char c = t_[i_];
    if (c == '{') v = object();
    else if (c == '[') v = array();
    else if (c == '"') v = Value(string());
    else if (consume("true")) v = Value(true);
    else if (consume("false")) v = Value(false);
    else if (consume("null")) v = Value();
    else if (c == '-' || (c >= '0' && c <= '9')) v = number();
    else fail(std::string("unexpected character '") + c + "'");
    --depth_;
    return v;
  }

  Value object() {
    ++i_; // '{'
    Object o;
    skipWs();
    if (i_ < t_.size() && t_[i_] == '}') { ++i_; return Value(std::move(o)); }
    for (;;) {
      skipWs();
      if (i_ >= t_.size() || t_[i_] != '"')
        fail("expected a string key");
      std::string key = string();
      skipWs();
      if (i_ >= t_.size() || t_[i_] != ':')
        fail("expected ':'");
      ++i_;
      o.emplace_back(std::move(key), value());
      skipWs();
      if (i_ < t_.size() && t_[i_] == ',') { ++i_; continue; }
      if (i_ < t_.size() && t_[i_] == '}') { ++i_; break; }
      fail("expected ',' or '}'");
    }
    return Value(std::move(o));
  }

  Value array() {
    ++i_; // '['
    Array a;
    skipWs();
    if (i_ < t_.size() && t_[i_] == ']') { ++i_; return Value(std::move(a)); }
    for (;;) {
      a.push_back(value());
      skipWs();
      if (i_ < t_.size() && t_[i_] == ',') { ++i_; continue; }
      if (i_ < t_.size() && t_[i_] == ']') { ++i_; break; }
      fail("expected ',' or ']'");
    }
    return Value(std::move(a));
  }

  static void appendUtf8(std::string &s, unsigned cp) {
    if (cp < 0x80) {
      s += static_cast<char>(cp);
    } else if (cp < 0x800) {
      s += static_cast<char>(0xC0 | (cp >> 6));
      s += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      s += static_cast<char>(0xE0 | (cp >> 12));
      s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      s += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      s += static_cast<char>(0xF0 | (cp >> 18));
      s += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      s += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  unsigned hex4() {
    if (i_ + 4 > t_.size())
      fail("truncated \\u escape");
    unsigned v = 0;
    for (int k = 0; k < 4; ++k) {
      char c = t_[i_++];
      v <<= 4;
      if (c >= '0' && c <= '9') v |= c - '0';
      else if (c >= 'a' && c <= 'f') v |= c - 'a' + 10;
      else if (c >= 'A' && c <= 'F') v |= c - 'A' + 10;
      else fail("bad hex digit in \\u escape");
    }
    return v;
  }

  std::string string() {
    ++i_; // '"'
    std::string s;
    for (;;) {
      if (i_ >= t_.size())
        fail("unterminated string");
      char c = t_[i_++];
      if (c == '"')
        break;
      if (c != '\\') { s += c; continue; }
      if (i_ >= t_.size())
        fail("unterminated escape");
      char e = t_[i_++];
      switch (e) {
      case '"': s += '"'; break;
      case '\\': s += '\\'; break;
      case '/': s += '/'; break;
      case 'b': s += '\b'; break;
      case 'f': s += '\f'; break;
      case 'n': s += '\n'; break;
      case 'r': s += '\r'; break;
      case 't': s += '\t'; break;
      case 'u': {
        unsigned cp = hex4();
        if (cp >= 0xD800 && cp < 0xDC00 && consume("\\u")) {
          unsigned lo = hex4();
          // Anything else after a high surrogate would wrap below and write bytes that are
          // not UTF-8.
          if (lo < 0xDC00 || lo > 0xDFFF)
            fail("bad low surrogate in \\u escape");
          cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        }
        appendUtf8(s, cp);
        break;
      }
      default: fail(std::string("bad escape \\") + e);
      }
    }
    return s;
  }

  Value number() {
    size_t start = i_;
    if (t_[i_] == '-') ++i_;
    while (i_ < t_.size() && std::string("0123456789.eE+-").find(t_[i_]) != std::string::npos)
      ++i_;
    std::string tok = t_.substr(start, i_ - start);
    char *end = nullptr;
    double d = std::strtod(tok.c_str(), &end);
    if (end != tok.c_str() + tok.size())
      fail("bad number '" + tok + "'");
    return Value(d);
  }

  const std::string &t_;
  size_t i_ = 0;
  int depth_ = 0;
};
} // namespace

Value parse(const std::string &text) { return Parser(text).document(); }

Value parseFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw std::runtime_error("cannot open " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  try {
    return parse(ss.str());
  } catch (const std::exception &e) {
    throw std::runtime_error(path + ": " + e.what());
  }
}

} // namespace json
} // namespace spconv
