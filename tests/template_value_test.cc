// The value lattice (value.h): joins keep every possibility, widening
// forgets exact strings but never an origin, and the bounds lose precision
// towards "template-made" only.
#include "ggufguard/template/value.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace ggufguard::jinja::analysis {
namespace {

bool HasStr(const Value& v, const std::string& s) {
  for (const std::string& x : v.strs) {
    if (x == s) return true;
  }
  return false;
}

TEST(TemplateValueTest, JoinOfTwoLiteralsKeepsBoth) {
  const Value j = Join(Str("a", false), Str("b", false));
  EXPECT_TRUE(IsExactStr(j));
  EXPECT_TRUE(HasStr(j, "a"));
  EXPECT_TRUE(HasStr(j, "b"));
  EXPECT_EQ(j.origin, Origin::kData);
}

TEST(TemplateValueTest, JoinIsCommutativeAndIdempotent) {
  const Value a = Str("__class__", false), b = Data(), c = RootValue("lipsum");
  for (const Value* x : {&a, &b, &c}) {
    for (const Value* y : {&a, &b, &c}) EXPECT_TRUE(SameValue(Join(*x, *y), Join(*y, *x)));
    EXPECT_TRUE(SameValue(Join(*x, *x), *x));
  }
}

TEST(TemplateValueTest, JoinTakesTheWorstOrigin) {
  EXPECT_EQ(Join(Data(), Computed()).origin, Origin::kComputed);
  const Value r = Join(Computed(), RootValue("cycler()"));
  EXPECT_EQ(r.origin, Origin::kRoot);
  EXPECT_EQ(r.root, "cycler()");
}

TEST(TemplateValueTest, LiteralJoinedWithRequestDataStaysDataButKeepsItsString) {
  // `x if x else '__class__'`: the name checks still see the literal.
  const Value j = Join(Data(), Str("__class__", false));
  EXPECT_FALSE(j.exact);
  EXPECT_EQ(j.origin, Origin::kData);
  EXPECT_TRUE(HasStr(j, "__class__"));
  EXPECT_TRUE(Spelled(j));
}

TEST(TemplateValueTest, TooManyStringsBecomeTemplateMadeIfOneHasTheMakingsOfAName) {
  Value v = Str("s0", false);
  for (size_t i = 1; i <= kMaxStrings; ++i) v = Join(v, Str("s" + std::to_string(i), false));
  EXPECT_FALSE(v.exact);
  // None can be a name the checks look for: not followed, still spelled.
  EXPECT_EQ(v.origin, Origin::kData);
  EXPECT_TRUE(Spelled(v));
  EXPECT_EQ(Derived(v, kStr).origin, Origin::kComputed);
  for (const char* makings : {"_s", "s{0}", "%s", "Attr"}) {
    Value w = Str(makings, false);
    for (size_t i = 1; i <= kMaxStrings; ++i) w = Join(w, Str("s" + std::to_string(i), false));
    EXPECT_EQ(w.origin, Origin::kComputed) << makings;
    Value x = Str("s0", false);
    for (size_t i = 1; i <= kMaxStrings; ++i) x = Join(x, Str("s" + std::to_string(i), false));
    EXPECT_EQ(Join(x, Str(makings, false)).origin, Origin::kComputed) << makings;
  }
}

TEST(TemplateValueTest, WidenForgetsStringsNotOrigins) {
  const Value lit = Str("x", false);
  const Value w = Widen(lit);
  EXPECT_FALSE(w.exact);
  EXPECT_EQ(w.origin, Origin::kComputed);  // it may be the literal: template-made
  EXPECT_EQ(Widen(Data(kStr)).origin, Origin::kData);
  EXPECT_EQ(Widen(RootValue("loop")).origin, Origin::kRoot);
}

TEST(TemplateValueTest, KeyedDictReadsEachKeyByName) {
  Value d = Data(kOther);
  d.keyed = true;
  AddField(&d, "role", Str("tool", false));
  AddField(&d, "content", Computed(kStr));
  EXPECT_TRUE(IsExactStr(KeyOf(d, "role", /*attribute=*/true)));
  EXPECT_EQ(KeyOf(d, "content", true).origin, Origin::kComputed);
  // Attribute syntax finds a dict's method before its key.
  AddField(&d, "items", Str("x", false));
  EXPECT_FALSE(IsExactStr(KeyOf(d, "items", /*attribute=*/true)));
  EXPECT_TRUE(HasStr(KeyOf(d, "items", /*attribute=*/false), "x"));
}

TEST(TemplateValueTest, ReadOfAContainerHoldingALiteralMayGiveIt) {
  Value list = Data(kOther);
  list.maybe_items = {"__class__"};
  const Value e = ReadOf(list);
  EXPECT_TRUE(HasStr(e, "__class__"));
}

TEST(TemplateValueTest, ExactStringsOfNumbersAndBools) {
  std::vector<std::string> out;
  EXPECT_TRUE(ExactStrings(Num(95), &out));
  EXPECT_EQ(out, std::vector<std::string>{"95"});
  EXPECT_TRUE(ExactStrings(Bool(1), &out));
  EXPECT_EQ(out, std::vector<std::string>{"True"});
  EXPECT_FALSE(ExactStrings(Num(0.5), &out));
  EXPECT_FALSE(ExactStrings(Data(), &out));
}

TEST(TemplateValueTest, MapStringsPastTheLimitIsTemplateMade) {
  const Value v = MapStrings(Str("ab", false), [](const std::string& s) { return s + s; });
  EXPECT_TRUE(HasStr(v, "abab"));
  const Value big = MapStrings(Str("ab", false), [](const std::string&) { return std::string(kMaxStringBytes + 1, 'x'); });
  EXPECT_FALSE(big.exact);
  EXPECT_EQ(big.origin, Origin::kComputed);
}

TEST(TemplateValueTest, Truth) {
  EXPECT_EQ(Truth(Str("", false)), 0);
  EXPECT_EQ(Truth(Str("x", false)), 1);
  EXPECT_EQ(Truth(Join(Str("", false), Str("x", false))), -1);
  EXPECT_EQ(Truth(Num(0)), 0);
  EXPECT_EQ(Truth(Data()), -1);
}

}  // namespace
}  // namespace ggufguard::jinja::analysis
