/*
 * Test plugins: the POSIX message queue example (compiled in) wrapped so that it
 * misbehaves on purpose, and a zero-copy variant that exercises loan/commit and
 * borrow/release through the ABI.
 *
 *     cc -shared -fPIC -O2 -I include -I examples/plugins/posix-mq \
 *        -o libxb_faulty.so crates/cli/tests/plugins/faulty.c -lrt
 *
 * Transports (each takes posix-mq's depth and max_message):
 *   drop   silently drops every `every`-th message it is asked to send
 *   flip   flips the last byte of every `every`-th message it sends
 *   crash  dereferences NULL (SIGSEGV) after `after` messages, on the `side` that
 *          sends ("send") or receives ("recv"), or in `connect` ("connect")
 *   hang   stops answering (sleeps, ignoring every timeout) after `after` messages
 *          on `side`, or in `connect`
 *   count  recv returns the bytes it read, as read() does, instead of XB_OK: 1 (which
 *          is XB_CLOSED) for a 1-byte message
 *   zc     no fault: declares XB_ZERO_COPY; loan hands out a buffer the commit
 *          sends, borrow receives into one it lends
 *   leak   with `leak` tmp (or shm), leaves a file /tmp/xb-faulty-leak-PID-N (or
 *          /dev/shm/xb-faulty-leak-PID-N; with sysv, a SysV shared-memory segment)
 *          per connection, which nothing removes;
 *          with `leak` none, leaves nothing
 */
#define xferbench_plugin_v1 posix_mq_plugin_v1
#include "posix_mq.c"
#undef xferbench_plugin_v1

#include <fcntl.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <unistd.h>

enum fault { DROP, FLIP, CRASH, HANG, COUNT, LEAK, NONE };
enum leak { LEAK_NONE, LEAK_TMP, LEAK_SHM, LEAK_SYSV };
enum side { SEND, RECV, CONNECT };

typedef struct {
    transport *inner;
    enum fault fault;
    long every, after;
    enum side side;
    enum leak leak;
} wtransport;

typedef struct {
    endpoint *inner;
    const wtransport *t;
    uint64_t sent, received;
    char *loan;     /* zc: the buffer lent for the next send */
    char *borrowed; /* zc: the buffer holding the message lent */
} wendpoint;

static int *volatile nowhere;

static void misbehave(const wtransport *t)
{
    if (t->fault == CRASH) {
        fprintf(stderr, "faulty plugin: crashing on purpose\n");
        *nowhere = 1;
    }
    if (t->fault == HANG) {
        fprintf(stderr, "faulty plugin: hanging on purpose\n");
        for (;;)
            pause();
    }
}

static int w_create(enum fault fault, const xb_value *values, size_t count, const xb_host *host,
                    void **out, uint64_t *max_message, xb_error *err)
{
    wtransport *w = calloc(1, sizeof *w);
    if (!w)
        return fail(err, XB_ERR_IO, "out of memory");
    w->fault = fault;
    w->every = 1000;
    w->after = 5000;
    for (size_t i = 0; i < count; i++) {
        if (strcmp(values[i].name, "every") == 0)
            w->every = (long)values[i].number;
        else if (strcmp(values[i].name, "after") == 0)
            w->after = (long)values[i].number;
        else if (strcmp(values[i].name, "leak") == 0)
            w->leak = (enum leak)values[i].number;
        else if (strcmp(values[i].name, "side") == 0)
            w->side = values[i].number == 0 ? SEND : values[i].number == 1 ? RECV : CONNECT;
    }
    int rc = mq_create(values, count, host, (void **)&w->inner, max_message, err);
    if (rc != XB_OK) {
        free(w);
        return rc;
    }
    *out = w;
    return XB_OK;
}

#define CREATE(name, fault)                                                                      \
    static int name(const xb_value *v, size_t n, const xb_host *h, void **o, uint64_t *m,       \
                    xb_error *e)                                                                 \
    {                                                                                            \
        return w_create(fault, v, n, h, o, m, e);                                                \
    }
CREATE(drop_create, DROP)
CREATE(flip_create, FLIP)
CREATE(crash_create, CRASH)
CREATE(hang_create, HANG)
CREATE(count_create, COUNT)
CREATE(leak_create, LEAK)
CREATE(zc_create, NONE)

static void w_destroy(void *tp)
{
    wtransport *w = tp;
    mq_destroy(w->inner);
    free(w);
}

typedef struct {
    void *inner;
    const wtransport *t;
} wlistener;

/* leak: one file per connection, left behind on purpose. */
static void leave_a_file(const wtransport *t)
{
    static int made;
    char name[96];
    if (t->leak == LEAK_TMP) {
        snprintf(name, sizeof name, "/tmp/xb-faulty-leak-%d-%d", (int)getpid(), ++made);
        int fd = open(name, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
        if (fd >= 0)
            close(fd);
    } else if (t->leak == LEAK_SHM) {
        snprintf(name, sizeof name, "/xb-faulty-leak-%d-%d", (int)getpid(), ++made);
        int fd = shm_open(name, O_CREAT | O_RDWR, 0600);
        if (fd >= 0)
            close(fd);
    } else if (t->leak == LEAK_SYSV) {
        shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600);
    }
}

static int wrap(const wtransport *t, endpoint *inner, void **out, xb_error *err)
{
    if (t->fault == LEAK)
        leave_a_file(t);
    wendpoint *w = calloc(1, sizeof *w);
    if (!w) {
        mq_close_endpoint(inner);
        return fail(err, XB_ERR_IO, "out of memory");
    }
    w->inner = inner;
    w->t = t;
    *out = w;
    return XB_OK;
}

static int w_listen(void *tp, void **out, char *address, size_t size, xb_error *err)
{
    wlistener *l = calloc(1, sizeof *l);
    if (!l)
        return fail(err, XB_ERR_IO, "out of memory");
    l->t = tp;
    int rc = mq_listen(l->t->inner, &l->inner, address, size, err);
    if (rc != XB_OK) {
        free(l);
        return rc;
    }
    *out = l;
    return XB_OK;
}

static int w_accept(void *lp, uint64_t timeout_ns, void **out, xb_error *err)
{
    wlistener *l = lp;
    void *inner;
    int rc = mq_accept(l->inner, timeout_ns, &inner, err);
    if (rc != XB_OK)
        return rc;
    return wrap(l->t, inner, out, err);
}

static void w_close_listener(void *lp)
{
    wlistener *l = lp;
    mq_close_listener(l->inner);
    free(l);
}

static int w_connect(void *tp, const char *address, uint64_t timeout_ns, void **out,
                     xb_error *err)
{
    wtransport *t = tp;
    void *inner;
    if (t->side == CONNECT)
        misbehave(t);
    int rc = mq_connect(t->inner, address, timeout_ns, &inner, err);
    if (rc != XB_OK)
        return rc;
    return wrap(t, inner, out, err);
}

static int w_send(void *ep, const void *msg, size_t len, uint64_t timeout_ns, xb_error *err)
{
    wendpoint *w = ep;
    const wtransport *t = w->t;
    uint64_t n = ++w->sent;
    if (t->side == SEND && (long)n > t->after)
        misbehave(t);
    if (t->fault == DROP && t->every > 0 && n % (uint64_t)t->every == 0)
        return XB_OK;
    if (t->fault == FLIP && t->every > 0 && n % (uint64_t)t->every == 0) {
        char copy[len];
        memcpy(copy, msg, len);
        copy[len - 1] ^= 0x40;
        return mq_send_msg(w->inner, copy, len, timeout_ns, err);
    }
    return mq_send_msg(w->inner, msg, len, timeout_ns, err);
}

static int w_recv(void *ep, void *buf, size_t len, uint64_t timeout_ns, xb_error *err)
{
    wendpoint *w = ep;
    int rc = mq_recv_msg(w->inner, buf, len, timeout_ns, err);
    if (rc == XB_OK && w->t->side == RECV && (long)++w->received > w->t->after)
        misbehave(w->t);
    if (rc == XB_OK && w->t->fault == COUNT)
        return (int)len;
    return rc;
}

static int w_close_send(void *ep, xb_error *err)
{
    return mq_close_send(((wendpoint *)ep)->inner, err);
}

static void w_close(void *ep)
{
    wendpoint *w = ep;
    mq_close_endpoint(w->inner);
    free(w->loan);
    free(w->borrowed);
    free(w);
}

/* ---- zero-copy over the queue's own buffers ---------------------------------------- */

static int zc_loan(void *ep, size_t len, void **buffer, uint64_t timeout_ns, xb_error *err)
{
    (void)timeout_ns;
    wendpoint *w = ep;
    if ((long)len > w->inner->msgsize)
        return fail(err, XB_ERR_TOO_LARGE, "a %zu-byte message; the largest is %ld", len,
                    w->inner->msgsize);
    if (!w->loan && !(w->loan = malloc((size_t)w->inner->msgsize)))
        return fail(err, XB_ERR_IO, "out of memory");
    *buffer = w->loan;
    return XB_OK;
}

static int zc_commit(void *ep, void *buffer, size_t len, xb_error *err)
{
    wendpoint *w = ep;
    if (buffer != w->loan)
        return fail(err, XB_ERR_IO, "commit of a buffer that was not lent");
    return mq_send_msg(w->inner, buffer, len, w->inner->timeout_ns, err);
}

static int zc_borrow(void *ep, size_t len, const void **buffer, uint64_t timeout_ns,
                     xb_error *err)
{
    wendpoint *w = ep;
    if (!w->borrowed && !(w->borrowed = malloc((size_t)w->inner->msgsize)))
        return fail(err, XB_ERR_IO, "out of memory");
    int rc = mq_recv_msg(w->inner, w->borrowed, len, timeout_ns, err);
    if (rc == XB_OK)
        *buffer = w->borrowed;
    return rc;
}

static int zc_release(void *ep, const void *buffer, xb_error *err)
{
    wendpoint *w = ep;
    if (buffer != w->borrowed)
        return fail(err, XB_ERR_IO, "release of a buffer that was not lent");
    return XB_OK;
}

/* ---- description --------------------------------------------------------------------- */

static const xb_choice sides[] = {
    {.name = "send", .help = "the sending side misbehaves"},
    {.name = "recv", .help = "the receiving side misbehaves"},
    {.name = "connect", .help = "connect misbehaves at once"},
};

#define MQ_PARAMS                                                                               \
    {.name = "depth", .kind = XB_PARAM_INTEGER, .default_value = "10", .help = "mq_maxmsg",    \
     .min = 1, .max = 65536},                                                                  \
    {.name = "max_message", .kind = XB_PARAM_BYTES, .default_value = "4KiB",                   \
     .help = "mq_msgsize", .min = 8, .max = 16 << 20}

static const xb_param every_params[] = {
    MQ_PARAMS,
    {.name = "every", .kind = XB_PARAM_INTEGER, .default_value = "1000",
     .help = "every how many messages the fault strikes", .min = 1, .max = 1000000000},
};

static const xb_param after_params[] = {
    MQ_PARAMS,
    {.name = "after", .kind = XB_PARAM_INTEGER, .default_value = "5000",
     .help = "messages before the fault strikes", .min = 0, .max = 1000000000},
    {.name = "side", .kind = XB_PARAM_ENUM, .default_value = "send",
     .help = "which side misbehaves", .choices = sides, .choice_count = 3},
};

static const xb_param zc_params[] = {MQ_PARAMS};

static const xb_choice leaks[] = {
    {.name = "none", .help = "leaves nothing"},
    {.name = "tmp", .help = "leaves a file in /tmp per connection"},
    {.name = "shm", .help = "leaves a shared-memory object in /dev/shm per connection"},
    {.name = "sysv", .help = "leaves a SysV shared-memory segment per connection"},
};

static const xb_param leak_params[] = {
    MQ_PARAMS,
    {.name = "leak", .kind = XB_PARAM_ENUM, .default_value = "tmp",
     .help = "what each connection leaves behind", .choices = leaks, .choice_count = 4},
};

#define WRAPPED(tname, tdesc, create_fn, param_array)                                            \
    {                                                                                            \
        .name = tname, .description = tdesc, .max_message = 16 << 20, .flags = 0,                \
        .params = param_array, .param_count = sizeof param_array / sizeof param_array[0],        \
        .create = create_fn, .destroy = w_destroy, .listen = w_listen,                  \
        .accept = w_accept, .close_listener = w_close_listener, .connect = w_connect,           \
        .send = w_send, .flush = NULL, .recv = w_recv, .close_send = w_close_send,               \
        .close = w_close,                                                                        \
    }

static const xb_transport faulty_transports[] = {
    WRAPPED("drop", "posix-mq that silently drops every `every`-th message", drop_create,
            every_params),
    WRAPPED("flip", "posix-mq that flips a byte of every `every`-th message", flip_create,
            every_params),
    WRAPPED("crash", "posix-mq that crashes (SIGSEGV) after `after` messages", crash_create,
            after_params),
    WRAPPED("hang", "posix-mq that hangs after `after` messages", hang_create, after_params),
    WRAPPED("count", "posix-mq whose recv returns the bytes it read", count_create, zc_params),
    WRAPPED("leak", "posix-mq that leaves a file behind per connection", leak_create,
            leak_params),
    {
        .name = "zc",
        .description = "posix-mq with a zero-copy interface (loaned and borrowed buffers)",
        .max_message = 16 << 20,
        .flags = XB_ZERO_COPY,
        .params = zc_params,
        .param_count = 2,
        .create = zc_create,
        .destroy = w_destroy,
        .listen = w_listen,
        .accept = w_accept,
        .close_listener = w_close_listener,
        .connect = w_connect,
        .send = w_send,
        .flush = NULL,
        .recv = w_recv,
        .close_send = w_close_send,
        .close = w_close,
        .loan = zc_loan,
        .commit = zc_commit,
        .borrow = zc_borrow,
        .release = zc_release,
    },
};

static const xb_plugin faulty_plugin = {
    .abi_version = XB_ABI_VERSION,
    .name = "xb-faulty",
    .version = "0.1.0",
    .transports = faulty_transports,
    .transport_count = sizeof faulty_transports / sizeof faulty_transports[0],
    .cleanup = mq_cleanup,
};

XB_EXPORT const xb_plugin *xferbench_plugin_v1(uint32_t host_abi_version)
{
    (void)host_abi_version;
    return &faulty_plugin;
}
