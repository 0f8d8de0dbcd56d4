/* ggufguard C API: validate a GGUF file and read it through the validated
 * header, from C or any language with a C FFI (C99, no C++ types, no
 * exceptions cross this boundary).
 *
 * Ownership: every object a function hands out through an `out` pointer is
 * owned by the caller and freed with its *_free function (free(NULL) is a
 * no-op). Pointers a getter returns (strings, tensor names, data) borrow from
 * the object they came from and stay valid until that object is freed.
 *
 * Thread-safety: every function may be called from any thread. A policy,
 * report or mapping is never modified after it is created, so one object may
 * be read from many threads at once; freeing it while another thread uses it
 * is the caller's bug. ggufguard_last_error() is per thread.
 *
 * Errors: a function that can fail returns a ggufguard_status; on anything
 * but GGUFGUARD_OK its out values are left untouched (handles: set to NULL)
 * and ggufguard_last_error() describes the failure. A status is about the
 * call (bad argument, unreadable file, out of memory), never about the GGUF
 * file: an invalid file is validated successfully (GGUFGUARD_OK) into a
 * report whose ggufguard_report_valid() is 0 and whose findings say why.
 *
 * docs/library.md describes the API and its compatibility promise. */
#ifndef GGUFGUARD_GGUFGUARD_H_
#define GGUFGUARD_GGUFGUARD_H_

#include <stddef.h>
#include <stdint.h>

#if defined(GGUFGUARD_BUILDING_LIBRARY) && defined(__GNUC__)
#define GGUFGUARD_API __attribute__((visibility("default")))
#else
#define GGUFGUARD_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define GGUFGUARD_VERSION_MAJOR 0
#define GGUFGUARD_VERSION_MINOR 1
#define GGUFGUARD_VERSION_PATCH 0

typedef enum ggufguard_status {
  GGUFGUARD_OK = 0,
  GGUFGUARD_ERR_INVALID_ARGUMENT = 1, /* NULL where a value is needed, unknown policy name */
  GGUFGUARD_ERR_POLICY = 2,           /* a policy document that does not parse or names unknown fields */
  GGUFGUARD_ERR_IO = 3,               /* the file could not be opened, read or mapped */
  GGUFGUARD_ERR_NOT_FOUND = 4,        /* no such key */
  GGUFGUARD_ERR_TYPE = 5,             /* the value has another type than the getter reads */
  GGUFGUARD_ERR_RANGE = 6,            /* index past the end, or a value that does not fit the out type */
  GGUFGUARD_ERR_NOT_VALID = 7,        /* the report is of an invalid file: no tensor table is trusted */
  GGUFGUARD_ERR_CHANGED = 8,          /* the file is not the one validated (size or identity differs) */
  GGUFGUARD_ERR_NO_MEMORY = 9,
  GGUFGUARD_ERR_INTERNAL = 10         /* a bug in ggufguard; please report it */
} ggufguard_status;

/* GGUF metadata value types (the file format's ids). */
typedef enum ggufguard_value_type {
  GGUFGUARD_TYPE_UINT8 = 0,
  GGUFGUARD_TYPE_INT8 = 1,
  GGUFGUARD_TYPE_UINT16 = 2,
  GGUFGUARD_TYPE_INT16 = 3,
  GGUFGUARD_TYPE_UINT32 = 4,
  GGUFGUARD_TYPE_INT32 = 5,
  GGUFGUARD_TYPE_FLOAT32 = 6,
  GGUFGUARD_TYPE_BOOL = 7,
  GGUFGUARD_TYPE_STRING = 8,
  GGUFGUARD_TYPE_ARRAY = 9,
  GGUFGUARD_TYPE_UINT64 = 10,
  GGUFGUARD_TYPE_INT64 = 11,
  GGUFGUARD_TYPE_FLOAT64 = 12
} ggufguard_value_type;

typedef enum ggufguard_severity {
  GGUFGUARD_SEVERITY_INFO = 0,
  GGUFGUARD_SEVERITY_WARNING = 1,
  GGUFGUARD_SEVERITY_ERROR = 2
} ggufguard_severity;

/* A report's verdict (ggufguard_report_verdict); each value is the exit code
 * `ggufguard validate` gives for it. */
typedef enum ggufguard_verdict {
  GGUFGUARD_VERDICT_VALID = 0,       /* no error, and the whole file was checked */
  GGUFGUARD_VERDICT_INVALID = 1,     /* at least one finding of error severity */
  GGUFGUARD_VERDICT_INCONCLUSIVE = 5 /* no error, but part of the file was not checked (a prefix) */
} ggufguard_verdict;

typedef struct ggufguard_policy ggufguard_policy;   /* what a validation enforces */
typedef struct ggufguard_report ggufguard_report;   /* a validation's verdict, findings and header */
typedef struct ggufguard_mapping ggufguard_mapping; /* a validated file mapped read-only */

/* ---- Versions (static strings, never freed) ---- */

/* The library's version, "MAJOR.MINOR.PATCH". */
GGUFGUARD_API const char* ggufguard_version(void);
/* The version of the JSON report schema (docs/report.schema.json) this
 * library's CLI writes; the same number as its "schema_version" field. */
GGUFGUARD_API int ggufguard_report_schema_version(void);
/* The rule catalog's version, "<rule count>-<hash>": it changes whenever a
 * rule is added, retired, renamed or given another default severity.
 * Compare it for equality only. */
GGUFGUARD_API const char* ggufguard_rule_catalog_version(void);

/* A short name for a status ("ok", "io-error", ...); never NULL. */
GGUFGUARD_API const char* ggufguard_status_name(int status);
/* What the last call that failed on this thread said; "" if none did. Valid
 * until the next failing call on this thread. */
GGUFGUARD_API const char* ggufguard_last_error(void);

/* ---- Rules ---- */

typedef struct ggufguard_rule_info {
  const char* code;    /* "GG3011" */
  const char* name;    /* "duplicate-key" */
  int default_severity; /* ggufguard_severity under the default policy */
  int strict_severity;  /* and under the strict policy */
  const char* summary; /* one line */
} ggufguard_rule_info;

GGUFGUARD_API size_t ggufguard_rule_count(void);
/* The index-th rule in ID order; strings are static. */
GGUFGUARD_API ggufguard_status ggufguard_rule_at(size_t index, ggufguard_rule_info* out);

/* ---- Policies ---- */

/* "default" or "strict" (docs/policy.md). */
GGUFGUARD_API ggufguard_status ggufguard_policy_builtin(const char* name, ggufguard_policy** out);
/* A policy document (JSON, docs/policy.md) of `size` bytes; need not be
 * NUL-terminated. An invalid document gives GGUFGUARD_ERR_POLICY. */
GGUFGUARD_API ggufguard_status ggufguard_policy_from_json(const char* json, size_t size, ggufguard_policy** out);
GGUFGUARD_API void ggufguard_policy_free(ggufguard_policy* policy);

/* ---- Validation ----
 * `policy` may be NULL for the default policy; it is not retained. */

/* Opens and reads the file at `path` (a regular file). */
GGUFGUARD_API ggufguard_status ggufguard_validate_path(const char* path, const ggufguard_policy* policy,
                                                       ggufguard_report** out);
/* Reads the open descriptor `fd`, which stays the caller's: a regular file is
 * read with pread (its offset is not moved), anything else (a pipe) is read
 * forward to its end. */
GGUFGUARD_API ggufguard_status ggufguard_validate_fd(int fd, const ggufguard_policy* policy, ggufguard_report** out);
/* Validates `size` bytes at `data`. The report borrows them: they must stay
 * valid and unchanged until the report is freed. */
GGUFGUARD_API ggufguard_status ggufguard_validate_buffer(const void* data, size_t size,
                                                         const ggufguard_policy* policy, ggufguard_report** out);
/* Validates the header of a file of `file_size` bytes from its first `size`
 * bytes: an HTTP range request (`curl -r 0-N`), a partial download. As
 * `ggufguard validate --header-only --file-size`: the rules that need only
 * the file's size run too (every tensor inside the file, the end of the
 * file); the data section is not read, so its zero checks pass unread and the
 * report says it covers the header only (ggufguard_report_header_only). The
 * report keeps its own copy of the header; `data` may be freed at once.
 * GGUFGUARD_ERR_IO, with the reason in ggufguard_last_error, when the bytes
 * end inside the header (the message says how many it needs: fetch a longer
 * prefix) or when `size` exceeds `file_size`. A mapping made from such a
 * report checks the file's size, not its identity, as for a buffer's. */
GGUFGUARD_API ggufguard_status ggufguard_validate_prefix(const void* data, size_t size, uint64_t file_size,
                                                         const ggufguard_policy* policy, ggufguard_report** out);
/* The same three, then every tensor's data checked as llama.cpp's
 * ggml_validate_row_data checks it (`ggufguard validate --deep`): NaN and
 * infinities in F32/F16/BF16/F64 data and in the scales of every quantized
 * block. Non-finite values are findings (GG6009, an error under the built-in
 * policies) that name the tensor, the element or block and its byte offset;
 * the policy's limits.max_deep_bytes bounds how much is read. The check runs
 * once the header parsed, on `jobs` threads (0: one per core; a descriptor
 * that is not a regular file is checked as it streams, in the calling
 * thread); more than 1024 is GGUFGUARD_ERR_INVALID_ARGUMENT. It reads every
 * byte of tensor data, where the functions above read the header alone
 * (docs/performance.md has the cost). The ggufguard_report_deep_* getters
 * below give the totals. */
GGUFGUARD_API ggufguard_status ggufguard_validate_path_deep(const char* path, const ggufguard_policy* policy,
                                                            uint32_t jobs, ggufguard_report** out);
GGUFGUARD_API ggufguard_status ggufguard_validate_fd_deep(int fd, const ggufguard_policy* policy, uint32_t jobs,
                                                          ggufguard_report** out);
/* Checks the data in place (the report borrows the bytes, as above). */
GGUFGUARD_API ggufguard_status ggufguard_validate_buffer_deep(const void* data, size_t size,
                                                              const ggufguard_policy* policy, uint32_t jobs,
                                                              ggufguard_report** out);
GGUFGUARD_API void ggufguard_report_free(ggufguard_report* report);

/* 1 when the file is valid under the policy (no finding of error severity),
 * else 0 (also for NULL). Only a valid report can have a trusted tensor table
 * (ggufguard_report_tensor_table_trusted). */
GGUFGUARD_API int ggufguard_report_valid(const ggufguard_report* report);
GGUFGUARD_API uint64_t ggufguard_report_file_size(const ggufguard_report* report);
/* 1 when the report covers the header only (ggufguard_validate_prefix): its
 * validity then says nothing of the data section's bytes. 0 otherwise. */
GGUFGUARD_API int ggufguard_report_header_only(const ggufguard_report* report);
/* The gatekeeper's answer, a ggufguard_verdict (GGUFGUARD_VERDICT_INVALID
 * for NULL). ggufguard_report_valid() is 1 for a header-only report with no
 * error; its verdict is GGUFGUARD_VERDICT_INCONCLUSIVE: accept a file only on
 * GGUFGUARD_VERDICT_VALID. */
GGUFGUARD_API int ggufguard_report_verdict(const ggufguard_report* report);
/* What the verdict does not cover, one human-readable item each (0 items for
 * a whole file); an item may quote a path: escape before display. NULL past
 * the end. The string lives as long as the report. */
GGUFGUARD_API size_t ggufguard_report_not_checked_count(const ggufguard_report* report);
GGUFGUARD_API const char* ggufguard_report_not_checked_at(const ggufguard_report* report, size_t index);
/* The GGUF version in the file's header (0 if it was not read). */
GGUFGUARD_API uint32_t ggufguard_report_gguf_version(const ggufguard_report* report);
/* 1 when the file is big-endian (GG2005, info: a valid file may be), else 0.
 * The metadata getters decode its values to the host's order; tensor data is
 * not converted: the mapping hands out the file's bytes as they are, and the
 * deep check reads values in the file's order. A little-endian loader must
 * refuse such a file or swap every element itself. */
GGUFGUARD_API int ggufguard_report_big_endian(const ggufguard_report* report);

typedef struct ggufguard_finding {
  const char* rule;    /* "GG3011" */
  const char* name;    /* "duplicate-key" */
  int severity;        /* ggufguard_severity, after the policy's overrides */
  uint64_t offset;     /* byte offset in the file where the finding fires */
  const char* message; /* may quote bytes of the file: escape before display */
} ggufguard_finding;

/* Findings listed (each rule lists at most the policy's limit), by offset. */
GGUFGUARD_API size_t ggufguard_finding_count(const ggufguard_report* report);
GGUFGUARD_API ggufguard_status ggufguard_finding_at(const ggufguard_report* report, size_t index,
                                                    ggufguard_finding* out);
/* Findings counted but not listed, past each rule's limit (all rules
 * together; they count toward validity as the listed ones do). */
GGUFGUARD_API uint64_t ggufguard_report_findings_suppressed(const ggufguard_report* report);

/* What each runtime would do with the file (docs/runtimes.md): every runtime
 * under a policy that names no profile, the runtimes it names otherwise
 * (a policy JSON's "profile": "vllm" or ["ollama", "candle"], or "all"). */
typedef struct ggufguard_runtime_verdict {
  const char* runtime;   /* "llama.cpp", "ollama", "vllm", "mistral.rs", "candle" */
  const char* verdict;   /* "loads", "refuses", "hangs", "crashes", or "inconclusive" (loads as far as was read) */
  int required;          /* 1 when the policy names the runtime: a refusal is then an error finding too */
  const char* rule;      /* the rule the verdict rests on ("GG9212"), or NULL when it loads */
  uint64_t offset;       /* where that rule fired; 0 when it loads */
  const char* reason;    /* what the runtime would say; "" when it loads; may quote escaped file bytes */
  const char* judged_at; /* the sources and commits the verdict is judged from */
} ggufguard_runtime_verdict;
GGUFGUARD_API size_t ggufguard_runtime_count(const ggufguard_report* report);
GGUFGUARD_API ggufguard_status ggufguard_runtime_at(const ggufguard_report* report, size_t index,
                                                    ggufguard_runtime_verdict* out);

/* ---- The deep check's results (reports of ggufguard_validate_*_deep) ---- */

/* 1 when the tensor data was checked (a *_deep validation whose header
 * parsed), else 0; the getters below then return 0 and no tensors. */
GGUFGUARD_API int ggufguard_report_deep_ran(const ggufguard_report* report);
GGUFGUARD_API uint64_t ggufguard_report_deep_checked_tensors(const ggufguard_report* report);
GGUFGUARD_API uint64_t ggufguard_report_deep_checked_bytes(const ggufguard_report* report);
/* Non-finite values and scales in all, listed as findings or not. */
GGUFGUARD_API uint64_t ggufguard_report_deep_bad_values(const ggufguard_report* report);
/* Data not checked: past limits.max_deep_bytes, of a type ggml refuses
 * (Q8_1), shared by overlapping tensors, or cut by the end of the file. */
GGUFGUARD_API uint64_t ggufguard_report_deep_unchecked_bytes(const ggufguard_report* report);

typedef struct ggufguard_deep_tensor {
  const char* name;       /* NUL-terminated copy of the name (any bytes in an invalid file) */
  size_t name_length;     /* bytes of the name */
  size_t tensor;          /* its index in the file's tensor infos (as for ggufguard_tensor_at) */
  uint32_t ggml_type;     /* ggml type id */
  uint64_t checked_bytes; /* of its data */
  uint64_t bad_values;
} ggufguard_deep_tensor;

/* Per checked tensor: those with bad values first, then the others, each in
 * file order; at most the policy's max_list_entries, the rest counted by
 * ggufguard_report_deep_tensors_suppressed. */
GGUFGUARD_API size_t ggufguard_deep_tensor_count(const ggufguard_report* report);
GGUFGUARD_API ggufguard_status ggufguard_deep_tensor_at(const ggufguard_report* report, size_t index,
                                                        ggufguard_deep_tensor* out);
GGUFGUARD_API uint64_t ggufguard_report_deep_tensors_suppressed(const ggufguard_report* report);

/* ---- The trusted tensor table. Every tensor lies inside the data section
 * and the file, aligned, no two sharing a byte (a tensor of no bytes may
 * point anywhere in the data section), its size computed without overflow.
 * Nothing else is promised of it: a policy that disables zero-dim, for
 * one, may hand out a tensor with an ne of 0, which ggml divides by. These are checked again when the report is made, whatever the
 * policy did with the rules that report them: a policy that disables or
 * downgrades tensor-overlap, tensor-out-of-bounds, ... may make the file
 * valid, but then no table is handed out. Reports without a trusted table
 * (every invalid one) have ggufguard_tensor_count 0, and ggufguard_tensor_at
 * returns GGUFGUARD_ERR_NOT_VALID with the reason in ggufguard_last_error.
 * The values are copies: nothing is read from the validated bytes again.
 * ---- */

/* 1 when the report hands out its tensor table, else 0 (also for NULL). */
GGUFGUARD_API int ggufguard_report_tensor_table_trusted(const ggufguard_report* report);

typedef struct ggufguard_tensor {
  const char* name;   /* NUL-terminated copy of the name */
  size_t name_length; /* bytes of the name */
  uint32_t ggml_type; /* ggml type id (GGML_TYPE_F32 = 0, ...) */
  uint32_t n_dims;    /* 0..4 (0: a scalar, one element, as ggml reads it) */
  uint64_t ne[4];     /* elements per dimension; 1 past n_dims */
  uint64_t offset;    /* absolute file offset of the data */
  uint64_t size;      /* bytes of the data */
} ggufguard_tensor;

GGUFGUARD_API size_t ggufguard_tensor_count(const ggufguard_report* report);
GGUFGUARD_API ggufguard_status ggufguard_tensor_at(const ggufguard_report* report, size_t index,
                                                   ggufguard_tensor* out);

/* ---- Metadata ----
 * Keys are NUL-terminated; where a file repeats a key (an invalid file),
 * the first one counts. Strings come back as a pointer and a length, not
 * NUL-terminated, and may hold any bytes in an invalid file. */

GGUFGUARD_API size_t ggufguard_kv_count(const ggufguard_report* report);
/* The index-th key in file order, with its value type. */
GGUFGUARD_API ggufguard_status ggufguard_kv_at(const ggufguard_report* report, size_t index, const char** key,
                                               size_t* key_length, int* type);
/* The value type of `key` (a ggufguard_value_type). */
GGUFGUARD_API ggufguard_status ggufguard_get_type(const ggufguard_report* report, const char* key, int* type);
GGUFGUARD_API ggufguard_status ggufguard_get_string(const ggufguard_report* report, const char* key,
                                                    const char** data, size_t* length);
/* Any integer type, or bool (0/1); GGUFGUARD_ERR_RANGE if it does not fit. */
GGUFGUARD_API ggufguard_status ggufguard_get_int64(const ggufguard_report* report, const char* key, int64_t* out);
GGUFGUARD_API ggufguard_status ggufguard_get_uint64(const ggufguard_report* report, const char* key, uint64_t* out);
/* FLOAT32 or FLOAT64. */
GGUFGUARD_API ggufguard_status ggufguard_get_float64(const ggufguard_report* report, const char* key, double* out);
GGUFGUARD_API ggufguard_status ggufguard_get_bool(const ggufguard_report* report, const char* key, int* out);

/* An array's element type and count. */
GGUFGUARD_API ggufguard_status ggufguard_get_array(const ggufguard_report* report, const char* key,
                                                   int* element_type, uint64_t* count);
/* The index-th element, with the same type rules as the scalar getters.
 * Elements of nested arrays are not readable (GGUFGUARD_ERR_TYPE). */
GGUFGUARD_API ggufguard_status ggufguard_get_array_string(const ggufguard_report* report, const char* key,
                                                          uint64_t index, const char** data, size_t* length);
GGUFGUARD_API ggufguard_status ggufguard_get_array_int64(const ggufguard_report* report, const char* key,
                                                         uint64_t index, int64_t* out);
GGUFGUARD_API ggufguard_status ggufguard_get_array_uint64(const ggufguard_report* report, const char* key,
                                                          uint64_t index, uint64_t* out);
GGUFGUARD_API ggufguard_status ggufguard_get_array_float64(const ggufguard_report* report, const char* key,
                                                           uint64_t index, double* out);
GGUFGUARD_API ggufguard_status ggufguard_get_array_bool(const ggufguard_report* report, const char* key,
                                                        uint64_t index, int* out);

/* ---- Mapping: tensor data through the validated table only ---- */

/* Maps the file at `path` read-only for the tensors of `report`. Refuses a
 * report without a trusted tensor table (GGUFGUARD_ERR_NOT_VALID), and a file whose size
 * differs from the validated one or, for a report from a path or a
 * descriptor, that is another file (GGUFGUARD_ERR_CHANGED). The mapping keeps
 * its own copy of the table: the report may be freed first. The file must
 * not be written to while it is mapped. */
GGUFGUARD_API ggufguard_status ggufguard_map_path(const ggufguard_report* report, const char* path,
                                                  ggufguard_mapping** out);
/* The same for an open descriptor, which stays the caller's. */
GGUFGUARD_API ggufguard_status ggufguard_map_fd(const ggufguard_report* report, int fd, ggufguard_mapping** out);
GGUFGUARD_API void ggufguard_mapping_free(ggufguard_mapping* mapping);

GGUFGUARD_API size_t ggufguard_mapping_tensor_count(const ggufguard_mapping* mapping);
/* The index-th tensor's data (same index as ggufguard_tensor_at); a tensor
 * of size 0 gives a non-NULL pointer to no bytes. */
GGUFGUARD_API ggufguard_status ggufguard_mapping_tensor_data(const ggufguard_mapping* mapping, size_t index,
                                                             const void** data, uint64_t* size);

#ifdef __cplusplus
}
#endif

#endif /* GGUFGUARD_GGUFGUARD_H_ */
