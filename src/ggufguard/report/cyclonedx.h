// --format cyclonedx: a CycloneDX 1.6 ML-BOM of the run. Each model file is
// a component of type machine-learning-model with its SHA-256 (when hashed),
// its general.* provenance (name, organization as manufacturer, license,
// base models as pedigree ancestors, source URLs as properties), its
// architecture in the model card, and its size, quantization, tensor types
// and chat-template digests as properties ("gguf:*", "ggufguard:*"); each
// finding is a vulnerability affecting the component (waived ones carry
// the reason as their analysis). Every string from a file is escaped for
// display. No timestamp and no random serial number: the same files give
// the same BOM.
#ifndef GGUFGUARD_REPORT_CYCLONEDX_H_
#define GGUFGUARD_REPORT_CYCLONEDX_H_

#include <memory>
#include <ostream>

#include "ggufguard/report/render.h"

namespace ggufguard {

// Components and vulnerabilities are held until Finish (a BOM is one
// document); each is bounded by the policy's list limits.
std::unique_ptr<ReportWriter> MakeCycloneDxWriter(std::ostream& out);

}  // namespace ggufguard

#endif  // GGUFGUARD_REPORT_CYCLONEDX_H_
