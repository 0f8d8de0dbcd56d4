// How large a value of a chat template can get at render time, for the
// render-bomb checks (GG8014): the size model of the template analyser.
//
// An Extent holds upper bounds over every path the template may take, in
// which each value from the request counts as one unit: a message's content
// or the length of `messages` is bounded by the request however long it is,
// so the bounds measure what the template's own constants multiply it by.
// `range(messages|length * 1000)` is 1000 per unit of request, `'a' * 10**9`
// is 10^9 bytes. All arithmetic saturates at kHuge: a bound never overflows
// and never comes back down.
//
// Growth that compounds (a string that doubles in every pass of a loop, or
// at every level of a recursion) is followed by the copies of the carried
// state a value holds: `ns.s ~ ns.s` read in a loop pass holds two copies of
// ns.s as it was when the pass began, `ns.s ~ m.content` one. One pass is an
// affine map of the carried sizes (x' <= M x + c, `Growth`); a loop of N
// passes is that map to the power N, and the growth is geometric exactly when
// a strongly connected part of M is more than a cycle of single copies.
// Where paths meet (`ns.a if c else ns.b`, two call sites) a value is one
// way or the other, not both: `total` keeps the copies one path holds, and
// Growth keeps each way of setting a state apart, so that a join never reads
// as a sum.
#ifndef GGUFGUARD_TEMPLATE_EXTENT_H_
#define GGUFGUARD_TEMPLATE_EXTENT_H_

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace ggufguard::jinja::analysis {

inline constexpr double kHuge = 1e300;

inline double SatAdd(double a, double b) {
  const double s = a + b;
  return s < kHuge ? s : kHuge;  // NaN (never made here) would also saturate
}
inline double SatMul(double a, double b) {
  if (a <= 0 || b <= 0) return 0;
  return a < kHuge / b ? a * b : kHuge;
}
// |n| as a bound, for a number literal.
inline double Magnitude(double n) { return std::isfinite(n) ? std::fabs(n) : kHuge; }

// `n` copies of carried state `slot` (Interpreter::SlotFor: a namespace
// attribute as a loop pass began, or a macro's parameter as its body began).
struct Copies {
  uint32_t slot;
  double n;
};

struct Extent {
  double bound = 1;    // bytes of a string, items of a container, |n| of a number
  double element = 1;  // a container's: the bound of one of its items
  // size(value) <= sum(copies.n * size(copies.slot)) + what constants add.
  std::vector<Copies> copies;
  // The most copies one path holds (a join of ns.a and ns.b holds one);
  // -1: their sum, as when nothing joined them.
  double total = -1;
  // The loop pass in which the namespace attribute holding this value was
  // set (0: none); read in another pass, the value is that pass's carried
  // state, not a copy count of its own (Interpreter::CarriedRead).
  uint32_t set_pass = 0;
};

// Copies of `slot` in `e`, and the most copies one path of `e` holds.
double CopiesOf(const Extent& e, uint32_t slot);
double PathTotal(const Extent& e);
// `into`'s copies += `from`'s * `times`, slot by slot (and its path total).
void AddCopies(Extent* into, const Extent& from, double times);
// Both side by side (concatenation, a list of both): bounds and copies add.
Extent SumOf(const Extent& a, const Extent& b);
// One or the other (a branch, a join): the larger bound, the larger copies.
Extent EitherOf(const Extent& a, const Extent& b);
// `e` made `factor` times larger, copies and all (an escape, a case map).
Extent Scaled(const Extent& e, double factor);
// `seq` repeated `count` times (`'ab' * n`, `[x] * n`): a product, whose
// copies of each side's state are scaled by the other side's bound (x * y
// grows at least as x times y's bound: x * x of a carried x at 2 doubles).
Extent RepeatedOf(const Extent& seq, const Extent& count);

// One pass of a loop body (or one level of recursion) over the n states it
// carries: x' <= M x + c, M >= 0, where each state may be set one of several
// ways (a branch, a call site), and M(i,j) is the most any way of setting i
// copies j. States the pass only reads keep their value (Keep).
class Growth {
 public:
  explicit Growth(size_t n);
  size_t size() const { return n_; }
  double m(size_t i, size_t j) const { return m_[i * n_ + j]; }
  // One way of setting state i: copies of other states, at most `total` on
  // one path (a join inside it). Past kMaxWays, ways merge into one.
  void AddWay(size_t i, const std::vector<std::pair<size_t, double>>& copies, double total);
  void Keep(size_t i) { AddWay(i, {{i, 1}}, 1); }
  void RaiseConstant(size_t i, double bytes);  // c(i) = max(c(i), bytes)
  // A state that grows by a constant factor per pass, or -1: a strongly
  // connected part of M holds a coefficient above 1, or its states copy
  // more of it than there are states (two cycles through one state add up:
  // x' = x + y, y' = x), counting for each state the most any one way of
  // setting it copies (so x' = x or y, y' = x or y stays where it is).
  int GeometricState() const;
  // The map raised to `passes` passes (by squaring, saturating; `passes` is
  // rounded down, at most 2^62): the bounds it leaves from `start`, and
  // M^passes, the copies of each start state it leaves.
  struct Raised {
    size_t n;
    std::vector<double> a;  // (n+1) x (n+1): [[M^p, c_p], [0, 1]]
    std::vector<double> After(const std::vector<double>& start) const;
    double Copies(size_t i, size_t j) const { return a[i * (n + 1) + j]; }
  };
  Raised Raise(double passes) const;
  std::vector<double> After(double passes, const std::vector<double>& start) const {
    return Raise(passes).After(start);
  }
  std::vector<double> Power(double passes) const;

 private:
  struct Way {
    std::vector<std::pair<size_t, double>> copies;
    double total;
  };
  static constexpr size_t kMaxWays = 8;
  size_t n_;
  std::vector<double> m_, c_;
  std::vector<std::vector<Way>> ways_;
};

}  // namespace ggufguard::jinja::analysis

#endif  // GGUFGUARD_TEMPLATE_EXTENT_H_
