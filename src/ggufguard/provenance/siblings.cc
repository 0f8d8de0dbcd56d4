// Sibling template files (siblings.h): the bounded read, the JSON read with
// a SAX handler that keeps only "chat_template", and the comparison with
// the GGUF's templates.
#include "ggufguard/provenance/siblings.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "ggufguard/base/sv.h"
#include "ggufguard/base/text.h"
#include "ggufguard/validate.h"
#include "nlohmann/json.hpp"

namespace ggufguard {
namespace {

using Json = nlohmann::json;

// Deeper JSON is refused before its values are looked at: no real
// tokenizer_config.json nests past 8.
constexpr size_t kMaxJsonDepth = 64;

// gguf-py's add_chat_template: a name's characters other than ASCII letters
// and digits become '_'.
std::string TemplateNameAsWritten(std::string_view name) {
  std::string out(name);
  for (char& c : out) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return out;
}

// Reads a JSON document keeping only the top-level "chat_template": a string
// (the default template), a list of {"name", "template"} objects, or null.
// Anything else there, and any JSON error, makes `error` say why.
class ChatTemplateSax : public nlohmann::json_sax<Json> {
 public:
  bool null() override { return Scalar("null"); }
  bool boolean(bool) override { return Scalar("a boolean"); }
  bool number_integer(number_integer_t) override { return Scalar("a number"); }
  bool number_unsigned(number_unsigned_t) override { return Scalar("a number"); }
  bool number_float(number_float_t, const string_t&) override { return Scalar("a number"); }
  bool binary(binary_t&) override { return Scalar("binary"); }
  bool string(string_t& s) override {
    if (depth_ == 0) return Fail("the file is a JSON string, not an object");
    if (depth_ == 2 && in_list_) return Fail("an entry of the \"chat_template\" list is a string, not an object");
    if (depth_ == 1 && in_value_) {
      ++chat_template_keys_;
      templates_.clear();
      templates_.push_back({"default", std::move(s)});
      in_value_ = false;
    } else if (depth_ == 3 && in_list_ && key3_ == "name") {
      entry_name_ = std::move(s);
    } else if (depth_ == 3 && in_list_ && key3_ == "template") {
      entry_template_ = std::move(s);
      entry_has_template_ = true;
    }
    return true;
  }
  bool start_object(std::size_t) override {
    if (depth_ == 0) top_is_object_ = true;
    if (depth_ == 1 && in_value_) return Fail("\"chat_template\" is an object, not a string or a list");
    if (depth_ == 3 && in_list_ && key3_ == "template") return Fail("a \"template\" of the \"chat_template\" list is an object");
    if (depth_ == 2 && in_list_) {
      entry_name_.clear();
      entry_template_.clear();
      entry_has_template_ = false;
      key3_.clear();
    }
    return Enter();
  }
  bool end_object() override {
    --depth_;
    if (depth_ == 2 && in_list_) {
      const std::string name = TemplateNameAsWritten(entry_name_);
      if (!name.empty() && entry_has_template_) templates_.push_back({name, std::move(entry_template_)});
    }
    return true;
  }
  bool start_array(std::size_t) override {
    if (depth_ == 0) return Fail("the file is a JSON array, not an object");
    if (depth_ == 2 && in_list_) return Fail("an entry of the \"chat_template\" list is a list, not an object");
    if (depth_ == 3 && in_list_ && key3_ == "template") return Fail("a \"template\" of the \"chat_template\" list is a list");
    if (depth_ == 1 && in_value_) {
      ++chat_template_keys_;
      templates_.clear();
      in_list_ = true;
      in_value_ = false;
    }
    return Enter();
  }
  bool end_array() override {
    --depth_;
    if (depth_ == 1) in_list_ = false;
    return true;
  }
  bool key(string_t& k) override {
    if (depth_ == 1) {
      in_value_ = k == "chat_template";
    } else if (depth_ == 3) {
      key3_ = k;
    }
    return true;
  }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& e) override {
    // nlohmann's message names the place; the byte position is said once.
    std::string what = e.what();
    if (const size_t at = what.find(": "); at != std::string::npos) what = what.substr(at + 2);
    return Fail(absl::StrCat("not JSON at byte ", position > 0 ? position - 1 : 0, ": ", EscapeForDisplay(what, 160)));
  }

  const std::string& error() const { return error_; }
  bool top_is_object() const { return top_is_object_; }
  std::vector<std::pair<std::string, std::string>>& templates() { return templates_; }
  // More than one top-level "chat_template": Python's json, which the
  // converter and transformers use, reads the last one.
  uint32_t chat_template_keys() const { return chat_template_keys_; }

 private:
  bool Scalar(const char* what) {
    if (depth_ == 0) return Fail(absl::StrCat("the file is ", what, ", not a JSON object"));
    if (depth_ == 2 && in_list_) {
      return Fail(absl::StrCat("an entry of the \"chat_template\" list is ", what, ", not an object"));
    }
    if (depth_ == 1 && in_value_) {
      ++chat_template_keys_;
      in_value_ = false;
      if (std::string_view(what) == "null") {
        templates_.clear();
        return true;
      }
      return Fail(absl::StrCat("\"chat_template\" is ", what, ", not a string or a list"));
    }
    if (depth_ == 3 && in_list_ && key3_ == "template" && std::string_view(what) != "null") {
      return Fail(absl::StrCat("a \"template\" of the \"chat_template\" list is ", what, ", not a string"));
    }
    return true;
  }
  bool Enter() {
    if (++depth_ > kMaxJsonDepth) return Fail(absl::StrCat("JSON nested deeper than ", kMaxJsonDepth));
    return true;
  }
  bool Fail(std::string why) {
    if (error_.empty()) error_ = std::move(why);
    return false;
  }

  size_t depth_ = 0;
  bool top_is_object_ = false;
  bool in_value_ = false;  // the next value at depth 1 is chat_template's
  bool in_list_ = false;   // inside chat_template's list
  std::string key3_;       // the key of the current list entry's field
  std::string entry_name_, entry_template_;
  bool entry_has_template_ = false;
  std::vector<std::pair<std::string, std::string>> templates_;
  uint32_t chat_template_keys_ = 0;
  std::string error_;
};

// "default" for tokenizer.chat_template, NAME for tokenizer.chat_template.NAME
// (an alias cut at NUL or trimmed reads as the key it stands for).
std::string TemplateNameOfKey(std::string_view key) {
  key = CString(key);
  constexpr std::string_view kKey = "tokenizer.chat_template";
  while (!key.empty() && (key.back() == ' ' || key.back() == '\t')) key.remove_suffix(1);
  if (key.size() <= kKey.size() + 1) return "default";
  return std::string(key.substr(kKey.size() + 1));
}

}  // namespace

const char* SiblingStateName(SiblingFile::State state) {
  switch (state) {
    case SiblingFile::State::kAbsent: return "absent";
    case SiblingFile::State::kRead: return "read";
    case SiblingFile::State::kSkipped: return "skipped";
    case SiblingFile::State::kInvalid: return "invalid";
  }
  return "absent";
}

BoundedRead ReadBounded(absl::StatusOr<std::unique_ptr<ByteSource>> opened, uint64_t max_bytes) {
  BoundedRead out;
  if (!opened.ok()) {
    if (absl::IsNotFound(opened.status())) return out;
    out.state = SiblingFile::State::kSkipped;
    out.reason = EscapeForDisplay(std::string(opened.status().message()), 240);
    return out;
  }
  ByteSource& source = **opened;
  if (source.size() > max_bytes) {
    out.state = SiblingFile::State::kSkipped;
    out.reason = absl::StrCat(source.size(), " bytes, more than the policy's max_sibling_file_bytes (", max_bytes, ")");
    return out;
  }
  out.bytes.resize(static_cast<size_t>(source.size()));
  absl::Status read =
      source.ReadAt(0, absl::MakeSpan(reinterpret_cast<uint8_t*>(out.bytes.data()), out.bytes.size()));
  if (!read.ok()) {
    out.bytes.clear();
    out.state = SiblingFile::State::kSkipped;
    out.reason = EscapeForDisplay(std::string(read.message()), 240);
    return out;
  }
  out.state = SiblingFile::State::kRead;
  return out;
}

void ParseSiblingFile(std::string_view file, std::string_view bytes, SiblingFile* status,
                      std::vector<SiblingTemplate>* out) {
  status->state = SiblingFile::State::kRead;
  status->bytes = bytes.size();
  auto invalid = [&](std::string why) {
    status->state = SiblingFile::State::kInvalid;
    status->reason = std::move(why);
  };
  if (const size_t bad = FindInvalidUtf8(bytes); bad != kValidUtf8) {
    return invalid(absl::StrCat("not UTF-8 at byte ", bad));
  }
  if (file == "chat_template.jinja") {
    out->push_back({std::string(file), "default", std::string(bytes)});
    return;
  }
  ChatTemplateSax sax;
  const bool parsed = Json::sax_parse(bytes.begin(), bytes.end(), &sax, nlohmann::detail::input_format_t::json, true);
  if (!parsed || !sax.error().empty()) {
    return invalid(sax.error().empty() ? std::string("not JSON") : sax.error());
  }
  if (!sax.top_is_object()) return invalid("not a JSON object");
  if (sax.chat_template_keys() > 1) {
    invalid(absl::StrCat("\"chat_template\" is given ", sax.chat_template_keys(),
                         " times; Python's json, which the converter and transformers read it with, takes the last"));
  }
  for (auto& [name, text] : sax.templates()) out->push_back({std::string(file), name, std::move(text)});
}

std::string SiblingLocation(std::string_view location, std::string_view name) {
  const size_t slash = location.rfind('/');
  return absl::StrCat(slash == std::string_view::npos ? "" : Sv(location.substr(0, slash + 1)), Sv(name));
}

SiblingSet ReadSiblings(std::string_view gguf_location, const SiblingOpener& open, uint64_t max_bytes) {
  SiblingSet set;
  for (std::string_view name : kSiblingFiles) {
    SiblingFile status;
    status.file = std::string(name);
    BoundedRead read = ReadBounded(open(SiblingLocation(gguf_location, name)), max_bytes);
    status.state = read.state;
    status.reason = std::move(read.reason);
    if (read.state == SiblingFile::State::kRead) ParseSiblingFile(name, read.bytes, &status, &set.templates);
    set.files.push_back(std::move(status));
  }
  return set;
}

void JudgeAgainstSiblings(ValidatedFile& file, const SiblingSet& siblings, const Policy& policy) {
  Report& report = file.mutable_report();
  report.templates.sibling_files = siblings.files;
  for (const SiblingFile& f : siblings.files) {
    if (f.state == SiblingFile::State::kInvalid) {
      file.AddFindingLazy(policy, RuleId::kChatTemplateSiblingInvalid, 0, [&] {
        return absl::StrCat("the ", f.file, " beside this file cannot be read as a chat template source: ",
                            f.reason, "; this file's templates were not compared with it");
      });
    } else if (f.state == SiblingFile::State::kSkipped) {
      file.AddFindingLazy(policy, RuleId::kChatTemplateSiblingSkipped, 0, [&] {
        return absl::StrCat("the ", f.file, " beside this file was not compared: ", f.reason);
      });
    }
  }
  const size_t max_changes = policy.limits.max_list_entries;
  for (TemplateDigest& digest : report.templates.listed) {
    const std::string name = TemplateNameOfKey(digest.key);
    digest.siblings.clear();
    const SiblingTemplate* first = nullptr;
    const SiblingTemplate* same = nullptr;
    for (const SiblingTemplate& t : siblings.templates) {
      if (t.name != name) continue;
      if (first == nullptr) first = &t;
      if (SameTemplate(digest.text, t.text)) {
        same = &t;
        break;
      }
    }
    if (first == nullptr) continue;
    SiblingComparison c;
    const SiblingTemplate& with = same != nullptr ? *same : *first;
    c.file = with.file;
    c.name = name;
    c.same = same != nullptr;
    c.their_bytes = with.text.size();
    if (!c.same) c.diff = CompareTemplates(digest.text, with.text, absl::StrCat(with.file, "'s"), max_changes);
    digest.siblings.push_back(std::move(c));
    if (same != nullptr) continue;
    const SiblingComparison& d = digest.siblings.back();
    const uint64_t first_change = d.diff && !d.diff->changes.empty() ? d.diff->changes.front().offset : 0;
    file.AddFindingLazy(policy, RuleId::kChatTemplateSiblingDiffers, digest.offset + first_change, [&] {
      std::string what = d.diff ? ChangeSummary(*d.diff, 4)
                                : absl::StrCat("more than ", kMaxEdits, " segments differ (", digest.bytes,
                                               " bytes here, ", d.their_bytes, " there)");
      return absl::StrCat("'", EscapeForDisplay(digest.key), "' differs from the '", d.name,
                          "' chat template of the ", d.file, " beside this file: ", what);
    });
  }
}

}  // namespace ggufguard
