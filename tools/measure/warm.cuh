// The warm timing the measurement programs share: a case launched back to
// back in batches and timed with CUDA events, the figure each program's
// time.csv gives as warm_ns (median), warm_min_ns, warm_max_ns and
// launches_per_batch.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <vector>

#include "ck.cuh"

struct WarmTime {
    float med_ns, min_ns, max_ns;
    int per_batch;
};

// Two launches to warm up, three single launches timed to size a batch of
// about 10 ms (3 to 500 launches), then five batches: the time per launch
// of each, their median, least and most. `launch()` launches the case once
// on the default stream.
template <class Launch>
WarmTime warm_batches(Launch launch) {
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    for (int w = 0; w < 2; w++) launch();
    float one = 1e9f;
    for (int k = 0; k < 3; k++) {
        CK(cudaEventRecord(e0));
        launch();
        CK(cudaEventRecord(e1));
        CK(cudaEventSynchronize(e1));
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        one = std::min(one, ms);
    }
    int n = std::max(3, std::min(500, (int)(10.0f / std::max(one, 1e-3f))));
    std::vector<float> warm;
    for (int b = 0; b < 5; b++) {
        CK(cudaEventRecord(e0));
        for (int r = 0; r < n; r++) launch();
        CK(cudaEventRecord(e1));
        CK(cudaEventSynchronize(e1));
        CK(cudaGetLastError());
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        warm.push_back(ms / n);
    }
    CK(cudaEventDestroy(e0));
    CK(cudaEventDestroy(e1));
    std::sort(warm.begin(), warm.end());
    return WarmTime{warm[warm.size() / 2] * 1e6f, warm.front() * 1e6f, warm.back() * 1e6f, n};
}
