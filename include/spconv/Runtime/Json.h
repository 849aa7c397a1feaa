//===- Json.h - JSON values for the runtime ---------------------*- C++ -*-===//
//
// The runtime builds without MLIR/LLVM (the GPU machine has neither), so it reads the
// launch sidecar and writes bench results with Debian's header-only nlohmann-json
// (nlohmann-json3-dev; Json.cpp alone includes it). Value is the small tree its callers
// use: errors are std::runtime_error naming what was expected, never nlohmann's own
// exception types. Numbers are kept as double: every integer in the sidecar is far
// below 2^53.
//
//===----------------------------------------------------------------------===//
#ifndef SPCONV_RUNTIME_JSON_H
#define SPCONV_RUNTIME_JSON_H

#include <cstdint>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace spconv {
namespace json {

class Value;
using Array = std::vector<Value>;
// Insertion order matters for readable output, so objects are ordered pairs.
using Object = std::vector<std::pair<std::string, Value>>;

class Value {
public:
  enum class Kind { Null, Bool, Number, String, Array, Object };

  Value() = default;
  Value(std::nullptr_t) {}
  Value(bool b) : kind_(Kind::Bool), bool_(b) {}
  Value(double d) : kind_(Kind::Number), num_(d) {}
  Value(int i) : kind_(Kind::Number), num_(i) {}
  Value(int64_t i) : kind_(Kind::Number), num_(static_cast<double>(i)) {}
  Value(uint64_t i) : kind_(Kind::Number), num_(static_cast<double>(i)) {}
  Value(const char *s) : kind_(Kind::String), str_(s) {}
  Value(std::string s) : kind_(Kind::String), str_(std::move(s)) {}
  Value(Array a);
  Value(Object o);

  Kind kind() const { return kind_; }
  bool isNull() const { return kind_ == Kind::Null; }
  bool isNumber() const { return kind_ == Kind::Number; }
  bool isString() const { return kind_ == Kind::String; }
  bool isArray() const { return kind_ == Kind::Array; }
  bool isObject() const { return kind_ == Kind::Object; }

  // Accessors throw std::runtime_error naming the expected kind on mismatch.
  bool asBool() const;
  double asNumber() const;
  int64_t asInt() const; // rejects non-integral numbers
  const std::string &asString() const;
  const Array &asArray() const;
  const Object &asObject() const;
  Array &asArray();
  Object &asObject();

  // Object lookup: find() returns nullptr when absent, at() throws naming the key.
  const Value *find(const std::string &key) const;
  const Value &at(const std::string &key) const;
  // Appends or replaces a member (the value must be an object or null).
  Value &set(const std::string &key, Value v);
  void push(Value v); // array append (null becomes an empty array)

  // Serialises; indent < 0 writes one line. Integral numbers are written without a
  // fraction, NaN and infinities as null, and bytes that are not UTF-8 as U+FFFD.
  std::string dump(int indent = 2) const;

private:
  Kind kind_ = Kind::Null;
  bool bool_ = false;
  double num_ = 0;
  std::string str_;
  std::shared_ptr<Array> arr_;
  std::shared_ptr<Object> obj_;
};

// Parses one JSON document (RFC 8259: UTF-8, no comments, at most 256 nested arrays and
// objects; of repeated keys find() sees the first); throws std::runtime_error naming the
// line and column on bad input.
Value parse(const std::string &text);
// Reads and parses a file; the error names the file.
Value parseFile(const std::string &path);

} // namespace json
} // namespace spconv

#endif // SPCONV_RUNTIME_JSON_H
