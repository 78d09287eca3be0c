/* A virtual input device made through /dev/uinput, for testing the rumble plugin against the real
 * kernel force-feedback path (evdev -> ff-core -> uinput).
 *
 * usage: uinput_device rumble|keys LOG NODE_FOLDER
 *   rumble  a device with EV_FF / FF_RUMBLE (room for 4 effects) that accepts every upload/erase
 *   keys    a device with only EV_KEY / KEY_A (no force feedback); on standard input, `d` presses
 *           KEY_A and `u` lets it go (each followed by a SYN_REPORT), as a keyboard would
 *
 * Writes one line per thing seen to LOG (each written whole, at once):
 *   ready PATH                  the device's event node; PATH is /dev/input/eventN, or, when that
 *                               node does not appear within 3 s (no devtmpfs/udev), a node made
 *                               with mknod in NODE_FOLDER
 *   upload id=I type=T strong=S weak=W length=L delay=D old_type=O
 *                               a UI_FF_UPLOAD request (answered with retval 0)
 *   erase id=I                  a UI_FF_ERASE request (answered with retval 0)
 *   play id=I value=V           an EV_FF event for effect I (V 1 = play, 0 = stop)
 *   gain value=V                EV_FF / FF_GAIN
 *   event type=T code=C value=V anything else
 * Runs until its standard input reaches end of file, then destroys the device and exits 0.
 * Exits 2 with a message on standard error when a step fails. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/uinput.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

static int log_fd = -1;

static void log_line(const char *format, ...) {
    char line[256];
    va_list arguments;
    va_start(arguments, format);
    int length = vsnprintf(line, sizeof line - 1, format, arguments);
    va_end(arguments);
    if (length < 0) return;
    if (length > (int)sizeof line - 2) length = (int)sizeof line - 2;
    line[length++] = '\n';
    if (write(log_fd, line, (size_t)length) != length) {
        fprintf(stderr, "uinput_device: cannot write the log: %s\n", strerror(errno));
        exit(2);
    }
}

static void fail(const char *what) {
    fprintf(stderr, "uinput_device: %s: %s\n", what, strerror(errno));
    exit(2);
}

static void sleep_ms(long ms) {
    struct timespec wait = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&wait, &wait) != 0 && errno == EINTR) {}
}

/* Finds the eventN folder below /sys/devices/virtual/input/SYSNAME; copies its name into `event`. */
static int find_event(const char *sysname, char *event, size_t capacity) {
    char folder[256];
    snprintf(folder, sizeof folder, "/sys/devices/virtual/input/%s", sysname);
    DIR *directory = opendir(folder);
    if (!directory) return 0;
    int found = 0;
    struct dirent *entry;
    while (!found && (entry = readdir(directory)) != NULL) {
        if (strncmp(entry->d_name, "event", 5) == 0) {
            snprintf(event, capacity, "%s", entry->d_name);
            found = 1;
        }
    }
    closedir(directory);
    return found;
}

/* The event node: /dev/input/EVENT once it exists, else a node made in `folder` from the
 * major:minor in /sys/class/input/EVENT/dev. */
static void event_node(const char *event, const char *folder, char *path, size_t capacity) {
    snprintf(path, capacity, "/dev/input/%s", event);
    for (int tries = 0; tries < 60; tries++) {
        if (access(path, F_OK) == 0) return;
        sleep_ms(50);
    }
    char dev_file[320];
    snprintf(dev_file, sizeof dev_file, "/sys/class/input/%s/dev", event);
    FILE *file = fopen(dev_file, "r");
    if (!file) fail("no /dev/input node appeared and /sys/class/input/EVENT/dev cannot be read");
    unsigned major_number = 0, minor_number = 0;
    int parsed = fscanf(file, "%u:%u", &major_number, &minor_number);
    fclose(file);
    if (parsed != 2) {
        errno = EINVAL;
        fail("cannot parse /sys/class/input/EVENT/dev");
    }
    if ((size_t)snprintf(path, capacity, "%s/%s", folder, event) >= capacity) {
        errno = ENAMETOOLONG;
        fail("NODE_FOLDER");
    }
    if (mknod(path, S_IFCHR | 0600, makedev(major_number, minor_number)) != 0) {
        fail("no /dev/input node appeared and mknod of one failed");
    }
}

static void answer_upload(int fd, int request) {
    struct uinput_ff_upload upload;
    memset(&upload, 0, sizeof upload);
    upload.request_id = (__u32)request;
    if (ioctl(fd, UI_BEGIN_FF_UPLOAD, &upload) < 0) fail("UI_BEGIN_FF_UPLOAD");
    log_line("upload id=%d type=%u strong=%u weak=%u length=%u delay=%u old_type=%u", upload.effect.id,
             upload.effect.type, upload.effect.u.rumble.strong_magnitude, upload.effect.u.rumble.weak_magnitude,
             upload.effect.replay.length, upload.effect.replay.delay, upload.old.type);
    upload.retval = 0;
    if (ioctl(fd, UI_END_FF_UPLOAD, &upload) < 0) fail("UI_END_FF_UPLOAD");
}

static void answer_erase(int fd, int request) {
    struct uinput_ff_erase erase;
    memset(&erase, 0, sizeof erase);
    erase.request_id = (__u32)request;
    if (ioctl(fd, UI_BEGIN_FF_ERASE, &erase) < 0) fail("UI_BEGIN_FF_ERASE");
    log_line("erase id=%u", erase.effect_id);
    erase.retval = 0;
    if (ioctl(fd, UI_END_FF_ERASE, &erase) < 0) fail("UI_END_FF_ERASE");
}

int main(int argc, char **argv) {
    if (argc != 4 || (strcmp(argv[1], "rumble") != 0 && strcmp(argv[1], "keys") != 0)) {
        fprintf(stderr, "usage: uinput_device rumble|keys LOG NODE_FOLDER\n");
        return 64;
    }
    int rumble = strcmp(argv[1], "rumble") == 0;
    log_fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0600);
    if (log_fd < 0) fail("cannot open the log");

    int fd = open("/dev/uinput", O_RDWR | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) fail("cannot open /dev/uinput");
    if (rumble) {
        if (ioctl(fd, UI_SET_EVBIT, EV_FF) < 0) fail("UI_SET_EVBIT EV_FF");
        if (ioctl(fd, UI_SET_FFBIT, FF_RUMBLE) < 0) fail("UI_SET_FFBIT FF_RUMBLE");
    } else {
        if (ioctl(fd, UI_SET_EVBIT, EV_KEY) < 0) fail("UI_SET_EVBIT EV_KEY");
        if (ioctl(fd, UI_SET_KEYBIT, KEY_A) < 0) fail("UI_SET_KEYBIT KEY_A");
    }
    struct uinput_setup setup;
    memset(&setup, 0, sizeof setup);
    setup.id.bustype = BUS_VIRTUAL;
    setup.id.vendor = 0x5eef;
    setup.id.product = rumble ? 0x0001 : 0x0002;
    setup.id.version = 1;
    snprintf(setup.name, sizeof setup.name, "snoozefuse test %s", argv[1]);
    setup.ff_effects_max = rumble ? 4 : 0; /* must be > 0 when EV_FF is set */
    if (ioctl(fd, UI_DEV_SETUP, &setup) < 0) fail("UI_DEV_SETUP");
    if (ioctl(fd, UI_DEV_CREATE) < 0) fail("UI_DEV_CREATE");

    char sysname[64] = "", event[256] = "", path[4096];
    if (ioctl(fd, UI_GET_SYSNAME(sizeof sysname), sysname) < 0) fail("UI_GET_SYSNAME");
    int found = 0;
    for (int tries = 0; tries < 60 && !(found = find_event(sysname, event, sizeof event)); tries++) sleep_ms(50);
    if (!found) {
        errno = ENOENT;
        fail("no event* folder below /sys/devices/virtual/input/SYSNAME");
    }
    event_node(event, argv[3], path, sizeof path);
    log_line("ready %s", path);

    struct pollfd watched[2] = {{.fd = fd, .events = POLLIN}, {.fd = 0, .events = POLLIN}};
    for (;;) {
        if (poll(watched, 2, -1) < 0) {
            if (errno == EINTR) continue;
            fail("poll");
        }
        if (watched[0].revents & POLLIN) {
            struct input_event events[16];
            ssize_t count = read(fd, events, sizeof events);
            if (count < 0 && errno != EAGAIN && errno != EINTR) fail("reading /dev/uinput");
            for (ssize_t index = 0; count > 0 && index < count / (ssize_t)sizeof events[0]; index++) {
                struct input_event *e = &events[index];
                if (e->type == EV_UINPUT && e->code == UI_FF_UPLOAD) answer_upload(fd, e->value);
                else if (e->type == EV_UINPUT && e->code == UI_FF_ERASE) answer_erase(fd, e->value);
                else if (e->type == EV_FF && e->code == FF_GAIN) log_line("gain value=%d", e->value);
                else if (e->type == EV_FF) log_line("play id=%u value=%d", e->code, e->value);
                else log_line("event type=%u code=%u value=%d", e->type, e->code, e->value);
            }
        }
        if (watched[1].revents & (POLLIN | POLLHUP)) {
            char buffer[64];
            ssize_t count = read(0, buffer, sizeof buffer);
            if (count == 0 || (count < 0 && errno != EINTR && errno != EAGAIN)) break;
            for (ssize_t index = 0; !rumble && index < count; index++) {
                if (buffer[index] != 'd' && buffer[index] != 'u') continue;
                struct input_event key[2];
                memset(key, 0, sizeof key);
                key[0].type = EV_KEY;
                key[0].code = KEY_A;
                key[0].value = buffer[index] == 'd';
                key[1].type = EV_SYN;
                key[1].code = SYN_REPORT;
                if (write(fd, key, sizeof key) != (ssize_t)sizeof key) fail("writing a key to /dev/uinput");
                log_line("key %s", buffer[index] == 'd' ? "down" : "up");
            }
        }
    }
    ioctl(fd, UI_DEV_DESTROY);
    close(fd);
    return 0;
}
