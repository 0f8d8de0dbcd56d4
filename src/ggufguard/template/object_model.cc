#include "ggufguard/template/object_model.h"

#include <string_view>
#include <vector>

namespace ggufguard::jinja::analysis {
namespace {

// Attribute names a root may use, and what using them gives.
struct RootRule {
  std::string_view root;
  std::vector<std::string_view> attrs;  // empty: none; {"*"}: any name a namespace owns
};
const std::vector<RootRule>& RootRules() {
  static const std::vector<RootRule> kRules = {
      {"loop", {"index", "index0", "revindex", "revindex0", "first", "last", "length", "cycle", "depth", "depth0",
                "previtem", "nextitem", "changed"}},
      {"cycler()", {"next", "current", "reset"}},
      {"namespace()", {"*"}},  // any name the namespace owns (NamespaceOwnsAttribute)
  };
  return kRules;
}

}  // namespace

bool RootAllows(std::string_view root, std::string_view attr) {
  for (const RootRule& r : RootRules()) {
    if (r.root != root) continue;
    for (std::string_view a : r.attrs) {
      if (a == attr || (a == "*" && NamespaceOwnsAttribute(attr))) return true;
    }
  }
  return false;
}

bool IsDunderLike(std::string_view s) {
  return s.size() >= 3 && s.starts_with("__") && s.find_first_not_of('_') != std::string_view::npos;
}

bool NamespaceOwnsAttribute(std::string_view attr) {
  return !IsDunderLike(attr) && !attr.starts_with("_Namespace__") && !attr.empty();
}


}  // namespace ggufguard::jinja::analysis
