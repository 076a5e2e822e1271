// Shared by the benches of kernels-cuda and online-mtp-controller: stop when the probe says the GPU path is
// unusable, with exit code 0 (a skip) or 1 when BENCH_REQUIRE_GPU is set (a GPU machine that lost its GPU).
export function requireGpu(probeResult) {
  if (probeResult.ok) return;
  console.error(`bench skipped: GPU unavailable: ${probeResult.reason}`);
  process.exit(process.env.BENCH_REQUIRE_GPU ? 1 : 0);
}
