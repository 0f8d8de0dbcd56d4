// SARIF 2.1.0 output, for code-scanning dashboards (GitHub code scanning,
// Azure DevOps, VS Code's SARIF viewer): one run; every rule in
// tool.driver.rules with its level under the policy in use; one result per
// listed finding, located by byte offset in the file.
#ifndef GGUFGUARD_REPORT_SARIF_H_
#define GGUFGUARD_REPORT_SARIF_H_

#include <string>
#include <string_view>
#include <vector>

#include "ggufguard/report/render.h"
#include "ggufguard/findings/policy.h"

namespace ggufguard {

// TODO-for-maintainer: OWNER is a placeholder until the repository is
// published (fuzz/oss-fuzz/README.md lists every such place).
inline constexpr std::string_view kInformationUri = "https://github.com/OWNER/ggufguard";
// Each rule's page, docs/rules/GGnnnn.md, as published.
std::string RuleHelpUri(RuleId id);

std::string RenderSarif(const std::vector<FileOutcome>& outcomes, const Policy& policy);
// RenderSarif's document, written as it goes (results per file at once).
std::unique_ptr<ReportWriter> MakeSarifWriter(std::ostream& out, const Policy& policy);

}  // namespace ggufguard

#endif  // GGUFGUARD_REPORT_SARIF_H_
