// The `ggufguard` Python module (pybind11), over the C API: what a Python
// gatekeeper needs, as plain Python values.
//
//   report = ggufguard.validate("model.gguf")          # or bytes, policy="strict"
//   report.valid, report.verdict, report.not_checked, report.findings, report.tensors, report.metadata
//   report = ggufguard.validate("model.gguf", deep=True)  # every tensor's data too
//   report.deep.bad_values, report.deep.tensors
//   report = ggufguard.validate(first_bytes, file_size=n)  # header only
//
// Everything is converted when validate() returns, so a report holds no
// pointer into the file or the caller's bytes. The GIL is released while the
// file is validated. Errors: a bad policy is a ValueError, a file that cannot
// be read an OSError; an invalid file is a report whose `valid` is False.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ggufguard/ggufguard.h"

namespace py = pybind11;

namespace {

struct Finding {
  std::string rule, name, severity;
  uint64_t offset;
  std::string message;
};

// What one runtime would do with the file (ggufguard_runtime_verdict).
struct RuntimeVerdict {
  std::string runtime, verdict;
  bool required;
  std::optional<std::string> rule;  // None when it loads
  uint64_t offset;
  std::string reason, judged_at;
};

// Names are str, or bytes where they are not UTF-8 (an invalid file's, or
// one a policy let through): never a UnicodeDecodeError.
struct Tensor {
  py::object name;
  uint32_t type;
  std::vector<uint64_t> shape;  // ne[0..n_dims), ggml order
  uint64_t offset;              // absolute file offset
  uint64_t nbytes;
};

struct DeepTensor {
  py::object name;
  uint32_t type;
  size_t tensor;  // index in the file's tensor infos
  uint64_t checked_bytes;
  uint64_t bad_values;
};

struct DeepSummary {
  uint64_t checked_tensors = 0, checked_bytes = 0, bad_values = 0, unchecked_bytes = 0;
  std::vector<DeepTensor> tensors;
  uint64_t tensors_suppressed = 0;
};

struct Report {
  bool valid = false;
  bool header_only = false;  // validate(bytes, file_size=...): data unread
  std::string verdict = "invalid";  // "valid", "invalid" or "inconclusive": accept only "valid"
  py::list not_checked;  // what the verdict does not cover (str, or bytes where not UTF-8)
  bool big_endian = false;   // tensor data in the file's byte order, not converted
  bool tensor_table_trusted = false;  // `tensors` is the table ggufguard.h promises
  uint64_t file_size = 0;
  std::vector<Finding> findings;
  uint64_t findings_suppressed = 0;  // counted past each rule's listing limit
  std::vector<Tensor> tensors;
  py::dict metadata;
  std::optional<DeepSummary> deep;  // deep=True and the header parsed
  std::vector<RuntimeVerdict> runtimes;
};

struct FreeReport {
  void operator()(ggufguard_report* r) const { ggufguard_report_free(r); }
};
struct FreePolicy {
  void operator()(ggufguard_policy* p) const { ggufguard_policy_free(p); }
};

const char* SeverityName(int s) {
  return s == GGUFGUARD_SEVERITY_ERROR ? "error" : s == GGUFGUARD_SEVERITY_WARNING ? "warning" : "info";
}

// Strings are UTF-8 in a valid file; an invalid one may hold any bytes,
// which come back as bytes rather than raising.
py::object Text(const char* data, size_t length) {
  PyObject* s = PyUnicode_DecodeUTF8(data, static_cast<Py_ssize_t>(length), "strict");
  if (s != nullptr) return py::reinterpret_steal<py::object>(s);
  PyErr_Clear();
  return py::bytes(data, length);
}

// Raises `type` with `message`, which may quote a path's bytes as the file
// system has them: bytes that are not UTF-8 become \xNN escapes rather than
// a UnicodeDecodeError in place of the exception the caller catches.
[[noreturn]] void RaiseWith(PyObject* type, const std::string& message) {
  py::object text = py::reinterpret_steal<py::object>(
      PyUnicode_DecodeUTF8(message.data(), static_cast<Py_ssize_t>(message.size()), "backslashreplace"));
  if (!text) throw py::error_already_set();
  PyErr_SetObject(type, text.ptr());
  throw py::error_already_set();
}

[[noreturn]] void Raise(ggufguard_status s) {
  const std::string message = ggufguard_last_error();
  if (s == GGUFGUARD_ERR_IO) RaiseWith(PyExc_OSError, message);
  if (s == GGUFGUARD_ERR_POLICY || s == GGUFGUARD_ERR_INVALID_ARGUMENT) RaiseWith(PyExc_ValueError, message);
  if (s == GGUFGUARD_ERR_NO_MEMORY) throw std::bad_alloc();
  RaiseWith(PyExc_RuntimeError, std::string(ggufguard_status_name(s)) + ": " + message);
}

void Check(ggufguard_status s) {
  if (s != GGUFGUARD_OK) Raise(s);
}

// A numeric array as a memoryview of native values (format 'B', 'i', 'f'...).
template <typename T, typename Read>
py::object NumericArray(const ggufguard_report* r, const char* key, uint64_t count, const char* format, Read read) {
  std::vector<T> values;
  values.reserve(static_cast<size_t>(count));
  for (uint64_t i = 0; i < count; ++i) {
    T v;
    // A truncated array (invalid file) ends where its bytes do.
    if (!read(r, key, i, &v)) break;
    values.push_back(v);
  }
  py::bytes raw(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
  return py::module_::import("builtins").attr("memoryview")(raw).attr("cast")(format);
}

template <typename T, typename Wide>
auto ReadAs(ggufguard_status (*get)(const ggufguard_report*, const char*, uint64_t, Wide*)) {
  return [get](const ggufguard_report* r, const char* key, uint64_t i, T* out) {
    Wide w;
    if (get(r, key, i, &w) != GGUFGUARD_OK) return false;
    *out = static_cast<T>(w);
    return true;
  };
}

py::object ArrayValue(const ggufguard_report* r, const char* key) {
  int type = 0;
  uint64_t count = 0;
  Check(ggufguard_get_array(r, key, &type, &count));
  switch (type) {
    case GGUFGUARD_TYPE_UINT8: return NumericArray<uint8_t>(r, key, count, "B", ReadAs<uint8_t>(ggufguard_get_array_uint64));
    case GGUFGUARD_TYPE_INT8: return NumericArray<int8_t>(r, key, count, "b", ReadAs<int8_t>(ggufguard_get_array_int64));
    case GGUFGUARD_TYPE_UINT16: return NumericArray<uint16_t>(r, key, count, "H", ReadAs<uint16_t>(ggufguard_get_array_uint64));
    case GGUFGUARD_TYPE_INT16: return NumericArray<int16_t>(r, key, count, "h", ReadAs<int16_t>(ggufguard_get_array_int64));
    case GGUFGUARD_TYPE_UINT32: return NumericArray<uint32_t>(r, key, count, "I", ReadAs<uint32_t>(ggufguard_get_array_uint64));
    case GGUFGUARD_TYPE_INT32: return NumericArray<int32_t>(r, key, count, "i", ReadAs<int32_t>(ggufguard_get_array_int64));
    case GGUFGUARD_TYPE_UINT64: return NumericArray<uint64_t>(r, key, count, "Q", ReadAs<uint64_t>(ggufguard_get_array_uint64));
    case GGUFGUARD_TYPE_INT64: return NumericArray<int64_t>(r, key, count, "q", ReadAs<int64_t>(ggufguard_get_array_int64));
    case GGUFGUARD_TYPE_FLOAT32: return NumericArray<float>(r, key, count, "f", ReadAs<float>(ggufguard_get_array_float64));
    case GGUFGUARD_TYPE_FLOAT64: return NumericArray<double>(r, key, count, "d", ReadAs<double>(ggufguard_get_array_float64));
    case GGUFGUARD_TYPE_BOOL: {
      py::list out;
      for (uint64_t i = 0; i < count; ++i) {
        int b;
        if (ggufguard_get_array_bool(r, key, i, &b) != GGUFGUARD_OK) break;
        out.append(py::bool_(b != 0));
      }
      return out;
    }
    case GGUFGUARD_TYPE_STRING: {
      py::list out;
      for (uint64_t i = 0; i < count; ++i) {
        const char* s;
        size_t n;
        if (ggufguard_get_array_string(r, key, i, &s, &n) != GGUFGUARD_OK) break;
        out.append(Text(s, n));
      }
      return out;
    }
    default:
      return py::none();  // nested arrays: rejected by every loader; not decoded
  }
}

py::object ScalarValue(const ggufguard_report* r, const char* key, int type) {
  switch (type) {
    case GGUFGUARD_TYPE_STRING: {
      const char* s;
      size_t n;
      Check(ggufguard_get_string(r, key, &s, &n));
      return Text(s, n);
    }
    case GGUFGUARD_TYPE_BOOL: {
      int b;
      Check(ggufguard_get_bool(r, key, &b));
      return py::bool_(b != 0);
    }
    case GGUFGUARD_TYPE_FLOAT32:
    case GGUFGUARD_TYPE_FLOAT64: {
      double d;
      Check(ggufguard_get_float64(r, key, &d));
      return py::float_(d);
    }
    case GGUFGUARD_TYPE_UINT64: {
      uint64_t u;
      Check(ggufguard_get_uint64(r, key, &u));
      return py::int_(u);
    }
    case GGUFGUARD_TYPE_ARRAY:
      return ArrayValue(r, key);
    default: {
      int64_t i;
      if (ggufguard_get_int64(r, key, &i) != GGUFGUARD_OK) return py::none();  // unknown type (invalid file)
      return py::int_(i);
    }
  }
}

Report Convert(const ggufguard_report* r) {
  Report out;
  out.valid = ggufguard_report_valid(r) != 0;
  out.header_only = ggufguard_report_header_only(r) != 0;
  switch (ggufguard_report_verdict(r)) {
    case GGUFGUARD_VERDICT_VALID: out.verdict = "valid"; break;
    case GGUFGUARD_VERDICT_INCONCLUSIVE: out.verdict = "inconclusive"; break;
    default: out.verdict = "invalid"; break;
  }
  for (size_t i = 0; i < ggufguard_report_not_checked_count(r); ++i) {
    const char* item = ggufguard_report_not_checked_at(r, i);
    out.not_checked.append(Text(item, std::strlen(item)));
  }
  out.big_endian = ggufguard_report_big_endian(r) != 0;
  out.tensor_table_trusted = ggufguard_report_tensor_table_trusted(r) != 0;
  out.file_size = ggufguard_report_file_size(r);
  out.findings_suppressed = ggufguard_report_findings_suppressed(r);
  for (size_t i = 0; i < ggufguard_finding_count(r); ++i) {
    ggufguard_finding f;
    Check(ggufguard_finding_at(r, i, &f));
    out.findings.push_back({f.rule, f.name, SeverityName(f.severity), f.offset, f.message});
  }
  for (size_t i = 0; i < ggufguard_runtime_count(r); ++i) {
    ggufguard_runtime_verdict v;
    Check(ggufguard_runtime_at(r, i, &v));
    out.runtimes.push_back({v.runtime, v.verdict, v.required != 0,
                            v.rule ? std::optional<std::string>(v.rule) : std::nullopt, v.offset, v.reason,
                            v.judged_at});
  }
  for (size_t i = 0; i < ggufguard_tensor_count(r); ++i) {
    ggufguard_tensor t;
    Check(ggufguard_tensor_at(r, i, &t));
    out.tensors.push_back({Text(t.name, t.name_length), t.ggml_type,
                           std::vector<uint64_t>(t.ne, t.ne + (t.n_dims <= 4 ? t.n_dims : 4)), t.offset, t.size});
  }
  if (ggufguard_report_deep_ran(r)) {
    DeepSummary d;
    d.checked_tensors = ggufguard_report_deep_checked_tensors(r);
    d.checked_bytes = ggufguard_report_deep_checked_bytes(r);
    d.bad_values = ggufguard_report_deep_bad_values(r);
    d.unchecked_bytes = ggufguard_report_deep_unchecked_bytes(r);
    d.tensors_suppressed = ggufguard_report_deep_tensors_suppressed(r);
    for (size_t i = 0; i < ggufguard_deep_tensor_count(r); ++i) {
      ggufguard_deep_tensor t;
      Check(ggufguard_deep_tensor_at(r, i, &t));
      d.tensors.push_back({Text(t.name, t.name_length), t.ggml_type, t.tensor, t.checked_bytes, t.bad_values});
    }
    out.deep = std::move(d);
  }
  for (size_t i = 0; i < ggufguard_kv_count(r); ++i) {
    const char* key;
    size_t key_length;
    int type;
    Check(ggufguard_kv_at(r, i, &key, &key_length, &type));
    // By-key getters see the first of repeated keys and nothing past a NUL
    // in a key (both only in invalid files): keep the first, skip the rest.
    if (std::strlen(key) != key_length) continue;
    py::object k = Text(key, key_length);
    if (out.metadata.contains(k)) continue;
    out.metadata[k] = ScalarValue(r, key, type);
  }
  return out;
}

std::unique_ptr<ggufguard_policy, FreePolicy> MakePolicy(const std::string& policy) {
  ggufguard_policy* p = nullptr;
  // A policy document starts with '{'; anything else names a built-in.
  size_t first = policy.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && policy[first] == '{') {
    Check(ggufguard_policy_from_json(policy.data(), policy.size(), &p));
  } else {
    // A C string from here on: "default\0x" must not pass for "default".
    if (policy.find('\0') != std::string::npos) throw py::value_error("policy name contains a null byte");
    Check(ggufguard_policy_builtin(policy.c_str(), &p));
  }
  return std::unique_ptr<ggufguard_policy, FreePolicy>(p);
}

// What validate() does with a buffer of `size` bytes.
ggufguard_status ValidateBytes(const char* data, size_t size, const ggufguard_policy* policy, bool deep,
                               uint32_t threads, std::optional<uint64_t> file_size, ggufguard_report** out) {
  if (file_size.has_value()) return ggufguard_validate_prefix(data, size, *file_size, policy, out);
  return deep ? ggufguard_validate_buffer_deep(data, size, policy, threads, out)
              : ggufguard_validate_buffer(data, size, policy, out);
}

Report Validate(py::object source, const std::string& policy_text, bool deep, int jobs,
                std::optional<uint64_t> file_size) {
  if (jobs < 0 || jobs > 1024) throw py::value_error("jobs is 0 (one per core) to 1024");
  if (jobs != 0 && !deep) throw py::value_error("jobs is for deep=True");
  const bool is_path = py::isinstance<py::str>(source) || py::hasattr(source, "__fspath__");
  if (file_size.has_value() && (deep || is_path)) {
    throw py::value_error("file_size is for the first bytes of a file (bytes-like source), without deep=True");
  }
  auto policy = MakePolicy(policy_text);
  const auto threads = static_cast<uint32_t>(jobs);
  ggufguard_report* raw = nullptr;
  ggufguard_status s;
  // The bytes a buffer report borrows: `source` itself, or the copy made of
  // a mutable buffer. Convert() reads them, so they live until it returns
  // (a copy scoped to its branch was freed before it: found in review,
  // test_large_buffers_are_kept_alive_while_converted).
  py::object borrowed = source;
  if (is_path) {
    // The file system's bytes, as open() passes them: a name that is not
    // UTF-8 (os.fsdecode gives it lone surrogates) still names its file.
    const std::string path = py::bytes(py::module_::import("os").attr("fsencode")(source));
    if (path.find('\0') != std::string::npos) throw py::value_error("path contains a null byte");
    py::gil_scoped_release unlocked;
    s = deep ? ggufguard_validate_path_deep(path.c_str(), policy.get(), threads, &raw)
             : ggufguard_validate_path(path.c_str(), policy.get(), &raw);
  } else if (py::isinstance<py::bytes>(source)) {
    // bytes are immutable: validated in place, the GIL released.
    char* data;
    Py_ssize_t size;
    if (PyBytes_AsStringAndSize(source.ptr(), &data, &size) != 0) throw py::error_already_set();
    py::gil_scoped_release unlocked;
    s = ValidateBytes(data, static_cast<size_t>(size), policy.get(), deep, threads, file_size, &raw);
  } else if (PyObject_CheckBuffer(source.ptr())) {
    // A bytearray or memoryview may change under another thread while the
    // GIL is released: validate a copy, never bytes that move.
    borrowed = py::module_::import("builtins").attr("bytes")(source);
    char* data;
    Py_ssize_t size;
    if (PyBytes_AsStringAndSize(borrowed.ptr(), &data, &size) != 0) throw py::error_already_set();
    py::gil_scoped_release unlocked;
    s = ValidateBytes(data, static_cast<size_t>(size), policy.get(), deep, threads, file_size, &raw);
  } else {
    throw py::type_error("validate() takes a path (str or os.PathLike) or bytes-like data");
  }
  std::unique_ptr<ggufguard_report, FreeReport> report(raw);
  Check(s);
  return Convert(report.get());
}

}  // namespace

PYBIND11_MODULE(ggufguard, m) {
  m.doc() = "ggufguard: validate GGUF model files before a loader touches them";
  m.attr("__version__") = ggufguard_version();
  m.attr("report_schema_version") = ggufguard_report_schema_version();
  m.attr("rule_catalog_version") = ggufguard_rule_catalog_version();

  py::class_<Finding>(m, "Finding")
      .def_readonly("rule", &Finding::rule)
      .def_readonly("name", &Finding::name)
      .def_readonly("severity", &Finding::severity)
      .def_readonly("offset", &Finding::offset)
      .def_readonly("message", &Finding::message)
      .def("__repr__", [](const Finding& f) {
        return "<Finding " + f.rule + " " + f.name + " " + f.severity + " at " + std::to_string(f.offset) + ">";
      });
  py::class_<RuntimeVerdict>(m, "RuntimeVerdict")
      .def_readonly("runtime", &RuntimeVerdict::runtime)
      .def_readonly("verdict", &RuntimeVerdict::verdict)
      .def_readonly("required", &RuntimeVerdict::required)
      .def_readonly("rule", &RuntimeVerdict::rule)
      .def_readonly("offset", &RuntimeVerdict::offset)
      .def_readonly("reason", &RuntimeVerdict::reason)
      .def_readonly("judged_at", &RuntimeVerdict::judged_at)
      .def("__repr__", [](const RuntimeVerdict& v) { return "<RuntimeVerdict " + v.runtime + " " + v.verdict + ">"; });
  py::class_<Tensor>(m, "Tensor")
      .def_readonly("name", &Tensor::name)
      .def_readonly("type", &Tensor::type)
      .def_property_readonly("shape", [](const Tensor& t) { return py::tuple(py::cast(t.shape)); })
      .def_readonly("offset", &Tensor::offset)
      .def_readonly("nbytes", &Tensor::nbytes)
      .def("__repr__", [](const Tensor& t) { return "<Tensor " + std::string(py::repr(t.name)) + ">"; });
  py::class_<DeepTensor>(m, "DeepTensor")
      .def_readonly("name", &DeepTensor::name)
      .def_readonly("type", &DeepTensor::type)
      .def_readonly("tensor", &DeepTensor::tensor)
      .def_readonly("checked_bytes", &DeepTensor::checked_bytes)
      .def_readonly("bad_values", &DeepTensor::bad_values)
      .def("__repr__", [](const DeepTensor& t) {
        return "<DeepTensor " + std::string(py::repr(t.name)) + ": " + std::to_string(t.bad_values) + " bad values>";
      });
  py::class_<DeepSummary>(m, "DeepSummary")
      .def_readonly("checked_tensors", &DeepSummary::checked_tensors)
      .def_readonly("checked_bytes", &DeepSummary::checked_bytes)
      .def_readonly("bad_values", &DeepSummary::bad_values)
      .def_readonly("unchecked_bytes", &DeepSummary::unchecked_bytes)
      .def_readonly("tensors", &DeepSummary::tensors)
      .def_readonly("tensors_suppressed", &DeepSummary::tensors_suppressed)
      .def("__repr__", [](const DeepSummary& d) {
        return "<DeepSummary " + std::to_string(d.checked_tensors) + " tensors, " + std::to_string(d.checked_bytes) +
               " bytes checked, " + std::to_string(d.bad_values) + " bad values>";
      });
  py::class_<Report>(m, "Report")
      .def_readonly("valid", &Report::valid)
      .def_readonly("header_only", &Report::header_only)
      .def_readonly("verdict", &Report::verdict)
      .def_readonly("not_checked", &Report::not_checked)
      .def_readonly("big_endian", &Report::big_endian)
      .def_readonly("tensor_table_trusted", &Report::tensor_table_trusted)
      .def_readonly("file_size", &Report::file_size)
      .def_readonly("findings", &Report::findings)
      .def_readonly("findings_suppressed", &Report::findings_suppressed)
      .def_readonly("tensors", &Report::tensors)
      .def_readonly("metadata", &Report::metadata)
      .def_readonly("deep", &Report::deep)
      .def_readonly("runtimes", &Report::runtimes)
      .def("__bool__", [](const Report& r) { return r.valid; })
      .def("__repr__", [](const Report& r) {
        return std::string("<Report ") + (r.valid ? "valid" : "invalid") + ", " + std::to_string(r.findings.size()) +
               " findings, " + std::to_string(r.tensors.size()) + " tensors>";
      });

  m.def("validate", &Validate, py::arg("source"), py::arg("policy") = "default", py::kw_only(),
        py::arg("deep") = false, py::arg("jobs") = 0, py::arg("file_size") = py::none(),
        "Validates a GGUF file given as a path or as bytes. `policy` is \"default\", \"strict\" or a policy "
        "document (JSON text). With deep=True every tensor's data is checked for NaN and infinities as llama.cpp's "
        "ggml_validate_row_data checks it, on `jobs` threads (0: one per core), and the report's `deep` says what "
        "was checked (None otherwise). With file_size=N, `source` is the first bytes of a file of N bytes (at least its "
        "whole header, e.g. from an HTTP range request): the header is validated, every tensor checked to lie inside "
        "N bytes, the data section unread, and the report's `header_only` is True; bytes that end inside the header "
        "raise OSError saying how many are needed. A bad policy raises ValueError, an unreadable file OSError.");
  m.def("rules", [] {
    py::list out;
    for (size_t i = 0; i < ggufguard_rule_count(); ++i) {
      ggufguard_rule_info info;
      Check(ggufguard_rule_at(i, &info));
      py::dict d;
      d["rule"] = info.code;
      d["name"] = info.name;
      d["default_severity"] = SeverityName(info.default_severity);
      d["strict_severity"] = SeverityName(info.strict_severity);
      d["summary"] = info.summary;
      out.append(d);
    }
    return out;
  }, "Every rule, in ID order, as dicts with rule, name, default_severity, strict_severity, summary.");
}
