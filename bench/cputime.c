/*
 * cputime.c - run a command and report the CPU time it used, for the benches' lower
 *             bounds: what the tasks themselves cost, whatever serves them.
 *
 * Usage: cputime CMD [ARG...]
 *   Runs CMD (execvp) as a child, waits for it and prints one line on stderr:
 *       cputime: user_us=<U> sys_us=<S> cpu_us=<U+S>
 *   from the child's rusage (wait4): its own CPU time and that of the descendants it
 *   waited for, in microseconds (the kernel's precise runtime, split by its sampled
 *   user/system ratio). Exits with the child's exit code (128 + signal if it was
 *   killed); 127 if CMD cannot be run.
 * Under `srun ... cputime PROG`, the task is cputime and PROG its child: PROG inherits
 * the environment and the open descriptors (PMI_FD and the like), so its PMI client
 * works as without the wrapper. cputime's own fork and wait are not in the numbers.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

static long long us(struct timeval tv)
{
    return (long long)tv.tv_sec * 1000000 + tv.tv_usec;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: cputime CMD [ARG...]\n");
        return 2;
    }
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "cputime: fork: %s\n", strerror(errno));
        return 127;
    }
    if (pid == 0) {
        execvp(argv[1], argv + 1);
        fprintf(stderr, "cputime: cannot run %s: %s\n", argv[1], strerror(errno));
        _exit(127);
    }
    int status;
    struct rusage ru;
    pid_t w;
    while ((w = wait4(pid, &status, 0, &ru)) < 0 && errno == EINTR)
        ;
    if (w < 0) {
        fprintf(stderr, "cputime: wait4: %s\n", strerror(errno));
        return 127;
    }
    long long u = us(ru.ru_utime), s = us(ru.ru_stime);
    fprintf(stderr, "cputime: user_us=%lld sys_us=%lld cpu_us=%lld\n", u, s, u + s);
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 1;
}
