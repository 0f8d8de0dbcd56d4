// The size model of the template analyser. See extent.h.
#include "ggufguard/template/extent.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace ggufguard::jinja::analysis {

double CopiesOf(const Extent& e, uint32_t slot) {
  for (const Copies& c : e.copies) {
    if (c.slot == slot) return c.n;
  }
  return 0;
}

double PathTotal(const Extent& e) {
  if (e.total >= 0) return e.total;
  double sum = 0;
  for (const Copies& c : e.copies) sum = SatAdd(sum, c.n);
  return sum;
}

void AddCopies(Extent* into, const Extent& from, double times) {
  if (from.copies.empty() || times <= 0) return;
  // A path total on either side (a join inside) is kept as one: their sum.
  if (into->total >= 0 || from.total >= 0) into->total = SatAdd(PathTotal(*into), SatMul(PathTotal(from), times));
  for (const Copies& c : from.copies) {
    const double n = SatMul(c.n, times);
    if (n <= 0) continue;
    auto it = std::find_if(into->copies.begin(), into->copies.end(), [&](const Copies& x) { return x.slot == c.slot; });
    if (it == into->copies.end()) {
      into->copies.push_back({c.slot, n});
    } else {
      it->n = SatAdd(it->n, n);
    }
  }
}

Extent SumOf(const Extent& a, const Extent& b) {
  Extent e;
  e.bound = SatAdd(a.bound, b.bound);
  e.element = std::max(a.element, b.element);
  e.copies = a.copies;
  e.total = a.total;
  AddCopies(&e, b, 1);
  return e;
}

Extent EitherOf(const Extent& a, const Extent& b) {
  Extent e;
  e.bound = std::max(a.bound, b.bound);
  e.element = std::max(a.element, b.element);
  e.copies = a.copies;
  for (const Copies& c : b.copies) {
    auto it = std::find_if(e.copies.begin(), e.copies.end(), [&](const Copies& x) { return x.slot == c.slot; });
    if (it == e.copies.end()) {
      e.copies.push_back(c);
    } else {
      it->n = std::max(it->n, c.n);
    }
  }
  // One way or the other: the most copies either holds on one path.
  if (!e.copies.empty()) e.total = std::max(PathTotal(a), PathTotal(b));
  e.set_pass = std::max(a.set_pass, b.set_pass);
  return e;
}

Extent Scaled(const Extent& e, double factor) {
  Extent out;
  out.bound = SatMul(e.bound, factor);
  out.element = e.element;
  AddCopies(&out, e, factor);
  return out;
}

Extent RepeatedOf(const Extent& seq, const Extent& count) {
  Extent out;
  out.bound = SatMul(seq.bound, count.bound);
  out.element = seq.element;
  AddCopies(&out, seq, count.bound);
  AddCopies(&out, count, seq.bound);
  return out;
}

Growth::Growth(size_t n) : n_(n), m_(n * n, 0), c_(n, 0), ways_(n) {}

void Growth::AddWay(size_t i, const std::vector<std::pair<size_t, double>>& copies, double total) {
  for (const auto& [j, n] : copies) m_[i * n_ + j] = std::max(m_[i * n_ + j], n);
  std::vector<Way>& ways = ways_[i];
  ways.push_back({copies, total});
  if (ways.size() <= kMaxWays) return;
  // Too many to keep apart: one way copying the most of each (a bound).
  Way merged{{}, 0};
  for (size_t j = 0; j < n_; ++j) {
    if (m_[i * n_ + j] > 0) merged.copies.push_back({j, m_[i * n_ + j]});
  }
  for (const Way& w : ways) merged.total = std::max(merged.total, w.total);
  ways = {std::move(merged)};
}

void Growth::RaiseConstant(size_t i, double bytes) { c_[i] = std::max(c_[i], bytes); }

int Growth::GeometricState() const {
  // reach[i][j]: j is reachable from i along edges M(i,j) > 0 (Warshall's
  // closure; n is at most a few dozen states).
  std::vector<bool> reach(n_ * n_);
  for (size_t i = 0; i < n_ * n_; ++i) reach[i] = m_[i] > 0;
  for (size_t k = 0; k < n_; ++k) {
    for (size_t i = 0; i < n_; ++i) {
      if (!reach[i * n_ + k]) continue;
      for (size_t j = 0; j < n_; ++j) reach[i * n_ + j] = reach[i * n_ + j] || reach[k * n_ + j];
    }
  }
  // Per strongly connected part (i and j reach each other): a single cycle
  // of coefficients of at most 1 has exactly as many edges as states and
  // keeps the sizes where they are; anything more multiplies them.
  std::vector<bool> done(n_);
  for (size_t i = 0; i < n_; ++i) {
    if (done[i] || !reach[i * n_ + i]) continue;
    std::vector<size_t> part;
    for (size_t j = 0; j < n_; ++j) {
      if (reach[i * n_ + j] && reach[j * n_ + i]) part.push_back(j);
    }
    std::vector<bool> in_part(n_);
    for (size_t a : part) in_part[a] = true;
    double edges = 0;
    for (size_t a : part) {
      done[a] = true;
      double most = 0;  // the most of the part one way of setting `a` copies
      for (const Way& w : ways_[a]) {
        double within = 0;
        for (const auto& [b, n] : w.copies) {
          if (!in_part[b]) continue;
          if (n > 1 + 1e-9) return static_cast<int>(a);
          within += 1;
        }
        most = std::max(most, std::min(within, std::ceil(w.total - 1e-9)));
      }
      edges += most;
    }
    if (edges > static_cast<double>(part.size())) return static_cast<int>(part[0]);
  }
  return -1;
}

namespace {

// Square matrices of size k, saturating products.
std::vector<double> Times(const std::vector<double>& a, const std::vector<double>& b, size_t k) {
  std::vector<double> out(k * k, 0);
  for (size_t i = 0; i < k; ++i) {
    for (size_t l = 0; l < k; ++l) {
      const double x = a[i * k + l];
      if (x == 0) continue;
      for (size_t j = 0; j < k; ++j) out[i * k + j] = SatAdd(out[i * k + j], SatMul(x, b[l * k + j]));
    }
  }
  return out;
}

// A^passes for a k x k matrix, by squaring.
std::vector<double> MatrixPower(std::vector<double> a, double passes, size_t k) {
  std::vector<double> result(k * k, 0);
  for (size_t i = 0; i < k; ++i) result[i * k + i] = 1;
  auto p = static_cast<uint64_t>(std::clamp(std::floor(passes), 0.0, 4.6e18));  // 2^62
  while (p > 0) {
    if (p & 1) result = Times(result, a, k);
    p >>= 1;
    if (p > 0) a = Times(a, a, k);
  }
  return result;
}

}  // namespace

std::vector<double> Growth::Power(double passes) const { return MatrixPower(m_, passes, n_); }

Growth::Raised Growth::Raise(double passes) const {
  // The affine map as one linear map of (x, 1): [[M, c], [0, 1]].
  const size_t k = n_ + 1;
  std::vector<double> a(k * k, 0);
  for (size_t i = 0; i < n_; ++i) {
    for (size_t j = 0; j < n_; ++j) a[i * k + j] = m_[i * n_ + j];
    a[i * k + n_] = c_[i];
  }
  a[n_ * k + n_] = 1;
  return {n_, MatrixPower(std::move(a), passes, k)};
}

std::vector<double> Growth::Raised::After(const std::vector<double>& start) const {
  const size_t k = n + 1;
  std::vector<double> out(n, 0);
  for (size_t i = 0; i < n; ++i) {
    double x = a[i * k + n];
    for (size_t j = 0; j < n; ++j) x = SatAdd(x, SatMul(a[i * k + j], start[j]));
    out[i] = x;
  }
  return out;
}

}  // namespace ggufguard::jinja::analysis
