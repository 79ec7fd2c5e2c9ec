/* faults_run.c - run one command under a deadline and say exactly how it ended.
 *
 * Usage: faults_run SECONDS VERDICT_FILE CMD [ARGS...]
 * Contract: runs CMD in a process group of its own, with stdin, stdout and stderr
 * inherited.  Writes one line to VERDICT_FILE: "exit N" (CMD exited with status N),
 * "signal N NAME" (CMD was killed by signal N: a crash unless the test sent it), or
 * "timeout" (CMD was still running after SECONDS: its whole process group got SIGKILL).
 * Exits 0 when the verdict was written, 2 on a usage or system error.  Unlike
 * timeout(1) and the shell, it keeps "exited 139" and "killed by SIGSEGV" apart.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 4 || atoi(argv[1]) <= 0) {
        fprintf(stderr, "usage: faults_run SECONDS VERDICT_FILE CMD [ARGS...]\n");
        return 2;
    }
    int secs = atoi(argv[1]);
    FILE *vf = fopen(argv[2], "w");
    if (!vf) {
        fprintf(stderr, "faults_run: %s: %s\n", argv[2], strerror(errno));
        return 2;
    }
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "faults_run: fork: %s\n", strerror(errno));
        return 2;
    }
    if (pid == 0) {
        setpgid(0, 0);
        execvp(argv[3], argv + 3);
        fprintf(stderr, "faults_run: %s: %s\n", argv[3], strerror(errno));
        _exit(127);
    }
    setpgid(pid, pid);
    struct timespec t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int st;
    for (;;) {
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid)
            break;
        if (r < 0 && errno != EINTR) {
            fprintf(stderr, "faults_run: waitpid: %s\n", strerror(errno));
            return 2;
        }
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec - t0.tv_sec >= secs) {
            kill(-pid, SIGKILL);
            kill(pid, SIGKILL);
            waitpid(pid, &st, 0);
            fprintf(vf, "timeout\n");
            fclose(vf);
            return 0;
        }
        usleep(20000);
    }
    if (WIFEXITED(st))
        fprintf(vf, "exit %d\n", WEXITSTATUS(st));
    else if (WIFSIGNALED(st))
        fprintf(vf, "signal %d %s\n", WTERMSIG(st), strsignal(WTERMSIG(st)));
    else
        fprintf(vf, "status %d\n", st);
    fclose(vf);
    return 0;
}
