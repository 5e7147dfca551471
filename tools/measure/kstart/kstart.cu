// What a kernel pays to start on many SMs (tools/measure/kstart/README.md).
//
// Empty kernels of 1 .. 2112 one-warp blocks (one block per SM up to 132),
// and the same with 512 more instructions executed by every warp (8 KiB
// more code to fetch), timed by Nsight Compute (gpu__time_duration.sum,
// caches flushed before each launch). If starting costs a fixed time, the
// time is flat from 1 to 132 blocks; if each SM's start is served in turn
// (its code and parameters fetched through one L2 slice), it grows with
// the SMs engaged, and more with more code.
//
// Usage: kstart list | kstart ncu REPS
#include <cstdio>
#include <cstdlib>
#include <cstring>

#define CHECK(x)                                                              \
    do {                                                                      \
        cudaError_t e = (x);                                                  \
        if (e != cudaSuccess) {                                               \
            fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__,               \
                    cudaGetErrorString(e));                                   \
            exit(1);                                                          \
        }                                                                     \
    } while (0)

__global__ void k_empty(float* out, unsigned never) {
    if (threadIdx.x == never) out[0] = 1.0f;
}

// 512 dependent adds the compiler cannot fold: 512 more instructions.
__global__ void k_code(float* out, unsigned never) {
    unsigned v = threadIdx.x;
#pragma unroll
    for (int i = 0; i < 512; i++) asm volatile("add.u32 %0, %0, %1;" : "+r"(v) : "r"(i));
    if (v == never) out[0] = 1.0f;
}

static const int GRIDS[] = {1, 2, 4, 8, 16, 33, 66, 99, 132, 264, 528, 1056, 2112};
static const int NG = sizeof(GRIDS) / sizeof(GRIDS[0]);

int main(int argc, char** argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: kstart list | kstart ncu REPS\n");
        return 2;
    }
    int reps = argc > 2 ? atoi(argv[2]) : 5;
    bool list = strcmp(argv[1], "list") == 0;
    float* out;
    CHECK(cudaMalloc(&out, 256));
    CHECK(cudaMemset(out, 0, 256));
    int id = 0;
    for (int k = 0; k < 2; k++) {
        for (int b = 32; b <= 256; b *= 8) {
            for (int g = 0; g < NG; g++) {
                printf("CASE,%d,%s,%d,%d\n", id, k ? "code" : "empty", GRIDS[g], b);
                if (!list) {
                    for (int r = 0; r < reps; r++) {
                        if (k)
                            k_code<<<GRIDS[g], b>>>(out, 1234567u);
                        else
                            k_empty<<<GRIDS[g], b>>>(out, 1234567u);
                        CHECK(cudaGetLastError());
                        CHECK(cudaDeviceSynchronize());
                    }
                }
                id++;
            }
        }
    }
    float h = 0;
    CHECK(cudaMemcpy(&h, out, 4, cudaMemcpyDeviceToHost));
    printf("# out[0] = %g (0 expected)\n", h);
    return 0;
}
