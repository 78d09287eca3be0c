/* Calls lazy_library through CLazyLink's trampolines (LazyLinkTests). Only the first call of a
 * process passes through the stub that loads the library (it fills every pointer), so the shape
 * to call first is an argument: `threads` (eight threads racing), `integers`, `doubles`, `mixed`,
 * `variadic`, `returned`, `passed`; then every shape is checked. Prints one line per check,
 * `ok NAME` or `wrong NAME: ...`, then `opened N` (how many times the library was opened), and
 * exits 0 when all were right. With `load` first, it loads ahead and prints what the loader said
 * when it cannot (exit 3). */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "lazy_library.h"

int snoozefuse_fixture_load(char *why, size_t size);

#define SNOOZEFUSE_LAZY_LIBRARY fixture
#define SNOOZEFUSE_LAZY_SONAME "liblazy_fixture.so"
#define SNOOZEFUSE_LAZY_PACKAGE "lazy-fixture"
#define SNOOZEFUSE_LAZY_FUNCTIONS(X) \
    X(lazy_ten_integers) \
    X(lazy_ten_doubles) \
    X(lazy_mixed) \
    X(lazy_sum_variadic) \
    X(lazy_make_large) \
    X(lazy_weigh)
#include "snoozefuse_lazy_link.h"

static int failures;

static void check(const char *name, int good, const char *detail) {
    if (good) {
        printf("ok %s\n", name);
    } else {
        printf("wrong %s: %s\n", name, detail);
        failures += 1;
    }
}

static pthread_barrier_t start_together;

static void *call_from_thread(void *argument) {
    (void)argument;
    /* Every thread's first call may be the one that loads: they start at once. */
    pthread_barrier_wait(&start_together);
    return (void *)(intptr_t)(lazy_ten_integers(1, 1, 1, 1, 1, 1, 1, 1, 1, 1) == 55);
}

static void check_integers(void) {
    char detail[64];
    /* A function that leaves errno alone: the first call's loading must too. */
    errno = 4321;
    int64_t integers = lazy_ten_integers(1, 2, 3, 4, 5, 6, 7, 8, 9, 10);
    int after = errno;
    snprintf(detail, sizeof detail, "%lld, errno %d", (long long)integers, after);
    check("integers", integers == 385 && after == 4321, detail);
}

static void check_doubles(void) {
    char detail[64];
    double doubles = lazy_ten_doubles(0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5, 8.5, 9.5);
    snprintf(detail, sizeof detail, "%f", doubles);
    check("doubles", doubles == 357.5, detail);
}

static void check_mixed(void) {
    char detail[64];
    double mixed = lazy_mixed(7, 3.0, 5, 0.25f, "four", 20.0);
    snprintf(detail, sizeof detail, "%f", mixed);
    check("mixed", mixed == 7000.0 + 300.0 + 50.0 + 0.25 + 4 + 2.0, detail);
}

static void check_variadic(void) {
    char detail[64];
    int64_t variadic = lazy_sum_variadic(4, (int64_t)40, 0.5, (int64_t)2, 0.25);
    snprintf(detail, sizeof detail, "%lld", (long long)variadic);
    check("variadic", variadic == 40 + 500 + 2 + 250, detail);
}

static void check_returned(void) {
    char detail[96];
    struct lazy_large large = lazy_make_large(3, 1.5);
    snprintf(detail, sizeof detail, "%lld %lld %f", (long long)large.values[0], (long long)large.values[7], large.scale);
    check("returned", large.values[0] == 3 && large.values[7] == 24 && large.scale == 1.5, detail);
}

static void check_passed(void) {
    char detail[64];
    struct lazy_pair pair = {4, 0.5};
    double weighed = lazy_weigh(pair, 2.0);
    snprintf(detail, sizeof detail, "%f", weighed);
    check("passed", weighed == 9.0, detail);
}

static void check_threads(void) {
    pthread_t threads[8];
    pthread_barrier_init(&start_together, NULL, 8);
    for (int index = 0; index < 8; index += 1) pthread_create(&threads[index], NULL, call_from_thread, NULL);
    int threaded = 1;
    for (int index = 0; index < 8; index += 1) {
        void *result = NULL;
        pthread_join(threads[index], &result);
        threaded = threaded && result != NULL;
    }
    check("threads", threaded, "a thread's first call returned the wrong sum");
}

static const struct {
    const char *name;
    void (*run)(void);
} shapes[] = {
    {"threads", check_threads}, {"integers", check_integers}, {"doubles", check_doubles}, {"mixed", check_mixed},
    {"variadic", check_variadic}, {"returned", check_returned}, {"passed", check_passed},
};
#define SHAPES (sizeof shapes / sizeof shapes[0])

int main(int argc, char **argv) {
    const char *first = argc > 1 ? argv[1] : "threads";
    if (strcmp(first, "load") == 0) {
        char why[256] = "";
        if (snoozefuse_fixture_load(why, sizeof why) != 0) {
            printf("not loaded: %s\n", why);
            return 3;
        }
        first = "threads";
    }
    int known = 0;
    for (size_t index = 0; index < SHAPES; index += 1) {
        if (strcmp(shapes[index].name, first) == 0) {
            shapes[index].run();
            known = 1;
        }
    }
    if (!known) {
        printf("no shape %s\n", first);
        return 2;
    }
    for (size_t index = 0; index < SHAPES; index += 1) shapes[index].run();
    printf("opened %d\n", snoozefuse_lazy_opens);
    return failures == 0 ? 0 : 1;
}
