// A small JSON Schema checker for the schemas in docs/ (the keywords they
// use: type, const, enum, required, properties, additionalProperties: false,
// items, minimum, pattern, oneOf, allOf, $ref to "#/..." or to another file
// of docs/ as "NAME.json#/..."). Debian packages no JSON Schema validator for
// C++; this covers what the schemas say, so that a renderer that drifts from
// its committed schema fails a test. Unknown keywords (descriptions, $id)
// are ignored.
#ifndef GGUFGUARD_TESTS_SUPPORT_JSON_SCHEMA_H_
#define GGUFGUARD_TESTS_SUPPORT_JSON_SCHEMA_H_

#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"

namespace ggufguard::testing {

class SchemaChecker {
 public:
  using Json = nlohmann::json;
  // `dir` holds the schema files; `root` is the file name of the schema to check against.
  SchemaChecker(std::string dir, const std::string& root) : dir_(std::move(dir)), root_(root) { Load(root); }

  // Problems, one per line, each with the JSON pointer of the instance part; empty when valid.
  std::vector<std::string> Check(const Json& instance) {
    std::vector<std::string> errors;
    CheckAt(schemas_.at(root_), root_, instance, "", errors);
    return errors;
  }

 private:
  const Json& Load(const std::string& file) {
    auto it = schemas_.find(file);
    if (it != schemas_.end()) return it->second;
    std::ifstream in(dir_ + "/" + file);
    std::stringstream text;
    text << in.rdbuf();
    return schemas_[file] = Json::parse(text.str());
  }

  // Resolves "#/a/b" against `file` or "other.json#/a/b".
  std::pair<const Json*, std::string> Resolve(const std::string& ref, const std::string& file) {
    const size_t hash = ref.find('#');
    const std::string target = hash == 0 ? file : ref.substr(0, hash);
    const Json& doc = Load(target);
    const std::string pointer = hash == std::string::npos ? "" : ref.substr(hash + 1);
    return {&doc.at(Json::json_pointer(pointer)), target};
  }

  static bool HasType(const Json& v, const std::string& t) {
    if (t == "object") return v.is_object();
    if (t == "array") return v.is_array();
    if (t == "string") return v.is_string();
    if (t == "integer") return v.is_number_integer() || v.is_number_unsigned();
    if (t == "number") return v.is_number();
    if (t == "boolean") return v.is_boolean();
    if (t == "null") return v.is_null();
    return false;
  }

  void CheckAt(const Json& s, const std::string& file, const Json& v, const std::string& at,
               std::vector<std::string>& errors) {
    auto fail = [&](const std::string& what) { errors.push_back((at.empty() ? "/" : at) + ": " + what); };
    if (s.contains("$ref")) {
      auto [target, target_file] = Resolve(s["$ref"], file);
      CheckAt(*target, target_file, v, at, errors);
    }
    if (s.contains("type")) {
      bool ok = false;
      if (s["type"].is_array()) {
        for (const Json& t : s["type"]) ok = ok || HasType(v, t);
      } else {
        ok = HasType(v, s["type"]);
      }
      if (!ok) return fail("not of type " + s["type"].dump() + ": " + v.dump().substr(0, 80));
    }
    if (s.contains("const") && v != s["const"]) fail("is not " + s["const"].dump());
    if (s.contains("enum")) {
      bool found = false;
      for (const Json& e : s["enum"]) found = found || e == v;
      if (!found) fail(v.dump() + " not in " + s["enum"].dump());
    }
    if (s.contains("minimum") && v.is_number() && v.get<double>() < s["minimum"].get<double>()) fail("below minimum");
    if (s.contains("pattern") && v.is_string() &&
        !std::regex_search(v.get<std::string>(), std::regex(s["pattern"].get<std::string>()))) {
      fail("does not match " + s["pattern"].get<std::string>());
    }
    if (v.is_object()) {
      for (const Json& r : s.value("required", Json::array())) {
        if (!v.contains(r.get<std::string>())) fail("lacks " + r.get<std::string>());
      }
      const Json props = s.value("properties", Json::object());
      for (auto& [k, sub] : v.items()) {
        if (props.contains(k)) {
          CheckAt(props[k], file, sub, at + "/" + k, errors);
        } else if (s.contains("additionalProperties") && s["additionalProperties"] == false) {
          fail("unexpected property " + k);
        }
      }
    }
    if (v.is_array() && s.contains("items")) {
      for (size_t i = 0; i < v.size(); ++i) CheckAt(s["items"], file, v[i], at + "/" + std::to_string(i), errors);
    }
    for (const Json& sub : s.value("allOf", Json::array())) CheckAt(sub, file, v, at, errors);
    if (s.contains("oneOf")) {
      int matches = 0;
      for (const Json& sub : s["oneOf"]) {
        std::vector<std::string> sub_errors;
        CheckAt(sub, file, v, at, sub_errors);
        matches += sub_errors.empty();
      }
      if (matches != 1) fail("matches " + std::to_string(matches) + " of oneOf, not 1: " + v.dump().substr(0, 120));
    }
  }

  std::string dir_;
  std::string root_;
  std::map<std::string, Json> schemas_;
};

}  // namespace ggufguard::testing

#endif  // GGUFGUARD_TESTS_SUPPORT_JSON_SCHEMA_H_
