// How the report shows each chat template's provenance and its comparison
// with sibling files (provenance/provenance.h, provenance/siblings.h): the
// JSON of docs/report.schema.json (templates[].provenance,
// templates[].siblings, sibling_files) and the lines `inspect` prints.
// Everything shown was computed by the rules under the policy; this only
// formats it.
#ifndef GGUFGUARD_REPORT_PROVENANCE_RENDER_H_
#define GGUFGUARD_REPORT_PROVENANCE_RENDER_H_

#include <string>

#include "nlohmann/json.hpp"
#include "ggufguard/rules/template_rules.h"

namespace ggufguard {

// templates[i].provenance, templates[i].siblings.
nlohmann::ordered_json ProvenanceJson(const TemplateDigest& digest, const TemplateDigests& all);
nlohmann::ordered_json SiblingComparisonsJson(const TemplateDigest& digest);
// The file's sibling_files.
nlohmann::ordered_json SiblingFilesJson(const TemplateDigests& all);

// inspect: a "chat templates:" section, one entry per listed template.
std::string InspectTemplates(const TemplateDigests& all);

}  // namespace ggufguard

#endif  // GGUFGUARD_REPORT_PROVENANCE_RENDER_H_
