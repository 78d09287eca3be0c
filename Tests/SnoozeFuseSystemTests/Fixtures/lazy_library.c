/* A library with the shapes of call a lazily linked library's trampolines must pass through
 * untouched (LazyLinkTests): more integer arguments than registers, more floating-point
 * arguments than registers, a mix, a variadic call, a structure returned through memory, a
 * structure passed by value, and calls from several threads at once. */
#include <stdarg.h>
#include <stdint.h>

#include "lazy_library.h"

int64_t lazy_ten_integers(int64_t a, int64_t b, int64_t c, int64_t d, int64_t e, int64_t f, int64_t g, int64_t h,
                          int64_t i, int64_t j) {
    return a + 2 * b + 3 * c + 4 * d + 5 * e + 6 * f + 7 * g + 8 * h + 9 * i + 10 * j;
}

double lazy_ten_doubles(double a, double b, double c, double d, double e, double f, double g, double h, double i,
                        double j) {
    return a + 2 * b + 3 * c + 4 * d + 5 * e + 6 * f + 7 * g + 8 * h + 9 * i + 10 * j;
}

double lazy_mixed(int32_t a, double b, int64_t c, float d, const char *text, double e) {
    int32_t length = 0;
    while (text[length] != 0) length += 1;
    return a * 1000.0 + b * 100.0 + (double)c * 10.0 + d + length + e / 10.0;
}

int64_t lazy_sum_variadic(int count, ...) {
    va_list arguments;
    va_start(arguments, count);
    int64_t sum = 0;
    for (int index = 0; index < count; index += 1) {
        if (index % 2 == 0) {
            sum += va_arg(arguments, int64_t);
        } else {
            sum += (int64_t)(va_arg(arguments, double) * 1000.0);
        }
    }
    va_end(arguments);
    return sum;
}

struct lazy_large lazy_make_large(int64_t seed, double scale) {
    struct lazy_large large;
    for (int index = 0; index < 8; index += 1) large.values[index] = seed * (index + 1);
    large.scale = scale;
    return large;
}

double lazy_weigh(struct lazy_pair pair, double factor) {
    return ((double)pair.first + pair.second) * factor;
}
