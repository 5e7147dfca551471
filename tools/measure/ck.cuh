// The CUDA error check shared by the measurement programs: every runtime
// call goes through CK, which names the call, file and line and exits 1.
#pragma once
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#define CK(call)                                                            \
    do {                                                                    \
        cudaError_t e_ = (call);                                            \
        if (e_ != cudaSuccess) {                                            \
            fprintf(stderr, "CUDA error %s (%s) at %s:%d: %s\n",            \
                    cudaGetErrorName(e_), cudaGetErrorString(e_), __FILE__, \
                    __LINE__, #call);                                       \
            exit(1);                                                        \
        }                                                                   \
    } while (0)
