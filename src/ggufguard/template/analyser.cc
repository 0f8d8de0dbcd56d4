// Abstract interpretation of a Jinja2 template: the entry point. The
// analyser is four modules (docs/design.md, "The template analyser"):
//   value.h         the value lattice (Value, Join, Widen, origins);
//   python_str.h    Python's str methods on the strings it folds;
//   object_model.h  which names and attributes reach Python objects;
//   interpreter.h   statements, expressions, scopes and the visit budget.
#include "ggufguard/template/analyser.h"

#include "ggufguard/template/interpreter.h"

namespace ggufguard::jinja {

void Analyse(const Program& program, std::string_view source, const TemplateScanOptions& options, TemplateScan* out) {
  analysis::Interpreter(program, source, options, out).Run();
}

}  // namespace ggufguard::jinja
