/*
 * C reference for `xferbench limits`: the same probes written directly against libc
 * and the kernel, so the tool's figures can be checked on any machine.
 *
 *   memcpy at 4 KiB, 64 KiB, 2 MiB, 64 MiB between page-aligned buffers (GB/s), and at
 *   4 KiB, 64 KiB and 2 MiB with the destination moved 16, 64 and 2048 bytes further
 *   (dst - src = 16, 64, 2048 mod 4096)
 *   cache-line round trip between two pinned threads, spinning (ns)
 *   futex wake round trip between two pinned threads, across CPUs and on one (ns), the
 *   system call made inline as rustix makes it
 *   pipe round trip of one byte between two pinned threads (ns)
 *   hand-over round trip of 4 KiB and 64 KiB between two pinned threads (ns): one
 *   writes every byte of a request buffer and raises a flag; the other, spinning on
 *   the flag, copies the request into a reply buffer and lowers it; the first reads
 *   one word of every cache line of the reply. Each trip uses the next page-aligned
 *   slot of a pool per direction; a sample is the lower of a pool of two slots
 *   (re-used lines) and one of 4 MiB (fresh lines), as xferbench's probe does
 *   stream floor of 4, 16 and 64 KiB messages, copied and in place (GB/s): one pinned
 *   thread hands each message to the other through a 4 MiB ring of slots by
 *   publishing an index once per 16 KiB, as xferbench's probe does; a copying
 *   sample is the faster of a reader that copies out with memcpy and one that copies
 *   with vector loads and stores, as xferbench's is
 *   getppid system call (ns)
 *
 * in xferbench's order, so that each probe finds the machine as xferbench's does.
 *
 * Each is the median of 15 samples, printed with the smallest and the largest (name,
 * median, unit, min, max, tab-separated). As in xferbench, every probe of two threads
 * first takes one sample that is not counted, the first round trip of a sample is not
 * timed (it waits for the echo thread to start), and a round-trip sample stops when it
 * has spent 40 ms (xferbench's budget per sample). Build and compare with
 * scripts/limits-check.sh.
 *
 *   limits-ref trips futex-across|futex-one|pipe [N]
 *
 * times each of N round trips (3,000 by default) of one wake-up probe on its own and
 * prints how they spread: the idle entries of CPUs 0 and 1 per round trip (cpuidle),
 * the median and 10th/90th percentiles of every block of 100 round trips in order,
 * and a histogram. scripts/limits-wakeups.sh runs it.
 *
 *   limits-ref futex
 *
 * measures the two futex probes alone (scripts/limits-futex-call.sh).
 */
#define _GNU_SOURCE
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <immintrin.h>

#define SAMPLES 15
static int cpu_a, cpu_b;

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static int cmp(const void *x, const void *y) {
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* A probe's samples: the median with the smallest and the largest. */
struct est {
    double median, min, max;
};

static struct est median(double *v, int n) {
    qsort(v, n, sizeof *v, cmp);
    struct est e = {n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2, v[0], v[n - 1]};
    return e;
}

/* xferbench's budget per sample of a round-trip probe (the full set's). */
#define BUDGET 0.040

/* As in xferbench, the measuring side of every two-thread sample runs on a thread of
 * its own, started for the sample after the echo and pinned by itself; the main thread
 * is never pinned. */
struct job {
    double (*fn)(void);
    double out;
};

static void *job_run(void *p) {
    struct job *j = p;
    j->out = j->fn();
    return NULL;
}

static double on_own_thread(double (*fn)(void)) {
    struct job j = {fn, 0};
    pthread_t t;
    pthread_create(&t, NULL, job_run, &j);
    pthread_join(t, NULL);
    return j.out;
}

static void pin(int cpu) {
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET(cpu, &s);
    pthread_setaffinity_np(pthread_self(), sizeof s, &s);
}

/* Both buffers start on a page (one page apart), then dst moves `offset` further. */
static struct est memcpy_gbs(size_t size, size_t offset) {
    size_t gap = (size + 4095) / 4096 * 4096 + 4096;
    char *region = aligned_alloc(4096, (gap + offset + size + 4095) / 4096 * 4096);
    char *src = region, *dst = region + gap + offset;
    memset(src, 7, size);
    memset(dst, 1, size);
    size_t reps = (size_t)(0.002 * 20e9 / size);
    if (reps < 1) reps = 1;
    double v[SAMPLES];
    memcpy(dst, src, size);
    for (int s = 0; s < SAMPLES; s++) {
        double t = now();
        for (size_t r = 0; r < reps; r++) {
            memcpy(dst, src, size);
            __asm__ volatile("" : : "r"(dst) : "memory");
        }
        v[s] = (double)size * reps / (now() - t) / 1e9;
    }
    free(region);
    return median(v, SAMPLES);
}

static _Alignas(128) _Atomic uint64_t line;
static long trips;

static _Atomic int give_up;

static void *line_echo(void *arg) {
    (void)arg;
    pin(cpu_b);
    for (uint64_t expect = 1; expect < 2 * (uint64_t)(trips + 1); expect += 2) {
        for (uint32_t spins = 0; atomic_load_explicit(&line, memory_order_acquire) != expect;) {
            __builtin_ia32_pause();
            if (++spins % 4096 == 0 && atomic_load_explicit(&give_up, memory_order_relaxed))
                return NULL;
        }
        atomic_store_explicit(&line, expect + 1, memory_order_release);
    }
    return NULL;
}

/* One sample, over `trips` round trips or as many as fit in BUDGET (checked every 256,
 * as xferbench does). */
static double cache_line_measure(void) {
    pin(cpu_a);
    double start = now();
    long timed = 0;
    for (uint64_t next = 1; next < 2 * (uint64_t)(trips + 1); next += 2) {
        atomic_store_explicit(&line, next, memory_order_release);
        while (atomic_load_explicit(&line, memory_order_acquire) != next + 1) __builtin_ia32_pause();
        if (next == 1) {
            start = now(); /* the first trip waits for the echo's start */
        } else if (++timed % 256 == 0 && now() - start > BUDGET) {
            break;
        }
    }
    return (now() - start) * 1e9 / timed;
}

static double cache_line_sample(void) {
    atomic_store(&line, 0);
    atomic_store(&give_up, 0);
    pthread_t t;
    pthread_create(&t, NULL, line_echo, NULL);
    double ns = on_own_thread(cache_line_measure);
    atomic_store(&give_up, 1);
    pthread_join(t, NULL);
    return ns;
}

static struct est cache_line_ns(void) {
    double v[SAMPLES];
    trips = 6000;
    cache_line_sample(); /* not counted, as in xferbench */
    for (int s = 0; s < SAMPLES; s++) v[s] = cache_line_sample();
    return median(v, SAMPLES);
}

/* 0: the echo's turn is over; 1: its turn; 2: the measuring side left (as xferbench). */
static _Alignas(128) _Atomic uint32_t word;
static int echo_cpu;

/* The futex system call is made where it is used, with no call and return around it,
 * as rustix makes it for xferbench's probe and its transports. On a VM that stuffs the
 * return predictor when it switches threads, a function that returns right after a
 * futex call that slept (glibc's syscall(), or one of our own) made the round trip on
 * one CPU measurably longer (docs/limits.md). Built with -DFUTEX_CALL=1 the call goes
 * through glibc's syscall(), with -DFUTEX_CALL=2 through a function of this file that is
 * never inlined: scripts/limits-futex-call.sh compares the three. */
#ifndef FUTEX_CALL
#define FUTEX_CALL 0
#endif
#if FUTEX_CALL == 1 || !defined(__x86_64__)
static long futex_call(uint32_t op, uint32_t val) {
    return syscall(SYS_futex, &word, op, val, NULL, NULL, 0);
}
#else
#if FUTEX_CALL == 2
__attribute__((noinline))
#else
__attribute__((always_inline)) inline
#endif
static long futex_call(uint32_t op, uint32_t val) {
    long r;
    register long timeout __asm__("r10") = 0;
    __asm__ volatile("syscall"
                     : "=a"(r)
                     : "a"((long)SYS_futex), "D"(&word), "S"((long)op), "d"((long)val), "r"(timeout)
                     : "rcx", "r11", "memory");
    return r;
}
#endif
static void fwait(uint32_t val) { futex_call(FUTEX_WAIT_PRIVATE, val); }
static void fwake(void) { futex_call(FUTEX_WAKE_PRIVATE, 1); }

static void *futex_echo(void *arg) {
    (void)arg;
    pin(echo_cpu);
    for (long i = 0; i <= trips; i++) {
        for (uint32_t w; (w = atomic_load(&word)) != 1; fwait(0))
            if (w == 2) return NULL;
        atomic_store(&word, 0);
        fwake();
    }
    return NULL;
}

/* One sample, over `trips` round trips or as many as fit in BUDGET. */
static double futex_measure(void) {
    pin(cpu_a);
    double start = now();
    long timed = 0;
    for (long i = 0; i <= trips; i++) {
        atomic_store(&word, 1);
        fwake();
        while (atomic_load(&word) != 0) fwait(1);
        if (i == 0) {
            start = now(); /* the first trip waits for the echo's start */
        } else if (++timed, now() - start > BUDGET) {
            break;
        }
    }
    return (now() - start) * 1e9 / timed;
}

static double futex_sample(void) {
    atomic_store(&word, 0);
    pthread_t t;
    pthread_create(&t, NULL, futex_echo, NULL);
    double ns = on_own_thread(futex_measure);
    atomic_store(&word, 2); /* the echo leaves, woken in case it sleeps */
    fwake();
    pthread_join(t, NULL);
    return ns;
}

/* The measuring side on cpu_a, the echo on `echo`. */
static struct est futex_ns(int echo) {
    double v[SAMPLES];
    trips = 300;
    echo_cpu = echo;
    futex_sample(); /* not counted, as in xferbench */
    for (int s = 0; s < SAMPLES; s++) v[s] = futex_sample();
    return median(v, SAMPLES);
}

/* As xferbench: 6,000 calls per sample (20 x 300 trips), after one unrecorded sample. */
static struct est syscall_ns(void) {
    double v[SAMPLES];
    for (int s = -1; s < SAMPLES; s++) {
        double start = now();
        for (int i = 0; i < 6000; i++) syscall(SYS_getppid);
        if (s >= 0) v[s] = (now() - start) * 1e9 / 6000;
    }
    return median(v, SAMPLES);
}

static int up[2], down[2];

static void *pipe_echo(void *arg) {
    (void)arg;
    pin(cpu_b);
    char c;
    while (read(up[0], &c, 1) == 1)
        if (write(down[1], &c, 1) != 1) break;
    return NULL;
}

/* One sample, over 300 round trips or as many as fit in BUDGET. */
static double pipe_measure(void) {
    pin(cpu_a);
    char c = 7;
    double start = now();
    long timed = 0;
    for (int i = 0; i <= 300; i++) {
        if (write(up[1], &c, 1) != 1 || read(down[0], &c, 1) != 1) {
            close(up[1]);
            return -1;
        }
        if (i == 0) {
            start = now(); /* the first trip waits for the echo's start */
        } else if (++timed, now() - start > BUDGET) {
            break;
        }
    }
    double took = now() - start;
    close(up[1]); /* the echo reads the end and leaves */
    return took * 1e9 / timed;
}

static double pipe_sample(void) {
    if (pipe(up) || pipe(down)) return -1;
    pthread_t t;
    pthread_create(&t, NULL, pipe_echo, NULL);
    double ns = on_own_thread(pipe_measure);
    pthread_join(t, NULL);
    close(up[0]);
    close(down[0]);
    close(down[1]);
    return ns;
}

static struct est pipe_ns(void) {
    double v[SAMPLES];
    pipe_sample(); /* not counted, as in xferbench */
    for (int s = 0; s < SAMPLES; s++) v[s] = pipe_sample();
    return median(v, SAMPLES);
}

/* The hand-over: two pools of page-aligned slots, the flag's odd values the echo's. */
#define POOL (4 << 20)
static _Alignas(128) _Atomic uint64_t flag;
static char *request, *reply;
static size_t ho_size, ho_stride, ho_slots;

static size_t slot(uint64_t f) { return (size_t)(f / 2 % ho_slots) * ho_stride; }

static void *handover_echo(void *arg) {
    (void)arg;
    pin(cpu_b);
    for (uint64_t expect = 1; expect < 2 * (uint64_t)(trips + 1); expect += 2) {
        for (uint32_t spins = 0; atomic_load_explicit(&flag, memory_order_acquire) != expect;) {
            __builtin_ia32_pause();
            if (++spins % 4096 == 0 && atomic_load_explicit(&give_up, memory_order_relaxed))
                return NULL;
        }
        size_t at = slot(expect);
        memcpy(reply + at, request + at, ho_size);
        atomic_store_explicit(&flag, expect + 1, memory_order_release);
    }
    return NULL;
}

static volatile uint64_t ho_sink;

/* Mean ns per round trip over `trips`, or as many as fit in BUDGET. */
static double handover_measure(void);

static double handover_pool(size_t size, size_t pool) {
    ho_size = size;
    ho_stride = (size + 4095) / 4096 * 4096;
    ho_slots = pool / ho_stride < 2 ? 2 : pool / ho_stride;
    request = aligned_alloc(4096, ho_stride * ho_slots);
    reply = aligned_alloc(4096, ho_stride * ho_slots);
    memset(request, 0, ho_stride * ho_slots);
    memset(reply, 0, ho_stride * ho_slots);
    memset(request, 1, ho_stride * ho_slots);
    memset(reply, 2, ho_stride * ho_slots);
    atomic_store(&flag, 0);
    atomic_store(&give_up, 0);
    pthread_t t;
    pthread_create(&t, NULL, handover_echo, NULL);
    double ns = on_own_thread(handover_measure);
    atomic_store(&give_up, 1);
    pthread_join(t, NULL);
    free(request);
    free(reply);
    return ns;
}

/* The lower of two re-used slots and a pool of fresh ones, in that order. */
static double handover_sample(size_t size) {
    double reused = handover_pool(size, 0);
    double fresh = handover_pool(size, POOL);
    return reused < fresh ? reused : fresh;
}

static double handover_measure(void) {
    size_t size = ho_size;
    pin(cpu_a);
    uint64_t sink = 0;
    long timed = 0;
    double start = now();
    for (uint64_t next = 1; next < 2 * (uint64_t)(trips + 1); next += 2) {
        size_t at = slot(next);
        memset(request + at, (uint8_t)next, size);
        atomic_store_explicit(&flag, next, memory_order_release);
        while (atomic_load_explicit(&flag, memory_order_acquire) != next + 1) __builtin_ia32_pause();
        for (size_t i = 0; i < size; i += 64) sink ^= *(const uint64_t *)(reply + at + i);
        if (next == 1) {
            start = now(); /* the first trip waits for the echo's start */
        } else {
            timed++;
            if (now() - start > BUDGET) break;
        }
    }
    double took = now() - start;
    ho_sink = sink;
    return took * 1e9 / timed;
}

/* As xferbench: 300 round trips of 64 KiB per sample, proportionally more of smaller
 * buffers; one sample first, not counted (it warms the allocator and the CPUs). */
static struct est handover_ns(size_t size) {
    double v[SAMPLES];
    trips = 300 * (size < 65536 ? 65536 / size : 1);
    handover_sample(size);
    for (int s = 0; s < SAMPLES; s++) v[s] = handover_sample(size);
    return median(v, SAMPLES);
}

/* The stream floor: a ring of RING bytes (the shm transport's default for a stream,
 * DEFAULT_CAPACITY in crates/transports/src/shm/mod.rs) of page-aligned slots of one
 * message each. The writer (on cpu_a) puts message i in slot i % slots and publishes
 * head, the messages written (release), once per PUBLISH bytes of messages (at least
 * once a message) and before it waits; the reader (on cpu_b) waits for it (acquire),
 * takes the message and publishes tail alike. Each side re-reads the other's index
 * only when it must wait. Copied: the writer stamps its own buffer's first word and
 * memcpys it into the slot, the reader memcpys the slot into its own buffer and reads
 * its first word. In place: the writer memsets the slot and stamps its first word, the
 * reader reads one word of every cache line of the slot. The reader starts once the
 * writer has filled the ring, and timing after it has taken LEAD_LAPS laps. */
#define RING (4 << 20)
#define PUBLISH (16 << 10)
#define LEAD_LAPS 4
static _Alignas(128) _Atomic uint64_t st_head;
static _Alignas(128) _Atomic uint64_t st_tail;
static char *st_ring;
static size_t st_size, st_slots, st_every;
static uint64_t st_total;
static int st_in_place;
static int st_vectors;
static volatile uint64_t st_sink;

/* Copies n bytes, a multiple of 64, with two 32-byte loads and stores per cache line
 * (AVX2), or four 16-byte ones (SSE2): never rep movsb, as xferbench's
 * copy_by_vectors. Kept from being turned back into a memcpy call. */
__attribute__((target("avx2"), optimize("no-tree-loop-distribute-patterns")))
static void lines_avx2(char *dst, const char *src, size_t n) {
    for (size_t i = 0; i < n; i += 64) {
        __m256i a = _mm256_loadu_si256((const __m256i *)(src + i));
        __m256i b = _mm256_loadu_si256((const __m256i *)(src + i + 32));
        _mm256_storeu_si256((__m256i *)(dst + i), a);
        _mm256_storeu_si256((__m256i *)(dst + i + 32), b);
    }
}

__attribute__((optimize("no-tree-loop-distribute-patterns")))
static void lines_sse2(char *dst, const char *src, size_t n) {
    for (size_t i = 0; i < n; i += 64) {
        __m128i v[4];
        for (int k = 0; k < 4; k++) v[k] = _mm_loadu_si128((const __m128i *)(src + i + 16 * k));
        for (int k = 0; k < 4; k++) _mm_storeu_si128((__m128i *)(dst + i + 16 * k), v[k]);
    }
}

static void copy_by_vectors(char *dst, const char *src, size_t n) {
    size_t lines = n / 64 * 64;
    if (__builtin_cpu_supports("avx2"))
        lines_avx2(dst, src, lines);
    else
        lines_sse2(dst, src, lines);
    memcpy(dst + lines, src + lines, n - lines);
}

static void *stream_writer(void *arg) {
    (void)arg;
    pin(cpu_a);
    char *own = aligned_alloc(4096, st_size);
    for (size_t i = 0; i < st_size; i++) own[i] = (char)(i * 151 + 7);
    uint64_t tail = 0, published = 0;
    for (uint64_t i = 0; i < st_total; i++) {
        for (uint32_t spins = 0; i - tail >= st_slots;) {
            tail = atomic_load_explicit(&st_tail, memory_order_acquire);
            if (i - tail < st_slots) break;
            if (published < i) {
                atomic_store_explicit(&st_head, i, memory_order_release);
                published = i;
            }
            __builtin_ia32_pause();
            if (++spins % 4096 == 0 && atomic_load_explicit(&give_up, memory_order_relaxed)) {
                free(own);
                return NULL;
            }
        }
        char *m = st_ring + (i % st_slots) * st_size;
        if (st_in_place) {
            memset(m, (uint8_t)i, st_size);
            memcpy(m, &i, 8);
        } else {
            memcpy(own, &i, 8);
            memcpy(m, own, st_size);
        }
        if (i + 1 - published >= st_every || i + 1 == st_total) {
            atomic_store_explicit(&st_head, i + 1, memory_order_release);
            published = i + 1;
        }
    }
    free(own);
    return NULL;
}

/* Bytes per second over the messages after the lead, or as many as fit in BUDGET. */
static double stream_measure(void) {
    pin(cpu_b);
    char *own = aligned_alloc(4096, st_size);
    memset(own, 0, st_size);
    uint64_t sink = 0, head = 0, lap = st_slots, timed = 0, released = 0;
    uint64_t lead = LEAD_LAPS * lap;
    /* The writer fills the ring first, so that the reader starts a ring behind (as
     * xferbench's probe): started together, a copying reader can keep pace slot by
     * slot and stay in that slower regime. */
    uint64_t first = lap < st_total ? lap : st_total;
    while (atomic_load_explicit(&st_head, memory_order_acquire) < first) __builtin_ia32_pause();
    double start = now();
    for (uint64_t i = 0; i < st_total; i++) {
        while (head <= i) {
            head = atomic_load_explicit(&st_head, memory_order_acquire);
            if (head > i) break;
            if (released < i) {
                atomic_store_explicit(&st_tail, i, memory_order_release);
                released = i;
            }
            __builtin_ia32_pause();
        }
        const char *m = st_ring + (i % st_slots) * st_size;
        if (st_in_place) {
            for (size_t k = 0; k < st_size; k += 64) sink ^= *(const uint64_t *)(m + k);
        } else {
            if (st_vectors)
                copy_by_vectors(own, m, st_size);
            else
                memcpy(own, m, st_size);
            sink ^= *(const uint64_t *)own;
        }
        if (i + 1 - released >= st_every) {
            atomic_store_explicit(&st_tail, i + 1, memory_order_release);
            released = i + 1;
        }
        if (i + 1 == lead) {
            start = now();
        } else if (i + 1 > lead) {
            timed++;
            if (timed % 64 == 0 && now() - start > BUDGET) break;
        }
    }
    double took = now() - start;
    st_sink = sink;
    free(own);
    return (double)timed * st_size / took / 1e9;
}

static double stream_once(void) {
    st_ring = aligned_alloc(4096, st_size * st_slots);
    memset(st_ring, 0, st_size * st_slots);
    memset(st_ring, 1, st_size * st_slots);
    atomic_store(&st_head, 0);
    atomic_store(&st_tail, 0);
    atomic_store(&give_up, 0);
    pthread_t t;
    pthread_create(&t, NULL, stream_writer, NULL);
    double gbs = on_own_thread(stream_measure);
    atomic_store(&give_up, 1);
    pthread_join(t, NULL);
    free(st_ring);
    return gbs;
}

/* One sample: in place, one stream; copied, the faster of the two readers. */
static double stream_sample(void) {
    st_vectors = 0;
    double gbs = stream_once();
    if (st_in_place) return gbs;
    st_vectors = 1;
    double by_vectors = stream_once();
    return by_vectors > gbs ? by_vectors : gbs;
}

/* As xferbench's full set: 64 MiB per sample after the untimed lead; one sample
 * first, not counted. */
static struct est stream_gbs(size_t size, int in_place) {
    double v[SAMPLES];
    st_size = size;
    st_slots = RING / size < 2 ? 2 : RING / size;
    st_every = PUBLISH / size < 1 ? 1 : PUBLISH / size;
    st_total = LEAD_LAPS * st_slots + (64 << 20) / size;
    st_in_place = in_place;
    stream_sample();
    for (int s = 0; s < SAMPLES; s++) v[s] = stream_sample();
    return median(v, SAMPLES);
}

/* Entries into any idle state of CPUs 0 and 1 so far (0 without cpuidle). */
static long long idle_entries(void) {
    long long sum = 0, v;
    char path[96];
    for (int cpu = 0; cpu < 2; cpu++)
        for (int state = 0; state < 8; state++) {
            snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/cpuidle/state%d/usage", cpu, state);
            FILE *f = fopen(path, "r");
            if (!f) break;
            if (fscanf(f, "%lld", &v) == 1) sum += v;
            fclose(f);
        }
    return sum;
}

/* `trips` mode: every round trip of one probe timed on its own. */
static int trip_series(const char *kind, long n) {
    int is_pipe = !strcmp(kind, "pipe");
    if (!is_pipe && strcmp(kind, "futex-across") && strcmp(kind, "futex-one")) {
        fprintf(stderr, "unknown probe %s: futex-across, futex-one or pipe\n", kind);
        return 2;
    }
    if (n < 100) {
        fprintf(stderr, "at least 100 round trips\n");
        return 2;
    }
    double *t = malloc(sizeof *t * (n + 1));
    trips = n;
    echo_cpu = !strcmp(kind, "futex-one") ? cpu_a : cpu_b;
    atomic_store(&word, 0);
    if (is_pipe && (pipe(up) || pipe(down))) return 1;
    pthread_t e;
    pthread_create(&e, NULL, is_pipe ? pipe_echo : futex_echo, NULL);
    pin(cpu_a);
    long long idle0 = 0;
    double last = now();
    for (long i = 0; i <= n; i++) {
        if (is_pipe) {
            char c = 7;
            if (write(up[1], &c, 1) != 1 || read(down[0], &c, 1) != 1) return 1;
        } else {
            atomic_store(&word, 1);
            fwake();
            while (atomic_load(&word) != 0) fwait(1);
        }
        double at = now();
        t[i] = (at - last) * 1e9;
        last = at;
        if (i == 0) idle0 = idle_entries(); /* the first trip waits for the echo's start */
    }
    long long idle = idle_entries() - idle0;
    if (is_pipe) close(up[1]);
    pthread_join(e, NULL);
    printf("%s: %ld round trips, %.2f idle entries of CPUs 0-1 per round trip\n", kind, n, (double)idle / n);
    printf("blocks of 100 round trips in order, us: median [10th-90th percentile]\n");
    double b[100];
    for (long s = 1; s + 100 <= n + 1; s += 100) {
        memcpy(b, t + s, sizeof b);
        qsort(b, 100, sizeof *b, cmp);
        printf("%7.1f [%6.1f-%6.1f]%s", b[50] / 1e3, b[10] / 1e3, b[90] / 1e3, (s / 100) % 5 == 4 ? "\n" : "  ");
    }
    qsort(t + 1, n, sizeof *t, cmp);
    printf("\nall, us: 10th %.1f, 25th %.1f, median %.1f, 75th %.1f, 90th %.1f\n", t[1 + n / 10] / 1e3,
           t[1 + n / 4] / 1e3, t[1 + n / 2] / 1e3, t[1 + 3 * n / 4] / 1e3, t[1 + 9 * n / 10] / 1e3);
    long bins[21] = {0}; /* 10 us wide, the last from 200 us */
    for (long i = 1; i <= n; i++) bins[t[i] >= 200e3 ? 20 : (int)(t[i] / 10e3)]++;
    long fast = 0;
    for (long i = 1; i <= n; i++) fast += t[i] < 1e3;
    printf("under 1 us (no side slept): %ld; histogram, us:", fast);
    for (int k = 0; k < 21; k++)
        if (bins[k] && k < 20) printf(" %d-%d: %ld,", k * 10, k * 10 + 10, bins[k]);
        else if (bins[k]) printf(" %d+: %ld", k * 10, bins[k]);
    printf("\n");
    free(t);
    return 0;
}

static void put(const char *name, struct est e, const char *unit) {
    printf("%s\t%.3f\t%s\t%.3f\t%.3f\n", name, e.median, unit, e.min, e.max);
}

int main(int argc, char **argv) {
    if (argc > 1 && !strcmp(argv[1], "futex")) {
        /* the two futex probes alone, CPUs 0 and 1 (scripts/limits-futex-call.sh) */
        cpu_a = 0;
        cpu_b = 1;
        put("futex wake round trip, across", futex_ns(cpu_b), "ns");
        put("futex wake round trip, one CPU", futex_ns(cpu_a), "ns");
        return 0;
    }
    if (argc > 2 && !strcmp(argv[1], "trips")) {
        cpu_a = 0;
        cpu_b = 1;
        return trip_series(argv[2], argc > 3 ? atol(argv[3]) : 3000);
    }
    cpu_a = argc > 1 ? atoi(argv[1]) : 0;
    cpu_b = argc > 2 ? atoi(argv[2]) : 1;
    size_t sizes[] = {4 << 10, 64 << 10, 2 << 20, 64 << 20};
    const char *names[] = {"memcpy 4 KiB", "memcpy 64 KiB", "memcpy 2 MiB", "memcpy 64 MiB"};
    size_t offsets[] = {16, 64, 2048};
    char name[64];
    for (int i = 0; i < 4; i++) put(names[i], memcpy_gbs(sizes[i], 0), "GB/s");
    for (int i = 0; i < 3; i++)
        for (int o = 0; o < 3; o++) {
            snprintf(name, sizeof name, "%s at %zu", names[i], offsets[o]);
            put(name, memcpy_gbs(sizes[i], offsets[o]), "GB/s");
        }
    put("cache-line round trip", cache_line_ns(), "ns");
    put("futex wake round trip, across", futex_ns(cpu_b), "ns");
    put("futex wake round trip, one CPU", futex_ns(cpu_a), "ns");
    put("pipe round trip", pipe_ns(), "ns");
    put("hand-over round trip 4 KiB", handover_ns(4 << 10), "ns");
    put("hand-over round trip 64 KiB", handover_ns(64 << 10), "ns");
    put("stream floor 4 KiB", stream_gbs(4 << 10, 0), "GB/s");
    put("stream floor 4 KiB in place", stream_gbs(4 << 10, 1), "GB/s");
    put("stream floor 16 KiB", stream_gbs(16 << 10, 0), "GB/s");
    put("stream floor 16 KiB in place", stream_gbs(16 << 10, 1), "GB/s");
    put("stream floor 64 KiB", stream_gbs(64 << 10, 0), "GB/s");
    put("stream floor 64 KiB in place", stream_gbs(64 << 10, 1), "GB/s");
    /* last, as xferbench measures it */
    put("system call (getppid)", syscall_ns(), "ns");
    return 0;
}
