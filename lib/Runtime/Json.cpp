//===- Json.cpp - JSON values for the runtime, read and written by nlohmann-json -===//

#include "spconv/Runtime/Json.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>

namespace spconv {
namespace json {

// Past 2^53 a double no longer holds every integer.
static constexpr double kMaxExactInteger = 9007199254740992.0;

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

// A number as a message shows it: 1.5, 1e+300, not 1.500000 or 300 digits.
static std::string numberText(double d) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.15g", d);
  if (std::strtod(buf, nullptr) != d)
    std::snprintf(buf, sizeof buf, "%.17g", d);
  return buf;
}

bool Value::asBool() const { expectKind(*this, Kind::Bool); return bool_; }
double Value::asNumber() const { expectKind(*this, Kind::Number); return num_; }
int64_t Value::asInt() const {
  expectKind(*this, Kind::Number);
  if (num_ != std::floor(num_))
    throw std::runtime_error("JSON: expected an integer, got " + numberText(num_));
  // Converting a double outside int64_t's range is undefined behaviour, and past 2^53 a
  // double no longer holds every integer: anything beyond is not a count or a size.
  if (!(std::fabs(num_) <= kMaxExactInteger))
    throw std::runtime_error("JSON: integer out of range, got " + numberText(num_));
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

namespace {
using Document = nlohmann::ordered_json;

Document toDocument(const Value &v) {
  switch (v.kind()) {
  case Value::Kind::Null: return nullptr;
  case Value::Kind::Bool: return v.asBool();
  case Value::Kind::Number: {
    double d = v.asNumber();
    // JSON has no NaN/Inf; null keeps the file loadable by every reader.
    if (!std::isfinite(d))
      return nullptr;
    // Integral numbers print without a fraction (grid sizes, counts).
    if (d == std::floor(d) && std::fabs(d) < kMaxExactInteger)
      return static_cast<int64_t>(d);
    return d;
  }
  case Value::Kind::String: return v.asString();
  case Value::Kind::Array: {
    Document a = Document::array();
    for (const Value &e : v.asArray())
      a.push_back(toDocument(e));
    return a;
  }
  case Value::Kind::Object: {
    Document o = Document::object();
    // emplace keeps the first of repeated keys, the one find() returns.
    for (const auto &kv : v.asObject())
      o.emplace(kv.first, toDocument(kv.second));
    return o;
  }
  }
  return nullptr;
}

/// Builds a Value from nlohmann-json's SAX events. Errors end the parse (a handler that
/// returns false) and are kept as text, so no nlohmann exception reaches the caller.
class Builder final : public nlohmann::json_sax<nlohmann::json> {
public:
  static constexpr size_t kMaxDepth = 256;

  Value root;
  std::string error;

  bool null() override { return add(Value()); }
  bool boolean(bool b) override { return add(Value(b)); }
  bool number_integer(number_integer_t n) override { return add(Value(int64_t(n))); }
  bool number_unsigned(number_unsigned_t n) override { return add(Value(uint64_t(n))); }
  bool number_float(number_float_t d, const string_t &) override { return add(Value(d)); }
  bool string(string_t &s) override { return add(Value(std::move(s))); }
  bool binary(binary_t &) override {
    error = "JSON parse error: binary value"; // only the binary formats have them
    return false;
  }
  bool start_object(std::size_t) override { return open(Value(Object{})); }
  bool key(string_t &k) override {
    keys.push_back(std::move(k));
    return true;
  }
  bool end_object() override { return close(); }
  bool start_array(std::size_t) override { return open(Value(Array{})); }
  bool end_array() override { return close(); }
  bool parse_error(std::size_t position, const std::string &,
                   const nlohmann::json::exception &e) override {
    // "[json.exception.parse_error.101] parse error at line 1, column 5: syntax error
    // while parsing ..." loses its tag; "number overflow parsing '1e400'" gains a place.
    std::string what = e.what();
    size_t tag = what.find("] ");
    if (tag != std::string::npos)
      what.erase(0, tag + 2);
    // "last read: '...'" quotes everything since the last token began: a long string
    // with a bad byte at its end is shortened to its last characters.
    constexpr size_t kQuoted = 48;
    size_t from = what.find("last read: '");
    if (from != std::string::npos) {
      from += 12;
      size_t to = what.find("'; expected", from);
      if (to == std::string::npos)
        to = what.size() - 1;
      if (to > from + kQuoted)
        what.replace(from, to - from - kQuoted, "...");
    }
    if (what.rfind("parse error", 0) == 0) {
      error = "JSON " + what;
    } else {
      error = what;
      errorAt = position;
    }
    return false;
  }

  /// The error, placed by line and column in `text` where nlohmann-json did not say.
  std::string message(const std::string &text) const {
    if (!errorAt)
      return error.empty() ? "JSON parse error" : error;
    // Counted as nlohmann-json counts its own: the column of the last character read.
    size_t line = 1, column = 0;
    for (size_t i = 0; i < *errorAt && i < text.size(); ++i) {
      if (text[i] == '\n') {
        ++line;
        column = 0;
      } else {
        ++column;
      }
    }
    return "JSON parse error at line " + std::to_string(line) + ", column " +
           std::to_string(column) + ": " + error;
  }

private:
  std::optional<size_t> errorAt; // the error's byte position, where the message lacks it
  std::vector<Value> containers; // the arrays and objects being filled, innermost last
  std::vector<std::string> keys; // the key of each object member being parsed

  bool add(Value v) {
    if (containers.empty()) {
      root = std::move(v);
      return true;
    }
    Value &parent = containers.back();
    if (parent.isArray()) {
      parent.asArray().push_back(std::move(v));
    } else {
      parent.asObject().emplace_back(std::move(keys.back()), std::move(v));
      keys.pop_back();
    }
    return true;
  }
  bool open(Value container) {
    if (containers.size() >= kMaxDepth) {
      error = "JSON parse error: more than " + std::to_string(kMaxDepth) +
              " nested arrays and objects";
      return false;
    }
    containers.push_back(std::move(container));
    return true;
  }
  bool close() {
    Value done = std::move(containers.back());
    containers.pop_back();
    return add(std::move(done));
  }
};
} // namespace

std::string Value::dump(int indent) const {
  return toDocument(*this).dump(indent < 0 ? -1 : indent, ' ', /*ensure_ascii=*/false,
                                nlohmann::json::error_handler_t::replace);
}

Value parse(const std::string &text) {
  Builder builder;
  if (!nlohmann::json::sax_parse(text, &builder))
    throw std::runtime_error(builder.message(text));
  return std::move(builder.root);
}

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
