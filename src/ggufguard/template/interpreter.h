// The interpreter of the template analyser: walks statements and
// expressions over the value lattice (value.h), keeps the scopes (one map
// and a journal that undoes scopes and branches), and reports what it
// finds. Each statement is visited a bounded number of times, within a
// budget proportional to the template's size (see analyser.h).
//
// Its member functions live in four files by the part of the language they
// interpret: interpreter.cc (findings, scopes, statements, macros),
// expressions.cc (names, containers, attributes, operators), calls.cc
// (calls, methods, formatting, filters) and bombs.cc (what a render costs:
// the limits, loop-carried growth, macro costs, fan-out recursion).
#ifndef GGUFGUARD_TEMPLATE_INTERPRETER_H_
#define GGUFGUARD_TEMPLATE_INTERPRETER_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "ggufguard/template/ast.h"
#include "ggufguard/template/recorder.h"
#include "ggufguard/template/scan.h"
#include "ggufguard/template/value.h"

namespace ggufguard::jinja::analysis {

using Kind = TemplateIssueKind;

constexpr size_t kMaxListed = 32;     // roots and folded names reported
constexpr size_t kMaxExprChars = 80;  // expression text in a finding
constexpr int kMacroRounds = 3;       // re-analyses with call-site arguments
constexpr int kLoopPasses = 3;        // passes over a loop body before what still changes widens

// The slot of the environment that joins every value a namespace attribute
// was set to (no variable's name is empty, so no NsKey is this).
constexpr char kAnyNamespaceAttribute[] = "\x01";

class Interpreter {
 public:
  Interpreter(const Program& p, std::string_view src, const TemplateScanOptions& o, TemplateScan* out);

  void Run();

 private:
  // --- findings ---

  std::string ExprText(NodeId id) const;
  size_t Begin(NodeId id) const;
  size_t NameOffset(NodeId id) const;

  void Emit(Kind kind, size_t offset, std::string detail);
  void NoteRoot(std::string_view name);
  void NoteFolded(std::string_view name);

  void CheckName(const Value& name, const Value& obj, NodeId at, bool attribute);

  void CheckAttributePath(const Value& path, const Value& obj, NodeId at);

  // --- what a render costs (bombs.cc) ---

  void Bomb(NodeId at, std::string what);
  void CheckOutputSize(double size, NodeId at);
  void CheckCount(double count, NodeId at, std::string_view what);
  static std::string FormatCount(double n);
  // Bytes `v` prints as (a container: its items with their separators).
  static double Bytes(const Value& v);
  // Bytes one of a container's items prints as (its extent's element; for
  // numbers, the digits of that bound).
  static double ItemBytes(const Value& container);
  // `v`'s extent as printed (`~`, a format field): Bytes(v), with its copies.
  static Extent Printed(const Value& v);
  // Passes of the enclosing loops of this body (macro-local), per unit of request.
  double Passes() const;
  // An output statement's `printed` form, written in each pass of the
  // enclosing loops (or captured by the {% set %} block around it): the
  // expression `expr`, or text at `offset` (expr kNoNode).
  void NoteOutput(const Extent& printed, size_t offset, NodeId expr);
  // The slot that stands for carried state `key` in frame `frame` (a loop, or
  // a macro for its parameters), and its name for messages.
  uint32_t SlotFor(uint32_t frame, const std::string& key);
  std::string SlotName(uint32_t slot) const;
  // A namespace attribute read in a loop pass: set in this pass, it holds
  // what it was set to; otherwise it is the state the pass began with.
  Value CarriedRead(const std::string& key, Value v);
  // Each macro parameter stands for itself as the body begins (copies for
  // the recursion's growth).
  void MarkParameters(NodeId macro);
  // What For() gathers over a loop's passes about the state they carry.
  struct LoopGrowth {
    uint32_t frame = 0;          // the loop's frame (its slots)
    NodeId at = kNoNode;         // the loop's iterable, where no setter is known
    double passes = 1;           // per unit of request
    bool request_sized = false;  // the request sizes the passes: no exact count
    struct Way {  // what one pass set a slot to: copies of this loop's slots
      std::vector<Copies> copies;
      double total;
    };
    std::vector<uint32_t> set;   // slots set in some pass, in order
    absl::flat_hash_map<uint32_t, std::vector<Way>> rows;  // set -> each pass's way
    absl::flat_hash_map<uint32_t, double> constant;  // set -> bytes beyond its copies
    absl::flat_hash_map<uint32_t, Value> entry;      // set -> what it held as the loop began
    absl::flat_hash_map<uint32_t, Extent> outer;     // set -> other frames' state it holds
  };
  struct Touched;
  void RecordPass(LoopGrowth* g, const std::vector<Touched>& touched);
  void FinishLoop(LoopGrowth* g);
  // The affine map of one pass from what RecordPass gathered: the states
  // (the set ones first, `set_count` of them) and their bounds as it began.
  Growth PassGrowth(LoopGrowth* g, std::vector<uint32_t>* states, size_t* set_count, std::vector<double>* start);
  // One call of a macro's body as a pass: what it does to the namespace
  // attributes and lists it reads (a macro that doubles ns.s at every call).
  void NoteCallGrowth(NodeId macro, uint32_t frame, size_t journal_pos);
  // A call of `macro` from here: its cost times the enclosing passes, and the
  // edge the recursion checks read.
  Value MacroCall(NodeId macro, const Expr& call, const std::vector<Value>& args, NodeId id);
  bool DescendsIntoData(NodeId arg) const;
  // A filter's or method's result `r` with how large it can get, from its
  // input and arguments (joins, replacements, widths, escapes), checked
  // against the limits; any other is no larger than its input.
  Value Sized(Value r, const Value& base, std::string_view name, const Expr& e, const std::vector<Value>& args,
              NodeId id, bool method);
  void CheckFanOut(const absl::flat_hash_map<NodeId, int>& components);

  // --- environment: one map, and a journal to undo scopes and branches ---

  struct Entry {
    std::string key;
    bool had;
    Value old;
    bool shared;  // a namespace attribute: outlives the scope that set it
  };

  // A position in the journal that a scope or branch will roll back to or
  // read from, held while it is in use: Assign journals only while one is.
  struct JournalMark {
    Interpreter* in;
    size_t pos;
    explicit JournalMark(Interpreter* interpreter) : in(interpreter), pos(interpreter->journal_.size()) {
      ++in->open_marks_;
    }
    ~JournalMark() { --in->open_marks_; }
    JournalMark(const JournalMark&) = delete;
    JournalMark& operator=(const JournalMark&) = delete;
    operator size_t() const { return pos; }  // NOLINT: a position, where one is asked for
  };

  const Value* Lookup(const std::string& key) const;
  void Assign(const std::string& key, Value v, bool shared = false);
  void Undo(Entry& e);
  void RollbackAll(size_t pos);
  void RollbackLocals(size_t pos);
  // Every key the journal touched since `pos`, once: its value now, and the
  // value it had at `pos` (kept by its first entry). One pass, so a loop
  // body that sets a hundred thousand attributes costs that, not its square.
  struct Touched {
    std::string key;
    bool set_now;
    Value now;
    bool had_before;
    Value before;
  };
  std::vector<Touched> TouchedSince(size_t pos) const;
  // The same for the entries that outlive their scope (namespace
  // attributes, lists mutated in place) alone.
  std::vector<Touched> SharedTouchedSince(size_t pos) const;
  static std::string NsKey(std::string_view var, std::string_view attr);

  // --- statements ---

  struct CondScope {  // code that may not run: calls under it are guarded
    Interpreter* a;
    bool on;
    CondScope(Interpreter* an, bool conditional) : a(an), on(conditional) { a->cond_depth_ += on; }
    ~CondScope() { a->cond_depth_ -= on; }
  };

  void Walk(std::span<const NodeId> body);

  void Statement(NodeId id);

  void If(const Stmt& s);

  Value ElementOf(const Value& v);

  Value WithUntrackedMutations(Value e) const;

  bool IsMacroParameter(std::string_view slot) const;

  Value ElementOfUnmutated(const Value& v);

  void BindTarget(NodeId target, const Value& v);

  void For(const Stmt& s);

  void CollectTargetNames(NodeId target, std::vector<std::string_view>* out);

  void AssignTarget(NodeId target, Value v, NodeId value_expr);

  Value BodyString(std::span<const NodeId> body);

  // --- macros ---

  void BindParams(const Stmt& s, std::vector<Value>* given);

  void AnalyseMacroBody(NodeId macro, std::vector<Value>* params);

  void RecordCall(NodeId macro, const Expr& call, const std::vector<Value>& args);

  // Late-bound globals: a macro reads a free name when it is called, so a
  // top-level set after a macro's definition reaches its body too.
  void NoteLateGlobal(NodeId target);
  void AnalyseMacrosWithLateGlobals();

  struct Edge {
    NodeId from = kNoNode, to = kNoNode;
    bool conditional = false;
    size_t offset = 0;
    double times = 1;      // calls per run of the caller's body (its loops' passes)
    bool descends = false;  // an argument is a part of the caller's data: depth bounded by the request
    int countdown = -1;    // f(n - step) to itself: the parameter counted down, and its step
    double step = 0;
    // Copies of the caller's parameters (slots) each argument holds, by the
    // callee's parameter index.
    std::vector<std::pair<uint32_t, Extent>> growth;
  };

  static absl::flat_hash_map<NodeId, int> Components(const std::vector<Edge>& edges, bool conditional_too);

  void ReportRecursion();

  // --- expressions ---

  Value Eval(NodeId id, const Value* filter_base = nullptr);

  Value Unbound(const std::string& name, bool shared) const;

  void Alias(const std::string& a, const std::string& b);

  std::string SlotOf(NodeId id) const;

  Value EvalName(const Expr& e, NodeId id);

  void ValueUse(const Value& v, NodeId id);
  // A call of macro `known`, or of a value that may be a macro the
  // analysis cannot name (known == kNoNode): any of value_macros_.
  Value CallThroughValue(const Expr& e, std::vector<Value> args, NodeId id, NodeId known = kNoNode);
  // A value that may hold a macro reaching where calls through it are not
  // followed (a namespace attribute, a method's argument, varargs): a
  // self-application the call graph cannot see.
  void MacroEscapes(const Value& v, NodeId at, std::string_view where);

  Value EvalContainer(const Expr& e);

  Value NamespaceAttribute(NodeId obj_expr, std::string_view attr);
  void NoteNamespaceValue(const Value& v);

  Value Attribute(const Value& obj, const Value& name, NodeId at, NodeId obj_expr, bool attribute);

  void ReachInto(const Value& obj, NodeId at);

  Value Subscript(const Value& obj, const Value& key, NodeId at, NodeId obj_expr);

  Value EvalConcat(const Expr& e, NodeId id);

  Value EvalBinary(const Expr& e, NodeId id);

  Value SizedComputed(double size, NodeId id);

  Value Multiply(const Value& a, const Value& b, NodeId id);

  // --- calls ---

  std::vector<Value> EvalArgs(const Expr& e);
  const Value* ArgValue(const Expr& e, const std::vector<Value>& vals, size_t index, std::string_view name) const;
  NodeId ArgExpr(const Expr& e, size_t index, std::string_view name) const;
  static double ExactOr(const Value* v, double dflt);

  Value EvalCall(const Expr& e, NodeId id);

  Value RecursiveLoopCall(const Expr& e, NodeId id);

  Value Range(const Expr& e, const std::vector<Value>& args, NodeId id);

  Value Method(const Value& obj, std::string_view m, const Expr& e, const std::vector<Value>& args, NodeId id,
               NodeId obj_expr, const Value& attr);

  Value EvalRootCall(const Value& fn, const std::vector<Value>& args);

  // --- formatting: printf style (% and |format) and str.format ---

  Value Format(const Value& fmt, std::vector<Value> args, NodeId id, bool percent);

  Value FormatMethod(const Value& fmt, const Expr& e, const std::vector<Value>& args, NodeId id);
  Value FormatMap(const Value& fmt, const Value* mapping, NodeId id);
  // str.format's fields over its arguments (`args`: all of them, for the
  // result's origin).
  Value FormatFields(const Value& fmt, const std::vector<Value>& positional,
                     const std::vector<std::pair<std::string_view, Value>>& named, const std::vector<Value>& args,
                     NodeId id);


  // --- filters ---

  Value EvalFilter(const Expr& e, NodeId id, const Value& base);
  Value FilterValue(const Expr& e, NodeId id, const Value& base, const std::vector<Value>& args);
  Value FoldedStringFilter(const Expr& e, NodeId id, const Value& base, const std::vector<Value>& args);
  static Value UnmodelledFilter(const Value& base);

  // --- behaviour (behaviour.cc): what reaches the output ---

  Facts FactsOf(NodeId id, uint32_t gate, int depth = 0);
  Facts AsText(NodeId id, uint32_t gate, int depth);
  Facts NameFacts(std::string_view name, uint32_t gate);
  Facts FieldFacts(NodeId obj_expr, const Facts& obj, std::string_view field, NodeId at, uint32_t gate);
  Facts Compare(const Facts& a, const Facts& b, NodeId a_expr, NodeId b_expr, NodeId at, bool membership);
  Facts LetterCase(const Facts& x, NodeId at);
  Facts Rewritten(const Facts& base, NodeId at, uint32_t gate, bool rewrite, bool forged);
  Facts ReplaceFacts(const Facts& base, NodeId old_expr, NodeId new_expr, NodeId at, uint32_t gate);
  bool BuildsHeaderOrToken(const Facts& built);
  void MarkWordCut(Facts* f, NodeId word) const;
  void FoldLiterals(Facts* f, const Value& v);
  Facts ArgsFacts(const Expr& e, uint32_t gate, int depth);
  bool MarkerPieces(NodeId id, int* pieces, int depth);
  Facts CallFacts(const Expr& e, NodeId id, uint32_t gate, int depth);
  Facts MacroCallFacts(const Expr& e, const std::vector<NodeId>& macros, uint32_t gate, int depth);
  Facts FilterFacts(const Expr& e, NodeId id, uint32_t gate, int depth);
  Facts BindingFacts(NodeId value_expr);
  std::string GuardKey(NodeId obj) const;
  struct RoleGuard {
    std::string key;  // the message object as written; empty: no guard
    uint8_t allowed = kAllRoles;  // the roles it picks (TurnBit bits)
    uint8_t excluded = 0;         // the roles it rules out
    bool not_first = false;
  };
  RoleGuard Guard(NodeId cond, bool negated, int depth);
  void GuardByIterable(NodeId iterable, NodeId target);
  uint8_t GuardedRoles(uint32_t gate, const std::string& key, bool* no_ls, uint8_t* excluded) const;
  uint32_t OpenGate(NodeId cond, bool negated);
  uint32_t OpenGateAt(uint32_t parent, NodeId cond, bool negated);
  bool CutChecked(uint32_t gate, double start);
  void RecordData(const Stmt& s);
  void RecordOutput(NodeId expr, const Value& v);
  void RecordMutation(NodeId expr);
  void FinishBehaviour();

  // Output under a gate while it lives (an if's branch, a loop's body).
  struct GateScope {
    Interpreter* in;
    uint32_t saved;
    GateScope(Interpreter* interpreter, NodeId cond, bool negated) : in(interpreter), saved(interpreter->gate_) {
      in->gate_ = in->OpenGate(cond, negated);
    }
    ~GateScope() { in->gate_ = saved; }
    GateScope(const GateScope&) = delete;
    GateScope& operator=(const GateScope&) = delete;
  };

  struct Loop {
    std::vector<std::string_view> targets;
    bool recursive = false;
    double passes = 1;   // this loop's passes per unit of request (the iterable's extent)
    double product = 1;  // passes of this and the enclosing loops (of this body)
    bool request_data = false;  // over the request's data: its targets are parts of it
    bool request_sized = false;  // no exact count: the request sizes its passes
    uint32_t frame = 0;  // for the slots of what its passes carry
    uint32_t pass = 0;   // the pass running now (CarriedRead)
  };
  // What one run of a body (the template, or a macro's) may cost, over the
  // passes of its loops: the deepest product of passes, and bytes written.
  struct Cost {
    double iterations = 1;
    double output = 0;
  };

  const Program& p_;
  std::string_view src_;
  const TemplateScanOptions& opts_;
  TemplateScan* out_;
  int64_t budget_;
  absl::flat_hash_set<uint64_t> seen_;
  absl::flat_hash_map<std::string, Value> vars_;
  std::vector<Entry> journal_;
  int open_marks_ = 0;  // JournalMarks alive
  absl::flat_hash_map<std::string_view, NodeId> macros_;
  // The macros the template names other than as a callee (`[handle_knobs]`,
  // `f(f)`), in definition order: the only macros a value can hold, so the
  // only ones a call through a value can reach. Past kMaxValueMacros they
  // are not followed one by one.
  static constexpr size_t kMaxValueMacros = 8;
  std::vector<NodeId> value_macros_;
  // Slots set from one another (`{% set b = a %}`), grouped, for mutations
  // through an alias (Alias()).
  static constexpr size_t kMaxAliasGroup = 16;
  static constexpr size_t kMaxAliasSlots = 4096;
  absl::flat_hash_map<std::string, uint32_t> alias_group_;
  std::vector<std::vector<std::string>> alias_groups_;
  // What mutations through receivers no slot names added (untracked_mutations_
  // once there is one): every loop's element may be it.
  bool untracked_mutations_ = false;
  Value untracked_mutation_;
  // What namespace attributes were set to through a name other than the one
  // the namespace was made as, by attribute name.
  absl::flat_hash_map<std::string, Value> untracked_namespace_attributes_;
  absl::flat_hash_map<NodeId, std::vector<Value>> call_params_;
  absl::flat_hash_map<NodeId, std::vector<Value>> pending_params_;
  std::vector<Edge> edges_;
  std::vector<Loop> loops_;
  NodeId current_macro_ = kNoNode;
  // Names set outside macros after a macro was defined, each joined over
  // every value it was set to (a macro reads the one at its call site);
  // macro_loop_depth_: the deepest loop a macro was defined in so far (-1:
  // none yet), as a macro sees its own loop's sets and the enclosing ones.
  int macro_loop_depth_ = -1;
  absl::flat_hash_map<std::string, Value> late_globals_;
  NodeId calling_ = kNoNode;
  int cond_depth_ = 0;
  size_t emitted_ = 0;
  // The size model's state (bombs.cc): carried-state slots by frame, the
  // namespace attribute's last setter (where a growth is reported), the
  // cost of the body being walked and of each macro.
  static constexpr size_t kMaxSlots = size_t{1} << 16;
  absl::flat_hash_map<uint32_t, absl::flat_hash_map<std::string, uint32_t>> slot_ids_;  // frame -> key -> slot
  std::vector<std::pair<uint32_t, std::string>> slots_;  // frame, key
  uint32_t next_frame_ = 1, next_pass_ = 1;
  absl::flat_hash_map<std::string, NodeId> setters_;
  Cost top_cost_;
  Cost* cost_ = &top_cost_;
  absl::flat_hash_map<NodeId, Cost> macro_costs_;
  // Macros whose bodies are being analysed: a call of one of them (a
  // recursion) has no cost yet, or costs would compound over the analyses;
  // recursion has its own checks (CheckFanOut).
  absl::flat_hash_set<NodeId> analysing_;
  // Macros whose every call grows a namespace attribute or list they read
  // geometrically: the growth of one call, and the state it grows.
  absl::flat_hash_map<NodeId, std::pair<Growth, std::string>> call_growth_;
  // Variables holding a list mutated in place (append, extend...): carried
  // from one loop pass to the next like a namespace attribute.
  absl::flat_hash_set<std::string> mutated_;
  // The {% set x %} block whose body is being walked: what its outputs make
  // x (their extents over the block's own loops' passes), not output.
  Extent* captured_ = nullptr;
  double capture_passes_ = 1;
  // The behaviour record (recorder.h), the gate output is under now, the
  // turn it falls in, and what the macros' output reads.
  Recorder rec_;
  uint32_t gate_ = 0;
  uint8_t turn_ = TurnBit(Role::kNone);
  absl::flat_hash_map<NodeId, uint32_t> macro_reads_, macro_trigger_;
  // The macros each call expression was last resolved to by the evaluation
  // (CallThroughValue), so its facts print what those macros print however
  // the callee was reached (`fs[0](x)`, `ns.f(x)`): one place decides.
  absl::flat_hash_map<NodeId, std::vector<NodeId>> call_macros_;
  bool system_handled_ = false, reads_messages_ = false;
  uint32_t system_guard_at_ = 0;  // the first condition on a system role + 1
};

}  // namespace ggufguard::jinja::analysis

#endif  // GGUFGUARD_TEMPLATE_INTERPRETER_H_
