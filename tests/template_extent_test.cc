// The size model of the template analyser (extent.h): saturating bounds,
// copies of carried state through sums, joins and products, and the affine
// growth of a loop pass: which growth is geometric, and how large N passes
// make what a loop carries.
#include "ggufguard/template/extent.h"

#include <gtest/gtest.h>

#include <vector>

namespace ggufguard::jinja::analysis {
namespace {

Extent Holding(uint32_t slot, double n, double bound) {
  Extent e;
  e.bound = bound;
  e.copies = {{slot, n}};
  return e;
}

TEST(TemplateExtentTest, BoundsSaturateAndNeverComeBack) {
  EXPECT_EQ(SatMul(1e200, 1e200), kHuge);
  EXPECT_EQ(SatAdd(kHuge, kHuge), kHuge);
  EXPECT_EQ(SatMul(0, kHuge), 0);
  EXPECT_EQ(SatMul(3, 4), 12);
  EXPECT_EQ(Magnitude(-5), 5);
}

TEST(TemplateExtentTest, SumsAddCopiesAndJoinsKeepOnePath) {
  const Extent a = Holding(0, 1, 10), b = Holding(1, 1, 20);
  const Extent both = SumOf(a, b);  // a ~ b
  EXPECT_EQ(both.bound, 30);
  EXPECT_EQ(CopiesOf(both, 0), 1);
  EXPECT_EQ(CopiesOf(both, 1), 1);
  EXPECT_EQ(PathTotal(both), 2);
  const Extent either = EitherOf(a, b);  // a if c else b: one of them
  EXPECT_EQ(either.bound, 20);
  EXPECT_EQ(CopiesOf(either, 0), 1);
  EXPECT_EQ(CopiesOf(either, 1), 1);
  EXPECT_EQ(PathTotal(either), 1);
  // A join concatenated with a third state holds two on one path.
  EXPECT_EQ(PathTotal(SumOf(either, Holding(2, 1, 5))), 2);
  // Doubling a value doubles its copies.
  EXPECT_EQ(CopiesOf(SumOf(a, a), 0), 2);
  EXPECT_EQ(CopiesOf(Scaled(a, 6), 0), 6);
}

TEST(TemplateExtentTest, ARepetitionScalesEachSideByTheOther) {
  Extent count;
  count.bound = 1000;
  const Extent r = RepeatedOf(Holding(0, 1, 2), count);  // s * 1000
  EXPECT_EQ(r.bound, 2000);
  EXPECT_EQ(CopiesOf(r, 0), 1000);
  // n * n of a carried n at 3 grows as n times 3.
  const Extent square = RepeatedOf(Holding(0, 1, 3), Holding(0, 1, 3));
  EXPECT_EQ(CopiesOf(square, 0), 6);
}

TEST(TemplateExtentTest, GrowthIsGeometricWhereACycleHoldsMoreThanOneCopy) {
  {
    Growth g(1);  // s = s ~ s
    g.AddWay(0, {{0, 2}}, 2);
    EXPECT_EQ(g.GeometricState(), 0);
  }
  {
    Growth g(2);  // s = s ~ sep, sep read only: linear
    g.AddWay(0, {{0, 1}, {1, 1}}, 2);
    g.Keep(1);
    EXPECT_EQ(g.GeometricState(), -1);
  }
  {
    Growth g(2);  // a = a ~ b, b = a: Fibonacci, every coefficient 1
    g.AddWay(0, {{0, 1}, {1, 1}}, 2);
    g.AddWay(1, {{0, 1}}, 1);
    EXPECT_GE(g.GeometricState(), 0);
  }
  {
    Growth g(2);  // a = b, b = a: a swap keeps the sizes
    g.AddWay(0, {{1, 1}}, 1);
    g.AddWay(1, {{0, 1}}, 1);
    EXPECT_EQ(g.GeometricState(), -1);
  }
  {
    Growth g(2);  // a = a or b, b = a or b: a join is one way or the other
    g.AddWay(0, {{0, 1}, {1, 1}}, 1);
    g.AddWay(1, {{0, 1}, {1, 1}}, 1);
    EXPECT_EQ(g.GeometricState(), -1);
  }
  {
    Growth g(2);  // two call sites: f(a, b) -> f(b, a) and f(a, a): alternatives
    g.AddWay(0, {{1, 1}}, 1);
    g.AddWay(0, {{0, 1}}, 1);
    g.AddWay(1, {{0, 1}}, 1);
    EXPECT_EQ(g.GeometricState(), -1);
  }
}

TEST(TemplateExtentTest, PassesRaiseTheAffineMap) {
  Growth doubling(1);
  doubling.AddWay(0, {{0, 2}}, 2);
  EXPECT_EQ(doubling.After(10, {2})[0], 2048);
  EXPECT_EQ(doubling.After(2000, {2})[0], kHuge);  // saturates, never overflows
  Growth append(1);  // s = s ~ 'x': one byte a pass
  append.AddWay(0, {{0, 1}}, 1);
  append.RaiseConstant(0, 1);
  EXPECT_EQ(append.After(1000, {5})[0], 1005);
  EXPECT_EQ(append.Power(1000)[0], 1);
  // s = s ~ t (t read only): t's copies add up, one a pass.
  Growth accumulate(2);
  accumulate.AddWay(0, {{0, 1}, {1, 1}}, 2);
  accumulate.Keep(1);
  const std::vector<double> p = accumulate.Power(7);
  EXPECT_EQ(p[0 * 2 + 1], 7);
  EXPECT_EQ(accumulate.After(7, {0, 3})[0], 21);
}

TEST(TemplateExtentTest, TooManyWaysMergeIntoABound) {
  Growth g(1);
  for (int i = 0; i < 20; ++i) g.AddWay(0, {{0, 1}}, 1);
  EXPECT_EQ(g.GeometricState(), -1);
  EXPECT_EQ(g.m(0, 0), 1);
}

}  // namespace
}  // namespace ggufguard::jinja::analysis
