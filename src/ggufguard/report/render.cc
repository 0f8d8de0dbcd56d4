#include "ggufguard/report/render.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "ggufguard/base/sv.h"
#include "ggufguard/base/text.h"
#include "ggufguard/format/ggml_type.h"
#include "ggufguard/report/provenance_render.h"
#include "ggufguard/report/render_set.h"
#include "ggufguard/report/report_json.h"
#include "ggufguard/rules/loader_rules.h"
#include "ggufguard/rules/template_rules.h"
#include "ggufguard/template/text_kinds.h"
#include "nlohmann/json.hpp"

namespace ggufguard {
namespace {

using Json = nlohmann::ordered_json;

std::string_view ByteOrderName(ByteOrder o) { return o == ByteOrder::kBig ? "big" : "little"; }

struct Counts {
  uint64_t errors = 0, warnings = 0, infos = 0;
};

Counts CountFindings(const Report& r) {
  Counts c;
  for (const Finding& f : r.findings) {
    (f.severity == Severity::kError ? c.errors : f.severity == Severity::kWarning ? c.warnings : c.infos)++;
  }
  return c;
}

std::string_view Verdict(const FileOutcome& o) {
  if (o.report == nullptr) return "io-error";
  return VerdictName(o.report->verdict());
}

Json HeaderJson(const Report& r) {
  const GgufHeader& h = r.header;
  Json j;
  j["version"] = h.version;
  j["byte_order"] = ByteOrderName(h.byte_order);
  j["tensor_count"] = h.tensor_count;
  j["kv_count"] = h.kv_count;
  j["alignment"] = h.alignment;
  j["data_offset"] = h.data_offset_known ? Json(h.data_offset) : Json(nullptr);
  j["file_size"] = r.file_size;
  return j;
}

std::string ShortValue(const Value& v);

// Each chat template's digest, so that a gatekeeper can allow-list the
// templates it has reviewed: at most the policy's max_list_entries, the rest
// counted in templates_suppressed.
// What a template tells the model (template/behaviour.h), computed under
// the policy's list limit; its strings are escaped already.
Json BehaviourJson(const TemplateBehaviour* b) {
  if (b == nullptr || !b->analysed) return nullptr;
  Json texts = Json::array();
  for (const TemplateTextSpan& t : b->texts) {
    texts.push_back({{"offset", t.offset}, {"turn", t.turn}, {"text", t.text}, {"when", t.when},
                     {"kinds", jinja::TextKindNames(t.kinds)}, {"content_gated", t.content_gated},
                     {"inserted", t.inserted}});
  }
  Json gates = Json::array();
  for (const TemplateGate& g : b->gates) {
    gates.push_back({{"offset", g.offset}, {"condition", g.condition}, {"reads", g.reads}, {"on_content", g.on_content}});
  }
  Json roles = Json::array();
  for (const TemplateRoleFate& x : b->roles) roles.push_back({{"role", x.role}, {"fate", x.fate}, {"offset", x.offset}});
  Json tokens = Json::array();
  for (const TemplateTokenUse& t : b->tokens) tokens.push_back({{"offset", t.offset}, {"token", EscapeForDisplay(t.token, 64)}});
  return {{"texts", std::move(texts)},         {"texts_suppressed", b->texts_not_listed},
          {"conditions", std::move(gates)},    {"conditions_suppressed", b->gates_not_listed},
          {"roles", std::move(roles)},         {"special_tokens", std::move(tokens)}};
}

void AddTemplates(const Report& r, Json& f) {
  Json out = Json::array();
  for (const TemplateDigest& d : r.templates.listed) {
    out.push_back({{"key", EscapeForDisplay(d.key, 256)}, {"offset", d.offset}, {"bytes", d.bytes},
                   {"sha256", d.sha256}, {"roots", d.roots}, {"folded_names", d.folded_names},
                   {"provenance", ProvenanceJson(d, r.templates)}, {"siblings", SiblingComparisonsJson(d)},
                   {"behaviour", BehaviourJson(d.behaviour.get())}});
  }
  f["templates"] = std::move(out);
  f["templates_suppressed"] = r.templates.not_listed;
  f["sibling_files"] = SiblingFilesJson(r.templates);
}

}  // namespace

std::string SamplingLine(const Report& r) {
  std::string out;
  for (const SamplingSetting& s : r.sampling.listed) {
    absl::StrAppend(&out, out.empty() ? "" : " ", Sv(SamplingName(s)), "=", s.llama_cpp);
  }
  return out;
}

std::string_view SamplingName(const SamplingSetting& s) {
  std::string_view name = s.key;
  name.remove_prefix(std::string_view("general.sampling.").size());
  return name;
}

Json RuntimesJson(const Report& r) {
  Json out = Json::array();
  const bool partial = !r.not_checked.empty();
  for (const RuntimeVerdict& v : r.runtimes) {
    out.push_back({{"runtime", ProfileName(v.runtime)},
                   {"verdict", RuntimeVerdictName(v, partial)},
                   {"required", v.required},
                   {"rule", v.rule ? Json(RuleCode(*v.rule)) : Json(nullptr)},
                   {"offset", v.rule ? Json(v.offset) : Json(nullptr)},
                   {"reason", v.reason},
                   {"judged_at", v.judged_at}});
  }
  return out;
}

Json SamplingJson(const Report& r) {
  Json out = Json::array();
  for (const SamplingSetting& s : r.sampling.listed) {
    out.push_back({{"key", std::string(s.key)}, {"offset", s.offset}, {"written", s.written}, {"llama_cpp", s.llama_cpp}});
  }
  return out;
}

namespace {

// For each group of colliding keys (GG3011/GG3012), the value each kind of
// reader would use (see loader_rules.h); bounded when validated.
void AddKeyCollisions(const Report& r, Json& f) {
  const GgufHeader& h = r.header;
  auto reading = [&](std::optional<size_t> i) -> Json {
    if (!i) return nullptr;
    return {{"offset", h.kvs[*i].offset()}, {"value", ShortValue(h.kvs[*i].value())}};
  };
  Json out = Json::array();
  for (const KeyReadings& g : r.key_collisions) {
    Json keys = Json::array();
    for (size_t i : g.kvs) keys.push_back({{"key", EscapeForDisplay(h.kvs[i].key(), 256)}, {"offset", h.kvs[i].offset()}});
    out.push_back({{"key", EscapeForDisplay(g.name, 256)},
                   {"keys", std::move(keys)},
                   {"keys_suppressed", g.keys_suppressed},
                   {"readings",
                    {{"exact", reading(g.exact)}, {"c_string", reading(g.c_string)}, {"last_wins", reading(g.last_wins)}}}});
  }
  f["key_collisions"] = std::move(out);
  f["key_collisions_suppressed"] = r.key_collisions_suppressed;
}

const char* CoverageName(Report::Coverage c) {
  switch (c) {
    case Report::Coverage::kWholeFile: return "whole-file";
    case Report::Coverage::kHeaderOnly: return "header-only";
    case Report::Coverage::kStoppedAtError: return "stopped-at-error";
    case Report::Coverage::kStoppedAtBudget: return "stopped-at-budget";
  }
  return "whole-file";  // unreachable: every value is listed
}

// What a partial report did not look at, for the text verdict line.
std::string CoverageNote(const Report& r) {
  switch (r.coverage) {
    case Report::Coverage::kWholeFile: return "";
    case Report::Coverage::kHeaderOnly:
      return absl::StrCat(" [header only: the first ", r.bytes_read, " bytes; data section not checked]");
    case Report::Coverage::kStoppedAtError:
      return absl::StrCat(" [stopped at the first error after ", r.bytes_read, " bytes (--fail-fast)]");
    case Report::Coverage::kStoppedAtBudget:
      return absl::StrCat(" [stopped at the byte budget after ", r.bytes_read, " bytes]");
  }
  return "";
}

// What the verdict does not cover, for the text verdict line: every item,
// escaped (an item may quote a path or a server's words).
std::string NotCheckedNote(const Report& r) {
  if (r.not_checked.empty()) return "";
  std::string out = " not checked:";
  for (size_t i = 0; i < r.not_checked.size(); ++i) {
    absl::StrAppend(&out, i ? ";" : "", " ", EscapeForDisplay(r.not_checked[i], kMaxPathBytes));
  }
  return out;
}

// --deep: totals, then per tensor (bounded by the policy's max_list_entries;
// tensors with bad values first).
void AddDeep(const Report& r, Json& f) {
  const DeepSummary& d = r.deep;
  Json tensors = Json::array();
  for (const DeepTensorResult& t : d.tensors) {
    const TensorInfo& info = r.header.tensors[t.tensor];
    const GgmlTypeInfo* type = FindGgmlType(info.ggml_type);
    tensors.push_back({{"name", EscapeForDisplay(info.name)},
                       {"type", type ? std::string(type->name) : std::string("?")},
                       {"checked_bytes", t.checked_bytes},
                       {"bad_values", t.bad_values}});
  }
  f["deep"] = {{"checked_tensors", d.checked_tensors}, {"checked_bytes", d.checked_bytes},
               {"bad_values", d.bad_values},           {"unchecked_bytes", d.unchecked_bytes},
               {"tensors", std::move(tensors)},        {"tensors_suppressed", d.tensors_suppressed}};
}

// A remote input's cost (docs/remote.md).
void AddTransfer(const FileOutcome& o, Json& f) {
  if (!o.transfer) return;
  f["requests"] = o.transfer->requests;
  f["bytes_transferred"] = o.transfer->bytes;
}

std::string TransferNote(const FileOutcome& o) {
  if (!o.transfer) return "";
  return absl::StrCat(" [remote: ", o.transfer->requests, " requests, ", o.transfer->bytes, " bytes transferred]");
}

// One input's entry of the JSON report, also one line of `scan`'s output.
// Every string in it is printable ASCII: file bytes, paths and I/O errors
// (which name the path) go through EscapeForDisplay, so no consumer that
// prints a field can be made to print a control byte.
Json FileJson(const FileOutcome& o) {
  Json f;
  f["file"] = EscapeForDisplay(o.label, kMaxPathBytes);
  f["verdict"] = Verdict(o);
  if (o.report == nullptr) {
    f["error"] = EscapeForDisplay(o.io_error, kMaxPathBytes);
    AddTransfer(o, f);
    return f;
  }
  const Report& r = *o.report;
  f["header_parsed"] = r.header_parsed;
  f["coverage"] = CoverageName(r.coverage);
  if (r.coverage != Report::Coverage::kWholeFile) f["bytes_read"] = r.bytes_read;
  Json not_checked = Json::array();
  for (const std::string& item : r.not_checked) not_checked.push_back(EscapeForDisplay(item, kMaxPathBytes));
  f["not_checked"] = std::move(not_checked);
  if (!r.sha256.empty()) f["sha256"] = r.sha256;
  if (r.member_offset) f["member_offset"] = *r.member_offset;
  f["header"] = HeaderJson(r);
  Json findings = Json::array();
  for (const Finding& x : r.findings) {
    const RuleInfo* info = FindRule(x.rule);
    findings.push_back({{"rule", RuleCode(x.rule)},
                        {"name", info ? info->name : "unknown"},
                        {"severity", SeverityName(x.severity)},
                        {"offset", x.offset},
                        {"message", x.message}});
  }
  f["findings"] = std::move(findings);
  // --suppressions/--baseline: present only when they waived or refused something.
  if (!r.waived.empty()) {
    Json waived = Json::array();
    for (const WaivedFinding& w : r.waived) {
      const RuleInfo* info = FindRule(w.finding.rule);
      waived.push_back({{"rule", RuleCode(w.finding.rule)},
                        {"name", info ? info->name : "unknown"},
                        {"severity", SeverityName(w.finding.severity)},
                        {"offset", w.finding.offset},
                        {"message", w.finding.message},
                        {"by", w.by},
                        {"reason", w.reason}});
    }
    f["waived"] = std::move(waived);
  }
  if (!r.triage_notes.empty()) f["triage_notes"] = r.triage_notes;
  Json suppressed = Json::array();
  for (const auto& [rule, count] : r.suppressed) suppressed.push_back({{"rule", RuleCode(rule)}, {"count", count}});
  f["suppressed"] = std::move(suppressed);
  Counts c = CountFindings(r);
  f["summary"] = {{"errors", c.errors}, {"warnings", c.warnings}, {"infos", c.infos}};
  f["runtimes"] = RuntimesJson(r);
  if (r.header_parsed) {
    AddTemplates(r, f);
    f["sampling"] = SamplingJson(r);
    AddKeyCollisions(r, f);
  }
  if (r.deep.ran) AddDeep(r, f);
  AddTransfer(o, f);
  return f;
}

// Findings' messages escape file bytes and FileJson escapes the rest, so the
// document is ASCII; `replace` is a second guard that keeps it valid UTF-8.
std::string Dump(const Json& j, int indent) { return j.dump(indent, ' ', false, Json::error_handler_t::replace); }

}  // namespace

std::string EscapeLabelForText(std::string_view path) {
  // EscapeForDisplay leaves ':' as is and writes none of its own but in
  // what it copies, so each one left came from the path.
  return absl::StrReplaceAll(EscapeForDisplay(path, kMaxPathBytes), {{":", "\\x3a"}});
}

bool RuntimesWorthShowing(const Report& report) {
  return std::any_of(report.runtimes.begin(), report.runtimes.end(), [](const RuntimeVerdict& v) {
    return v.required || v.outcome != RuntimeOutcome::kLoads;
  });
}

std::string RuntimeVerdictText(const RuntimeVerdict& v, bool partial) {
  std::string out = absl::StrCat(Sv(ProfileName(v.runtime)), " ", Sv(RuntimeVerdictName(v, partial)));
  if (v.rule) {
    const RuleInfo* info = FindRule(*v.rule);
    absl::StrAppend(&out, " (", RuleCode(*v.rule), " ", Sv(info ? info->name : "unknown"), " at byte ", v.offset,
                    "): ", v.reason);
  }
  return out;
}

std::string RenderTextFile(const FileOutcome& o) {
  std::string out;
  const std::string label = EscapeLabelForText(o.label);
  if (o.report == nullptr) {
    absl::StrAppend(&out, label, ": I/O error: ", EscapeForDisplay(o.io_error, kMaxPathBytes), TransferNote(o), "\n");
    return out;
  }
  for (const Finding& f : o.report->findings) {
    const RuleInfo* info = FindRule(f.rule);
    absl::StrAppend(&out, label, ":", f.offset, ": ", Sv(SeverityName(f.severity)), " ", RuleCode(f.rule), " ",
                    Sv(info ? info->name : "unknown"), ": ", f.message, "\n");
  }
  for (const WaivedFinding& w : o.report->waived) {
    const RuleInfo* info = FindRule(w.finding.rule);
    absl::StrAppend(&out, label, ":", w.finding.offset, ": waived ", Sv(SeverityName(w.finding.severity)), " ",
                    RuleCode(w.finding.rule), " ", Sv(info ? info->name : "unknown"), ": ", w.finding.message,
                    " (", w.by, ": ", w.reason, ")\n");
  }
  for (const std::string& note : o.report->triage_notes) absl::StrAppend(&out, label, ": note: ", note, "\n");
  for (const auto& [rule, count] : o.report->suppressed) {
    const RuleInfo* info = FindRule(rule);
    absl::StrAppend(&out, label, ": note: ", count, " more ", RuleCode(rule), " ", Sv(info ? info->name : "unknown"),
                    " findings not listed\n");
  }
  if (!o.report->sampling.listed.empty()) {
    absl::StrAppend(&out, label, ": sampling (as llama.cpp reads the file's defaults): ", SamplingLine(*o.report), "\n");
  }
  if (o.report->deep.ran) {
    const DeepSummary& d = o.report->deep;
    absl::StrAppend(&out, label, ": deep: ", d.checked_tensors, " tensors, ", d.checked_bytes, " bytes checked, ",
                    d.bad_values, " non-finite values", d.unchecked_bytes ? absl::StrCat(", ", d.unchecked_bytes, " bytes not checked") : "", "\n");
  }
  if (RuntimesWorthShowing(*o.report)) {
    const bool partial = !o.report->not_checked.empty();
    for (const RuntimeVerdict& v : o.report->runtimes) {
      absl::StrAppend(&out, label, ": runtime ", v.required ? "(required) " : "", RuntimeVerdictText(v, partial), "\n");
    }
  }
  Counts c = CountFindings(*o.report);
  absl::StrAppend(&out, label, ": ", Sv(Verdict(o)), " (", c.errors, " errors, ", c.warnings, " warnings, ", c.infos,
                  " notes)", CoverageNote(*o.report), o.report->sha256.empty() ? "" : " sha256 ", o.report->sha256,
                  TransferNote(o), NotCheckedNote(*o.report), "\n");
  return out;
}

std::string RenderText(const std::vector<FileOutcome>& outcomes) {
  std::string out;
  for (const FileOutcome& o : outcomes) out += RenderTextFile(o);
  return out;
}

std::string RenderJsonLine(const FileOutcome& o) {
  Json line;
  line["type"] = "file";
  Json file = FileJson(o);
  for (auto& [k, v] : file.items()) line[k] = std::move(v);
  if (o.report != nullptr) line["size"] = o.report->file_size;
  return Dump(line, -1) + "\n";
}

namespace {

class TextWriter final : public ReportWriter {
 public:
  explicit TextWriter(std::ostream& out) : out_(out) {}
  void Add(const FileOutcome& o) override { out_ << RenderTextFile(o) << std::flush; }
  void AddSet(const SetReport& set) override { out_ << RenderSetText(set) << std::flush; }
  void Finish() override {}

 private:
  std::ostream& out_;
};

// The JSON document of RenderJson, written one file at a time: the head,
// then each file's entry as it comes (indented as dump(2) would nest it),
// then the tail.
class JsonWriter final : public ReportWriter {
 public:
  JsonWriter(std::ostream& out, std::string_view policy_name) : out_(out) {
    Json doc;
    // A URN: names the schema (docs/report.schema.json) without a domain.
    doc["schema"] = "urn:ggufguard:schema:report-v1";
    doc["schema_version"] = kReportSchemaVersion;
    doc["tool"] = {{"name", "ggufguard"}, {"version", kToolVersion}, {"ggml_type_table", GgmlTypeTableVersion()}};
    doc["policy"] = EscapeForDisplay(policy_name, kMaxPathBytes);  // a policy file's name or path, as any other string
    std::string head = Dump(doc, 2);
    head.resize(head.size() - 2);  // drop "\n}"
    out_ << head << ",\n  \"files\": [";
  }
  void Add(const FileOutcome& o) override {
    std::string entry = Dump(FileJson(o), 2);
    absl::StrReplaceAll({{"\n", "\n    "}}, &entry);
    out_ << (first_ ? "\n    " : ",\n    ") << entry << std::flush;
    first_ = false;
  }
  // A set's entry is written at the end, in "sets" (its shards are in
  // "files"): a few hundred bytes per set, not per shard.
  void AddSet(const SetReport& set) override { sets_.push_back(SetJson(set)); }
  void Finish() override {
    out_ << (first_ ? "]" : "\n  ]");
    if (!sets_.empty()) {
      std::string sets = Dump(sets_, 2);
      absl::StrReplaceAll({{"\n", "\n  "}}, &sets);
      out_ << ",\n  \"sets\": " << sets;
    }
    out_ << "\n}\n" << std::flush;
  }

 private:
  std::ostream& out_;
  bool first_ = true;
  Json sets_ = Json::array();
};

}  // namespace

std::unique_ptr<ReportWriter> MakeTextWriter(std::ostream& out) { return std::make_unique<TextWriter>(out); }
std::unique_ptr<ReportWriter> MakeJsonWriter(std::ostream& out, std::string_view policy_name) {
  return std::make_unique<JsonWriter>(out, policy_name);
}

std::string RenderJson(const std::vector<FileOutcome>& outcomes, std::string_view policy_name) {
  std::ostringstream out;
  std::unique_ptr<ReportWriter> w = MakeJsonWriter(out, policy_name);
  for (const FileOutcome& o : outcomes) w->Add(o);
  w->Finish();
  return out.str();
}

namespace {

std::string ShortValue(const Value& v);

// The first few elements of an array, as gguf-dump shows them.
std::string ArrayPreview(const ArrayView& a) {
  constexpr uint64_t kShown = 5;
  std::string s = absl::StrCat(Sv(ValueTypeName(a.element_type)), "[", a.count, "] [");
  const uint64_t n = a.count < kShown ? a.count : kShown;
  if (a.element_type == ValueType::kString) {
    a.ForEachString(n, [&](uint64_t i, std::string_view str, uint64_t) {
      absl::StrAppend(&s, i ? ", " : "", "'", EscapeForDisplay(str, 24), "'");
      return true;
    });
  } else if (a.element_type != ValueType::kArray) {
    for (uint64_t i = 0; i < n; ++i) {
      Value e;
      e.type = a.element_type;
      e.order = a.order;
      e.bytes = a.element_bytes.subspan(i * ScalarSize(a.element_type), ScalarSize(a.element_type));
      absl::StrAppend(&s, i ? ", " : "", ShortValue(e));
    }
  } else {
    s += "...";
  }
  if (a.count > n) s += ", ...";
  return s + "]";
}

std::string ShortValue(const Value& v) {
  switch (v.type) {
    case ValueType::kString:
      return absl::StrCat("'", EscapeForDisplay(v.AsString(), 60), "'");
    case ValueType::kArray:
      return ArrayPreview(v.array);
    case ValueType::kFloat32:
    case ValueType::kFloat64:
      return absl::StrFormat("%g", *v.AsDouble());
    case ValueType::kBool:
      return v.bytes[0] == 0 ? "false" : v.bytes[0] == 1 ? "true" : absl::StrCat("invalid(", v.bytes[0], ")");
    case ValueType::kInt8:
    case ValueType::kInt16:
    case ValueType::kInt32:
    case ValueType::kInt64:
      return absl::StrCat(*v.AsSigned());
    default:
      return absl::StrCat(*v.AsUnsigned());
  }
}

// Each listed template's behaviour summary, for inspect: the text it writes
// per turn and when, the conditions that read content, each role's fate.
void AppendTemplateBehaviour(const Report& r, std::string* out) {
  for (const TemplateDigest& d : r.templates.listed) {
    const TemplateBehaviour* b = d.behaviour.get();
    if (b == nullptr || !b->analysed) continue;
    absl::StrAppend(out, "chat template ", EscapeForDisplay(d.key, 80), " (", d.bytes, " bytes, sha256 ",
                    d.sha256.substr(0, 16), "...):\n");
    absl::StrAppend(out, "  text it writes to the model", b->texts.empty() ? ": none\n" : ":\n");
    for (const TemplateTextSpan& t : b->texts) {
      std::string kinds;
      for (const char* k : jinja::TextKindNames(t.kinds)) {
        if (std::string_view(k) != "prose" && std::string_view(k) != "special-token" && std::string_view(k) != "role-header") {
          absl::StrAppend(&kinds, kinds.empty() ? " [" : ", ", k);
        }
      }
      if (!kinds.empty()) kinds += "]";
      absl::StrAppend(out, "    @", t.offset, " ", t.turn, " turn", t.content_gated ? ", only on a content trigger" : "",
                      t.inserted ? ", not upstream's" : "", kinds, ": '", t.text, "'", t.when.empty() ? "" : " when ",
                      t.when, "\n");
    }
    if (b->texts_not_listed) absl::StrAppend(out, "    (", b->texts_not_listed, " more not listed)\n");
    absl::StrAppend(out, "  conditions that gate output", b->gates.empty() ? ": none\n" : ":\n");
    for (const TemplateGate& g : b->gates) {
      absl::StrAppend(out, "    @", g.offset, g.on_content ? " ON CONTENT " : " ", g.condition, " (reads ", g.reads, ")\n");
    }
    if (b->gates_not_listed) absl::StrAppend(out, "    (", b->gates_not_listed, " more not listed)\n");
    absl::StrAppend(out, "  what becomes of each role's content", b->roles.empty() ? ": nothing printed\n" : ":\n");
    for (const TemplateRoleFate& x : b->roles) absl::StrAppend(out, "    ", x.role, ": ", x.fate, "\n");
  }
}

}  // namespace

std::string RenderInspect(std::string_view label, const Report& r) {
  const GgufHeader& h = r.header;
  std::string out;
  absl::StrAppend(&out, "file: ", EscapeLabelForText(label), "\n");
  if (r.member_offset) {
    absl::StrAppend(&out, "llamafile: the GGUF member at byte ", *r.member_offset,
                    " of the file (GG9166); every offset below counts from it\n");
  }
  absl::StrAppend(&out, "version: ", h.version, "  byte order: ", Sv(ByteOrderName(h.byte_order)),
                  "  tensors: ", h.tensor_count, "  kvs: ", h.kv_count, "  file size: ", r.file_size, "\n");
  if (h.data_offset_known) {
    absl::StrAppend(&out, "alignment: ", h.alignment, "  data offset: ", h.data_offset, "\n");
  }
  absl::StrAppend(&out, "metadata:\n");
  for (size_t i = 0; i < h.kvs.size(); ++i) {
    const KeyValue& kv = h.kvs[i];
    absl::StrAppendFormat(&out, "  %5d @%-10d %-8s %s = %s\n", i, kv.offset(), Sv(ValueTypeName(kv.type())),
                          EscapeForDisplay(kv.key(), 80), ShortValue(kv.value()));
  }
  absl::StrAppend(&out, "tensors:\n");
  for (size_t i = 0; i < h.tensors.size(); ++i) {
    const TensorInfo& t = h.tensors[i];
    const GgmlTypeInfo* type = FindGgmlType(t.ggml_type);
    std::string shape;
    const std::array<uint64_t, kMaxDims> dims = t.dims();
    for (uint32_t d = 0; d < t.n_dims; ++d) absl::StrAppend(&shape, d ? ", " : "", dims[d]);
    std::string type_name = type ? std::string(type->name) : absl::StrCat("type#", t.ggml_type);
    absl::StrAppendFormat(&out, "  %5d %-8s [%s] offset %d size %s  %s\n", i, type_name, shape,
                          t.absolute_known ? t.absolute_offset : t.relative_offset(),
                          t.size_known ? absl::StrCat(t.byte_size) : std::string("?"), EscapeForDisplay(t.name, 80));
  }
  if (!r.sampling.listed.empty()) {
    absl::StrAppend(&out, "sampling defaults (what llama.cpp uses for every reply it samples with them):\n");
    for (const SamplingSetting& s : r.sampling.listed) {
      absl::StrAppendFormat(&out, "  @%-10d %s = %s -> %s\n", s.offset, Sv(s.key), s.written, s.llama_cpp);
    }
  }
  absl::StrAppend(&out, InspectTemplates(r.templates));
  if (!r.header_parsed) absl::StrAppend(&out, "(header incomplete: parsing stopped at a fatal finding)\n");
  AppendTemplateBehaviour(r, &out);
  return out;
}

}  // namespace ggufguard
