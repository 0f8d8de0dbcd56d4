// template_fingerprint: the normal form of each chat template file named
// (src/ggufguard/template/fingerprint.h), one JSON line per file, for
// scripts/gen_template_table.py, which makes the upstream table from it.
// The table's hashes are computed here, by the code that computes them at
// validation time, so that the two cannot drift apart.
//
//   template_fingerprint FILE...
//   {"file": "...", "digest": "32 hex", "segments": [["16 hex", kind, bytes], ...], "sketch": [n, ...],
//    "family": "..."}
//
// `kind` is SegmentKindByte(); `bytes` the segment's length in the template;
// `family` what TemplateFamily() reads in the template's markers.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "absl/strings/str_format.h"
#include "ggufguard/provenance/family.h"
#include "ggufguard/template/fingerprint.h"

namespace {

std::string JsonString(std::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(static_cast<char>(c));
    } else if (c < 0x20) {
      out += absl::StrFormat("\\u%04x", c);
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
  return out + "\"";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: template_fingerprint FILE...\n";
    return 2;
  }
  for (int i = 1; i < argc; ++i) {
    std::ifstream in(argv[i], std::ios::binary);
    if (!in) {
      std::cerr << "template_fingerprint: cannot read " << argv[i] << "\n";
      return 1;
    }
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string tmpl = ss.str();
    const ggufguard::NormalForm form = ggufguard::NormalizeTemplate(tmpl);
    std::string line = "{\"file\": " + JsonString(argv[i]) + ", \"digest\": \"";
    for (uint8_t b : form.Digest()) line += absl::StrFormat("%02x", b);
    line += "\", \"segments\": [";
    const std::vector<uint64_t> hashes = form.SegmentHashes();
    for (size_t k = 0; k < form.segments.size(); ++k) {
      const ggufguard::TemplateSegment& seg = form.segments[k];
      line += absl::StrFormat("%s[\"%016x\", %d, %d]", k ? ", " : "", hashes[k],
                              ggufguard::SegmentKindByte(tmpl, seg), seg.length);
    }
    line += "], \"sketch\": [";
    const std::vector<uint32_t> sketch = ggufguard::SegmentSketch(hashes);
    for (size_t k = 0; k < sketch.size(); ++k) line += absl::StrFormat("%s%d", k ? ", " : "", sketch[k]);
    line += "], \"family\": " + JsonString(ggufguard::TemplateFamily(tmpl)) + "}\n";
    std::cout << line;
  }
  return 0;
}
