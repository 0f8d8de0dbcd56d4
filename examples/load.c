/* A loader in C99 on ggufguard's C API: validate each file, refuse it with
 * the validator's findings unless its verdict is valid, else map it and walk every
 * tensor through the validated table (printing a CRC-32 of its bytes where a
 * real loader would hand them to its backend). It parses nothing itself.
 *
 *   load_c FILE.gguf...    exit 0 all loaded, 1 some refused, 2 an error */
#include <inttypes.h>
#include <stdio.h>

#include <ggufguard/ggufguard.h>

/* CRC-32 (IEEE, as zlib.crc32), bit by bit: small, and fast enough here. */
static uint32_t crc32_update(uint32_t crc, const unsigned char* p, uint64_t n) {
  uint64_t i;
  int k;
  crc = ~crc;
  for (i = 0; i < n; ++i) {
    crc ^= p[i];
    for (k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
  }
  return ~crc;
}

/* Findings may quote bytes of the file: never print them raw. */
static void print_escaped(const char* s) {
  for (; *s; ++s) {
    unsigned char c = (unsigned char)*s;
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      putchar(c);
    } else {
      printf("\\x%02x", c);
    }
  }
}

/* 0 loaded, 1 refused, 2 error. */
static int load(const char* path) {
  ggufguard_report* report = NULL;
  ggufguard_mapping* mapping = NULL;
  size_t i;
  /* [readme-c] */
  if (ggufguard_validate_path(path, NULL, &report) != GGUFGUARD_OK) {
    fprintf(stderr, "%s: %s\n", path, ggufguard_last_error());
    return 2;
  }
  /* Accept only a valid verdict: an inconclusive one (part of the file,
   * or of its split set, was not checked) is no pass. */
  if (ggufguard_report_verdict(report) != GGUFGUARD_VERDICT_VALID) {
    printf("%s: refused\n", path);
    for (i = 0; i < ggufguard_finding_count(report); ++i) {
      ggufguard_finding f;
      ggufguard_finding_at(report, i, &f);
      printf("  %s %s at %" PRIu64 ": ", f.rule, f.name, f.offset);
      print_escaped(f.message);
      printf("\n");
    }
    for (i = 0; i < ggufguard_report_not_checked_count(report); ++i) {
      printf("  not checked: ");
      print_escaped(ggufguard_report_not_checked_at(report, i));
      printf("\n");
    }
    ggufguard_report_free(report);
    return 1;
  }
  if (ggufguard_map_path(report, path, &mapping) != GGUFGUARD_OK) {
    fprintf(stderr, "%s: %s\n", path, ggufguard_last_error());
    ggufguard_report_free(report);
    return 2;
  }
  printf("%s: valid, %zu tensors\n", path, ggufguard_tensor_count(report));
  for (i = 0; i < ggufguard_tensor_count(report); ++i) {
    ggufguard_tensor t;
    const void* data;
    uint64_t size;
    ggufguard_tensor_at(report, i, &t);
    ggufguard_mapping_tensor_data(mapping, i, &data, &size);
    /* [/readme-c] */
    printf("  %s type=%" PRIu32 " ne=[%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "] offset=%" PRIu64
           " size=%" PRIu64 " crc32=%08" PRIx32 "\n",
           t.name, t.ggml_type, t.ne[0], t.ne[1], t.ne[2], t.ne[3], t.offset, size,
           crc32_update(0, (const unsigned char*)data, size));
  }
  ggufguard_mapping_free(mapping);
  ggufguard_report_free(report);
  return 0;
}

int main(int argc, char** argv) {
  int worst = 0;
  int i;
  if (argc < 2) {
    fprintf(stderr, "usage: %s FILE.gguf...  (ggufguard %s)\n", argv[0], ggufguard_version());
    return 2;
  }
  for (i = 1; i < argc; ++i) {
    int rc = load(argv[i]);
    if (rc > worst) worst = rc;
  }
  return worst;
}
