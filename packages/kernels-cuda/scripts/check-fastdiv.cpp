// Host check of MakeFastDiv (native/planner/plan_kernels.cuh): the multiply-high-and-add quotient equals n / d for every
// divisor 1..4096, powers of two and neighbours up to 2^31-1 and random divisors, at the numerators where an error
// would first show (multiples of d and their neighbours, 0, 2^31-1) plus random ones.
//   g++ -std=c++17 -O2 -Inative scripts/check-fastdiv.cpp -o /tmp/check-fastdiv && /tmp/check-fastdiv
#include <cstdio>
#include <random>
#include "planner/plan_kernels.cuh"
using dsv4kv::FastDiv;
static uint32_t Quo(const FastDiv& f, uint32_t n) {  // as the device's Quo: (umulhi(n, m) + n) >> l, in 32 bits
  const uint32_t t = static_cast<uint32_t>((static_cast<uint64_t>(n) * f.mul) >> 32);
  return static_cast<uint32_t>(t + n) >> f.shr;
}
int main() {
  std::mt19937_64 rng(7);
  uint64_t checks = 0, bad = 0;
  auto check = [&](uint32_t d, uint32_t n) {
    if (n > 0x7fffffffu) return;
    ++checks;
    if (Quo(dsv4kv::MakeFastDiv(d), n) != n / d) {
      if (++bad < 10) std::printf("mismatch d=%u n=%u\n", d, n);
    }
  };
  std::vector<uint32_t> ds;
  for (uint32_t d = 1; d <= 4096; ++d) ds.push_back(d);
  for (int k = 1; k < 31; ++k)
    for (int64_t o = -2; o <= 2; ++o) ds.push_back(static_cast<uint32_t>((int64_t{1} << k) + o));
  ds.push_back(0x7fffffffu);
  for (int i = 0; i < 20000; ++i) ds.push_back(1 + static_cast<uint32_t>(rng() % 0x7fffffffu));
  for (uint32_t d : ds) {
    if (d == 0 || d > 0x7fffffffu) continue;
    check(d, 0);
    check(d, 0x7fffffffu);
    check(d, 0x7ffffffeu);
    for (uint64_t m : {uint64_t{1}, uint64_t{2}, uint64_t{3}, uint64_t{0x7fffffffu} / d, uint64_t{0x7fffffffu} / d - 1})
      for (int64_t o = -1; o <= 1; ++o) check(d, static_cast<uint32_t>(m * d + o));
    for (int i = 0; i < 64; ++i) check(d, static_cast<uint32_t>(rng() % 0x80000000u));
  }
  for (uint32_t d : {4u, 8u, 16u, 128u, 256u, 512u, 24u, 48u})  // ring/SPS sizes in use: every numerator < 2^24
    for (uint32_t n = 0; n < (1u << 24); ++n) check(d, n);
  std::printf("fastdiv: %llu checks, %llu mismatches\n", static_cast<unsigned long long>(checks),
              static_cast<unsigned long long>(bad));
  return bad ? 1 : 0;
}
