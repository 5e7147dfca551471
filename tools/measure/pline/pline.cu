// pline: what the H200's L2 does with lines written in part, by how many
// there are per slice and by how fast their stores come.
//
// m_pl stores into `s` sectors of each of `lines` consecutive 128-byte
// lines; `g` lanes write one float each of a sector (g = 1: 4 bytes of it,
// a partly written sector; g = 8: the whole sector). A block may wait
// `(blockIdx.x % 16) * step` cycles before its store, so that the stores
// come in 16 bursts `step` cycles apart and the kernel lasts about
// 16 x step cycles more, with the same stores.
//
//   ./pline list     the cases
//   ./pline          one launch of each case, a CASE line before it
//   ./pline check    each case on a zeroed buffer, every written word checked
#include <cstdio>
#include <cstring>
#include <vector>

#include "../ck.cuh"

// S sectors a line and G lanes a sector are template arguments, so that the
// index is shifts and one multiply (the first call's kernel divided 64-bit
// indices by run-time values, which cost its whole-sector cases a third
// more time than a plain store stream).
template <int S, int G>
__global__ void m_pl(float *a, unsigned n, unsigned ls, unsigned step, float v) {
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    if (step) {
        long long wait = (long long)(blockIdx.x % 16) * step;
        long long c0 = clock64();
        while (clock64() - c0 < wait) {
        }
    }
    if (t >= n) return;
    unsigned line = t / (S * G) * ls;
    unsigned sector = t / G % S;
    a[(size_t)line * 32 + sector * 8 + t % G] = v;
}

static void launch(int s, int g, unsigned blocks, float *a, unsigned n, unsigned ls, unsigned step) {
    if (s == 1 && g == 1) m_pl<1, 1><<<blocks, 256>>>(a, n, ls, step, 1.5f);
    if (s == 4 && g == 1) m_pl<4, 1><<<blocks, 256>>>(a, n, ls, step, 1.5f);
    if (s == 1 && g == 8) m_pl<1, 8><<<blocks, 256>>>(a, n, ls, step, 1.5f);
    if (s == 4 && g == 8) m_pl<4, 8><<<blocks, 256>>>(a, n, ls, step, 1.5f);
}

struct Case {
    long long per_slice;  // lines per L2 slice (96 slices)
    int s, g;
    long long step;
    long long ls = 1;  // lines from one written line to the next
};

static std::vector<Case> cases() {
    std::vector<Case> c;
    // A: how many partly written lines a slice keeps, one sector a line
    for (long long p : {400, 500, 560, 600, 640, 683, 720, 800, 900, 1024, 1200, 1365, 1600, 2048, 2731, 4096, 5461})
        c.push_back({p, 1, 1, 0});
    // four partly written sectors a line
    for (long long p : {300, 400, 500, 600, 683, 800, 1024, 1365, 2048, 2731}) c.push_back({p, 4, 1, 0});
    // whole sectors, one and four a line: the dirty lines kept
    for (long long p : {1365, 1600, 2048, 2731, 4096, 5461}) c.push_back({p, 1, 8, 0});
    for (long long p : {1365, 2048, 2731, 4096}) c.push_back({p, 4, 8, 0});
    // B: the same stores spread over time (16 bursts `step` cycles apart)
    for (long long p : {683, 1365, 2731})
        for (long long st : {500, 2000, 8000}) c.push_back({p, 1, 1, st});
    for (long long st : {2000, 8000}) c.push_back({2731, 1, 8, st});
    for (long long st : {2000, 8000}) c.push_back({1365, 4, 1, st});
    // C: the same number of lines spread further apart (every ls-th line):
    // a limit per slice keeps as many, one per set follows where they fall
    for (long long p : {683, 1365})
        for (long long ls : {2, 4, 8, 16, 32, 64, 96, 128, 256}) c.push_back({p, 1, 1, 0, ls});
    return c;
}

int main(int argc, char **argv) {
    bool list = argc > 1 && strcmp(argv[1], "list") == 0;
    bool check = argc > 1 && strcmp(argv[1], "check") == 0;
    std::vector<Case> cs = cases();
    const int slices = 96, block = 256;
    long long max_lines = 0;
    for (auto &c : cs) {
        long long span = c.per_slice * slices * c.ls;
        max_lines = span > max_lines ? span : max_lines;
    }
    float *a = nullptr;
    if (!list) CK(cudaMalloc(&a, max_lines * 128));
    std::vector<float> h(check ? max_lines * 32 : 0);
    int bad = 0;
    for (auto &c : cs) {
        long long lines = c.per_slice * slices;
        long long n = lines * c.s * c.g;
        long long blocks = (n + block - 1) / block;
        printf("CASE,pl,per_slice=%lld;s=%d;g=%d;step=%lld;ls=%lld,lines=%lld,sectors=%lld,blocks=%lld\n", c.per_slice,
               c.s, c.g, c.step, c.ls, lines, lines * c.s, blocks);
        fflush(stdout);
        if (list) continue;
        long long span = lines * c.ls;
        if (check) CK(cudaMemset(a, 0, span * 128));
        launch(c.s, c.g, (unsigned)blocks, a, (unsigned)n, (unsigned)c.ls, (unsigned)c.step);
        CK(cudaGetLastError());
        CK(cudaDeviceSynchronize());
        if (check) {
            CK(cudaMemcpy(h.data(), a, span * 128, cudaMemcpyDeviceToHost));
            long long words = 0, wrong = 0;
            for (long long l = 0; l < span; l++)
                for (int k = 0; k < 32; k++) {
                    bool want = l % c.ls == 0 && (k / 8) < c.s && (k % 8) < c.g;
                    bool got = h[l * 32 + k] == 1.5f;
                    words += got;
                    wrong += want != got;
                }
            bad += wrong != 0;
            printf("CHECK,words=%lld,wrong=%lld,%s\n", words, wrong, wrong ? "BAD" : "ok");
        }
    }
    if (a) CK(cudaFree(a));
    if (check) printf("check: %d bad cases of %zu\n", bad, cs.size());
    return bad != 0;
}
