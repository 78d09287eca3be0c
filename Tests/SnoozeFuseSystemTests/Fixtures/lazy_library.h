#include <stdint.h>

struct lazy_large {
    int64_t values[8];
    double scale;
};

struct lazy_pair {
    int32_t first;
    double second;
};

int64_t lazy_ten_integers(int64_t a, int64_t b, int64_t c, int64_t d, int64_t e, int64_t f, int64_t g, int64_t h,
                          int64_t i, int64_t j);
double lazy_ten_doubles(double a, double b, double c, double d, double e, double f, double g, double h, double i,
                        double j);
double lazy_mixed(int32_t a, double b, int64_t c, float d, const char *text, double e);
int64_t lazy_sum_variadic(int count, ...);
struct lazy_large lazy_make_large(int64_t seed, double scale);
double lazy_weigh(struct lazy_pair pair, double factor);
