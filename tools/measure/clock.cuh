// The device-side reads the measurement programs share: the SM's cycle
// counter, the global nanosecond timer, the SM's number and a 4-byte load
// that bypasses the L1 (served by the L2); and `read_all`, a kernel that
// reads a buffer through the L2 (to fill the L2 with other lines). Each is volatile with a memory clobber, so the
// compiler neither drops nor moves it across other memory operations.
#pragma once
#include <cstdint>

__device__ __forceinline__ long long clk() {
    long long t;
    asm volatile("mov.u64 %0, %%clock64;" : "=l"(t)::"memory");
    return t;
}
__device__ __forceinline__ uint64_t gtime() {
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)::"memory");
    return t;
}
__device__ __forceinline__ uint32_t ld_cg(const uint32_t* p) {
    uint32_t v;
    asm volatile("ld.global.cg.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}
__device__ __forceinline__ uint32_t smid() {
    uint32_t s;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
    return s;
}
// Reads the n words of `a` (any grid); `sink` keeps the sum from being
// dropped.
__global__ void read_all(const uint32_t* a, uint64_t n, uint32_t* sink) {
    uint32_t s = 0;
    for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x)
        s += ld_cg(a + i);
    if (s == 0x12345678) sink[0] = s;
}
