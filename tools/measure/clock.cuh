// The device-side reads the measurement programs share: the SM's cycle
// counter, the global nanosecond timer and a 4-byte load that bypasses the
// L1 (served by the L2). Each is volatile with a memory clobber, so the
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
