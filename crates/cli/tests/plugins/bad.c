/*
 * Test plugins that are wrong on purpose, one per -D case: each must be refused with
 * a usage error (exit 2) naming the file and the problem, before anything runs.
 *
 *     cc -shared -fPIC -I include -DCASE_NO_ENTRY -o libbad.so crates/cli/tests/plugins/bad.c
 *
 * A valid transport over nothing (its functions are never called) is the base; each
 * case breaks one rule of include/xferbench/plugin.h.
 */
#include <stddef.h>
#include <stdint.h>

#include <xferbench/plugin.h>

static int create(const xb_value *v, size_t n, const xb_host *h, void **t, uint64_t *m,
                  xb_error *e)
{
    (void)v, (void)n, (void)h, (void)m, (void)e;
    *t = (void *)1;
    return XB_OK;
}
static void destroy(void *t) { (void)t; }
static int listen_(void *t, void **l, char *a, size_t s, xb_error *e)
{
    (void)t, (void)l, (void)a, (void)s, (void)e;
    return XB_ERR_IO;
}
static int accept_(void *l, uint64_t to, void **ep, xb_error *e)
{
    (void)l, (void)to, (void)ep, (void)e;
    return XB_ERR_IO;
}
static void close_listener(void *l) { (void)l; }
static int connect_(void *t, const char *a, uint64_t to, void **ep, xb_error *e)
{
    (void)t, (void)a, (void)to, (void)ep, (void)e;
    return XB_ERR_ADDRESS;
}
static int send_(void *ep, const void *m, size_t n, uint64_t to, xb_error *e)
{
    (void)ep, (void)m, (void)n, (void)to, (void)e;
    return XB_ERR_IO;
}
static int recv_(void *ep, void *b, size_t n, uint64_t to, xb_error *e)
{
    (void)ep, (void)b, (void)n, (void)to, (void)e;
    return XB_ERR_IO;
}
static int close_send(void *ep, xb_error *e)
{
    (void)ep, (void)e;
    return XB_OK;
}
static void close_(void *ep) { (void)ep; }

static const xb_choice choices[] = {{.name = "spin"}, {.name = "block"}};

#if defined(CASE_DEFAULT_NOT_ACCEPTED)
#define PARAMS {.name = "depth", .kind = XB_PARAM_INTEGER, .default_value = "ten", .help = "h"}
#elif defined(CASE_DEFAULT_OUT_OF_RANGE)
#define PARAMS                                                                                   \
    {.name = "depth", .kind = XB_PARAM_INTEGER, .default_value = "100", .help = "h", .min = 1,  \
     .max = 10}
#elif defined(CASE_MIN_ABOVE_MAX)
#define PARAMS                                                                                   \
    {.name = "depth", .kind = XB_PARAM_INTEGER, .default_value = "5", .help = "h", .min = 10,   \
     .max = 1}
#elif defined(CASE_DUPLICATE_PARAM)
#define PARAMS                                                                                   \
    {.name = "depth", .kind = XB_PARAM_INTEGER, .default_value = "1", .help = "h"},             \
        {.name = "depth", .kind = XB_PARAM_BOOL, .default_value = "true", .help = "h"}
#elif defined(CASE_ENUM_DEFAULT_NOT_A_CHOICE)
#define PARAMS                                                                                   \
    {.name = "wait", .kind = XB_PARAM_ENUM, .default_value = "nap", .help = "h",                \
     .choices = choices, .choice_count = 2}
#elif defined(CASE_UNKNOWN_KIND)
#define PARAMS {.name = "depth", .kind = 42, .default_value = "1", .help = "h"}
#elif defined(CASE_RESERVED_PARAM)
#define PARAMS {.name = "size", .kind = XB_PARAM_BYTES, .default_value = "64", .help = "h"}
#else
#define PARAMS                                                                                   \
    {.name = "wait", .kind = XB_PARAM_ENUM, .default_value = "spin", .help = "h",               \
     .choices = choices, .choice_count = 2}
#endif

static const xb_param params[] = {PARAMS};

#if defined(CASE_BUILTIN_NAME)
#define NAME "pipe"
#elif defined(CASE_BAD_NAME)
#define NAME "My Transport"
#else
#define NAME "bad"
#endif

#if defined(CASE_NULL_SEND)
#define SEND NULL
#else
#define SEND send_
#endif

#if defined(CASE_ZERO_COPY_WITHOUT_LOAN)
#define FLAGS XB_ZERO_COPY
#else
#define FLAGS 0
#endif

#define TRANSPORT(n)                                                                             \
    {                                                                                            \
        .name = n, .description = "a test transport", .flags = FLAGS, .params = params,         \
        .param_count = sizeof params / sizeof params[0], .create = create, .destroy = destroy,  \
        .listen = listen_, .accept = accept_, .close_listener = close_listener,                 \
        .connect = connect_, .send = SEND, .recv = recv_, .close_send = close_send,             \
        .close = close_,                                                                         \
    }

static const xb_transport transports[] = {
    TRANSPORT(NAME),
#if defined(CASE_DUPLICATE_TRANSPORT)
    TRANSPORT(NAME),
#endif
};

static const xb_plugin plugin = {
#if defined(CASE_FUTURE_ABI)
    .abi_version = 99,
#else
    .abi_version = XB_ABI_VERSION,
#endif
    .name = "xb-bad",
    .version = "0.0.1",
    .transports = transports,
#if defined(CASE_NO_TRANSPORTS)
    .transport_count = 0,
#else
    .transport_count = sizeof transports / sizeof transports[0],
#endif
};

#if defined(CASE_CRASHING_CONSTRUCTOR)
static int *volatile nowhere;

__attribute__((constructor)) static void crash_on_load(void)
{
    *nowhere = 1;
}
#endif

#if !defined(CASE_NO_ENTRY)
XB_EXPORT const xb_plugin *xferbench_plugin_v1(uint32_t host_abi_version)
{
    (void)host_abi_version;
#if defined(CASE_NULL_DESCRIPTION)
    return NULL;
#else
    return &plugin;
#endif
}
#else
XB_EXPORT int not_the_entry_symbol;
int not_the_entry_symbol = 1;
#endif
