/*
 * Models of a 64-byte spin ping-pong between two pinned threads, written directly in C,
 * held against the cache-line round trip measured the same way: how close to the
 * machine can each way of laying out a small message and its "ready" signal get?
 *
 *   cache-line  one shared word, written in turn (the `limits` probe, two transfers)
 *   two-line    a byte ring per direction with a separate index, as `shm`: the
 *               producer copies 64 bytes to the next place of a 4 MiB ring, then stores
 *               `head` (Release) on a line of its own; the consumer spins on `head`
 *               (Acquire), asking for the data line on every turn (`prefetcht0`), then
 *               copies the 64 bytes out
 *   seq-first   128-byte slots, an 8-byte sequence word first and the 64-byte payload
 *               after it (72 bytes: two lines), the word stored last (Release)
 *   seq-last    128-byte slots, the payload first and the sequence word after it (at
 *               byte 64: the second line), stored last
 *   one-line    64-byte slots, the sequence word and a 56-byte payload in one line:
 *               the floor for a message that fits a line with its signal
 *
 * The echo side copies each request into its reply, as `shm`'s copying mode does.
 * By default every slot and every ring place is fresh for each message (4 MiB per
 * direction, 6,001 messages a sample), as in `shm` at its default capacity. Each figure is the median of 15 samples (each up to 6,000 round trips or
 * 40 ms, the first round trip untimed), with the smallest and the largest, as
 * `xferbench limits` and scripts/limits-ref.c take theirs; one sample is taken and
 * dropped first.
 *
 *   spin-model [ROUNDS] [RING_BYTES] [CPU_A CPU_B]
 *
 * RING_BYTES (a power of two from 4096, 4 MiB by default) sizes each direction's ring
 * or slots: with 4 MiB every message has fresh lines, with 4 KiB the same few lines
 * are written again and again.
 *
 * prints, per round, "round <tab> model <tab> median ns <tab> min <tab> max", the
 * models in a rotating order. Build and run with scripts/spin-model.sh.
 */
#define _GNU_SOURCE
#include <immintrin.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SAMPLES 15
#define BUDGET 0.040
#define TRIPS 6000

enum model { CACHE_LINE, TWO_LINE, SEQ_FIRST, SEQ_LAST, ONE_LINE, MODELS };
static const char *names[MODELS] = {"cache-line", "two-line", "seq-first", "seq-last", "one-line"};

static int cpu_a = 0, cpu_b = 1;

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static void pin(int cpu) {
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET(cpu, &s);
    if (pthread_setaffinity_np(pthread_self(), sizeof s, &s) != 0) {
        fprintf(stderr, "spin-model: cannot pin to CPU %d\n", cpu);
        exit(1);
    }
}

/* One direction: the ring (or the slots) and, for two-line, its index. */
struct chan {
    _Alignas(64) _Atomic uint64_t head;
    char pad[56];
    unsigned char *data;
};

static struct chan ab, ba;
static _Alignas(64) _Atomic uint64_t line;
static _Atomic int give_up;
static long trips;
/* Bytes of each direction's ring (4 MiB unless given): small rings reuse hot lines. */
static size_t RING = 4u << 20;

static void stop_check(uint32_t *spins) {
    if (++*spins % 4096 == 0 && atomic_load_explicit(&give_up, memory_order_relaxed)) pthread_exit(NULL);
}

/* Message k (0-based) on `c`, from `msg`; `pos` is the producer's private byte count. */
static inline __attribute__((always_inline)) void send(enum model m, struct chan *c, uint64_t k,
                                                       const unsigned char *msg) {
    switch (m) {
    case TWO_LINE: {
        uint64_t pos = k * 64;
        memcpy(c->data + pos % RING, msg, 64);
        atomic_store_explicit(&c->head, pos + 64, memory_order_release);
        break;
    }
    case SEQ_FIRST: {
        unsigned char *s = c->data + (k % (RING / 128)) * 128;
        memcpy(s + 8, msg, 64);
        atomic_store_explicit((_Atomic uint64_t *)s, k + 1, memory_order_release);
        break;
    }
    case SEQ_LAST: {
        unsigned char *s = c->data + (k % (RING / 128)) * 128;
        memcpy(s, msg, 64);
        atomic_store_explicit((_Atomic uint64_t *)(s + 64), k + 1, memory_order_release);
        break;
    }
    case ONE_LINE: {
        unsigned char *s = c->data + (k % (RING / 64)) * 64;
        memcpy(s + 8, msg, 56);
        atomic_store_explicit((_Atomic uint64_t *)s, k + 1, memory_order_release);
        break;
    }
    default:
        break;
    }
}

/* Waits for message k on `c` and copies it to `out`. */
static inline __attribute__((always_inline)) void recv(enum model m, struct chan *c, uint64_t k,
                                                       unsigned char *out) {
    uint32_t spins = 0;
    switch (m) {
    case TWO_LINE: {
        uint64_t pos = k * 64;
        const unsigned char *d = c->data + pos % RING;
        while (atomic_load_explicit(&c->head, memory_order_acquire) < pos + 64) {
            _mm_prefetch((const char *)d, _MM_HINT_T0);
            _mm_pause();
            stop_check(&spins);
        }
        memcpy(out, d, 64);
        break;
    }
    case SEQ_FIRST:
    case SEQ_LAST:
    case ONE_LINE: {
        size_t stride = m == ONE_LINE ? 64 : 128;
        unsigned char *s = c->data + (k % (RING / stride)) * stride;
        _Atomic uint64_t *seq = (_Atomic uint64_t *)(m == SEQ_LAST ? s + 64 : s);
        while (atomic_load_explicit(seq, memory_order_acquire) != k + 1) {
            _mm_pause();
            stop_check(&spins);
        }
        if (m == SEQ_FIRST) memcpy(out, s + 8, 64);
        else if (m == SEQ_LAST) memcpy(out, s, 64);
        else memcpy(out, s + 8, 56);
        break;
    }
    default:
        break;
    }
}

static enum model current;

#define ECHO(M)                                                                                    \
    static void echo_##M(void) {                                                                   \
        unsigned char buf[64];                                                                     \
        for (uint64_t k = 0;; k++) {                                                               \
            recv(M, &ab, k, buf);                                                                  \
            send(M, &ba, k, buf);                                                                  \
        }                                                                                          \
    }                                                                                              \
    static double measure_##M(void) {                                                              \
        unsigned char msg[64] = {1}, reply[64];                                                    \
        double start = now();                                                                      \
        long timed = 0;                                                                            \
        for (uint64_t k = 0; k < (uint64_t)trips + 1; k++) {                                       \
            msg[0] = (unsigned char)k;                                                             \
            send(M, &ab, k, msg);                                                                  \
            recv(M, &ba, k, reply);                                                                \
            if (reply[0] != (unsigned char)k) {                                                    \
                fprintf(stderr, "spin-model: %s: reply %lu is wrong\n", names[M], (unsigned long)k); \
                exit(1);                                                                           \
            }                                                                                      \
            if (k == 0) start = now();                                                             \
            else if (++timed % 256 == 0 && now() - start > BUDGET) break;                          \
        }                                                                                          \
        return (now() - start) * 1e9 / timed;                                                      \
    }
ECHO(TWO_LINE)
ECHO(SEQ_FIRST)
ECHO(SEQ_LAST)
ECHO(ONE_LINE)

static void echo_cache_line(void) {
    for (uint64_t expect = 1;; expect += 2) {
        uint32_t spins = 0;
        while (atomic_load_explicit(&line, memory_order_acquire) != expect) {
            _mm_pause();
            stop_check(&spins);
        }
        atomic_store_explicit(&line, expect + 1, memory_order_release);
    }
}

static double measure_cache_line(void) {
    double start = now();
    long timed = 0;
    for (uint64_t next = 1; next < 2 * (uint64_t)(trips + 1); next += 2) {
        atomic_store_explicit(&line, next, memory_order_release);
        while (atomic_load_explicit(&line, memory_order_acquire) != next + 1) _mm_pause();
        if (next == 1) start = now();
        else if (++timed % 256 == 0 && now() - start > BUDGET) break;
    }
    return (now() - start) * 1e9 / timed;
}

static void *echo_thread(void *arg) {
    (void)arg;
    pin(cpu_b);
    switch (current) {
    case CACHE_LINE: echo_cache_line(); break;
    case TWO_LINE: echo_TWO_LINE(); break;
    case SEQ_FIRST: echo_SEQ_FIRST(); break;
    case SEQ_LAST: echo_SEQ_LAST(); break;
    case ONE_LINE: echo_ONE_LINE(); break;
    default: break;
    }
    return NULL;
}

static double ns_result;

static void *measure_thread(void *arg) {
    (void)arg;
    pin(cpu_a);
    switch (current) {
    case CACHE_LINE: ns_result = measure_cache_line(); break;
    case TWO_LINE: ns_result = measure_TWO_LINE(); break;
    case SEQ_FIRST: ns_result = measure_SEQ_FIRST(); break;
    case SEQ_LAST: ns_result = measure_SEQ_LAST(); break;
    case ONE_LINE: ns_result = measure_ONE_LINE(); break;
    default: break;
    }
    return NULL;
}

/* One sample of model m: fresh rings, an echo thread, the measuring thread. */
static double sample(enum model m) {
    current = m;
    memset(ab.data, 0, RING);
    memset(ba.data, 0, RING);
    atomic_store(&ab.head, 0);
    atomic_store(&ba.head, 0);
    atomic_store(&line, 0);
    atomic_store(&give_up, 0);
    pthread_t e, t;
    pthread_create(&e, NULL, echo_thread, NULL);
    pthread_create(&t, NULL, measure_thread, NULL);
    pthread_join(t, NULL);
    atomic_store(&give_up, 1);
    pthread_join(e, NULL);
    return ns_result;
}

static int cmp(const void *x, const void *y) {
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

int main(int argc, char **argv) {
    int rounds = argc > 1 ? atoi(argv[1]) : 5;
    if (argc > 2) RING = strtoul(argv[2], NULL, 0);
    if (argc > 4) {
        cpu_a = atoi(argv[3]);
        cpu_b = atoi(argv[4]);
    }
    if (rounds < 1 || RING < 4096 || (RING & (RING - 1)) != 0) {
        fprintf(stderr, "usage: spin-model [ROUNDS] [RING_BYTES: a power of two >= 4096] [CPU_A CPU_B]\n");
        return 2;
    }
    trips = TRIPS;
    size_t align = RING < (1u << 21) ? 4096 : (1u << 21);
    ab.data = aligned_alloc(align, RING);
    ba.data = aligned_alloc(align, RING);
    if (!ab.data || !ba.data) {
        fprintf(stderr, "spin-model: out of memory\n");
        return 1;
    }
    for (int r = 1; r <= rounds; r++) {
        for (int i = 0; i < MODELS; i++) {
            enum model m = (enum model)((i + r - 1) % MODELS);
            double v[SAMPLES];
            sample(m); /* not counted */
            for (int s = 0; s < SAMPLES; s++) v[s] = sample(m);
            qsort(v, SAMPLES, sizeof v[0], cmp);
            printf("%d\t%s\t%.1f\t%.1f\t%.1f\n", r, names[m], v[SAMPLES / 2], v[0], v[SAMPLES - 1]);
            fflush(stdout);
        }
    }
    return 0;
}
