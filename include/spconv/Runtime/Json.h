//===- Json.h - Minimal JSON value, reader and writer -----------*- C++ -*-===//
//
// The runtime must build on machines without MLIR/LLVM or any JSON package, so it
// carries its own small reader for the launch sidecar and a writer for bench results.
// Numbers are kept as double: every integer in the sidecar is far below 2^53.
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

  // Serialises; indent < 0 writes one line.
  std::string dump(int indent = 2) const;

private:
  void dumpTo(std::string &out, int indent, int depth) const;

  Kind kind_ = Kind::Null;
  bool bool_ = false;
  double num_ = 0;
  std::string str_;
  std::shared_ptr<Array> arr_;
  std::shared_ptr<Object> obj_;
};

// Parses one JSON document; throws std::runtime_error with line:column on bad input.
Value parse(const std::string &text);
// Reads and parses a file; the error names the file.
Value parseFile(const std::string &path);

} // namespace json
} // namespace spconv

#endif // SPCONV_RUNTIME_JSON_H
